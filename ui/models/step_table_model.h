#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "results/run_result.h"

namespace stepscope::ui {

// Every step of a run as a table (index, kind, total and phase times, loss).
// A model, not items, so that a run of 100,000 steps costs nothing to show.
class StepTableModel final : public QAbstractTableModel {
    Q_OBJECT

public:
    using QAbstractTableModel::QAbstractTableModel;
    // The steps of run `documentId`. Only the same run, grown by a live run's
    // new steps, appends rows; any other run replaces them all.
    void setSteps(int documentId, const std::vector<StepRecord>& steps);
    int documentId() const { return documentId_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    int documentId_ = -1;
    std::vector<StepRecord> steps_;
    bool waits_ = false;  // a distributed run: the comm wait column
};

}  // namespace stepscope::ui
