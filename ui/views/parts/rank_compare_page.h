#pragma once

#include <QList>
#include <QStringList>
#include <QWidget>

class QStandardItemModel;
class QTableView;

namespace stepscope::ui {

struct RunDocument;

// Compare's page for distributed runs: strategies side by side, a row per
// run and rank with its step, compute, communication, exposed communication,
// overlap, wait and peak memory, per measured step (perMeasuredStep, as the
// Ranks view's table); a run on one process is one row, rank 0. A profiler
// trace's ranks come from its recording (each recording once, whichever of
// its ranks is ticked), so two trace folders compare rank by rank.
class RankComparePage final : public QWidget {
    Q_OBJECT

public:
    enum Column {
        RunColumn,
        RankColumn,
        StepColumn,
        CommunicationColumn,
        ExposedColumn,
        OverlapColumn,
        WaitColumn,
        PeakColumn,
        ColumnCount
    };

    explicit RankComparePage(QWidget* parent = nullptr);
    // True when one of the runs is distributed (the page has something to say).
    bool showRuns(const QList<const RunDocument*>& runs, const QStringList& names);
    QStandardItemModel* model() const { return model_; }

private:
    QStandardItemModel* model_;
    QTableView* view_;
};

}  // namespace stepscope::ui
