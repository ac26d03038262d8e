#pragma once

#include <vector>

#include "results/breakdown.h"
#include "run_view.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTableView;

namespace stepscope::ui {

// Where the time went in a traced run: a sortable table grouped by kernel,
// operator or category for a phase, the top rows as bars, each phase's
// category shares stacked, forward against the whole train step, and the
// forward FLOP groups with their achieved FLOP/s.
class BreakdownView final : public RunView {
    Q_OBJECT

public:
    static constexpr int kTopBars = 15;

    explicit BreakdownView(QWidget* parent = nullptr);
    QString title() const override { return tr("Breakdown"); }
    void showRun(const RunDocument* document) override;
    QList<ExportTarget> exportTargets() override;

    // "kernel", "op" or "category"; "all", "forward", "backward", "optimizer".
    void setGrouping(const QString& by, const QString& phase);
    const std::vector<BreakdownRow>& rows() const { return rows_; }
    QAbstractItemModel* tableModel() const;  // sorted as the view shows it
    QStandardItemModel* flopModel() const { return flops_; }
    QCustomPlot* sharesPlot() const { return shares_; }

private:
    void refresh();
    void plotTopRows();
    void plotShares();

    const RunDocument* document_ = nullptr;
    QComboBox* by_;
    QComboBox* phase_;
    QLabel* empty_;
    QStandardItemModel* model_;
    QSortFilterProxyModel* sorted_;
    QTableView* table_;
    QCustomPlot* top_;
    QCustomPlot* shares_;
    QStandardItemModel* flops_;
    std::vector<BreakdownRow> rows_;
};

}  // namespace stepscope::ui
