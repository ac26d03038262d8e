#pragma once

#include <vector>

#include "results/breakdown.h"
#include "widgets/run_view.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTabWidget;
class QTableView;

namespace stepscope::ui {
class ColumnFit;
class TraceRanksPanel;
}  // namespace stepscope::ui

namespace stepscope::ui {

// Where the time went in a traced run: a sortable table grouped by kernel,
// operator or category for a phase, with the figures `stepscope-cli
// breakdown` prints (ms per measured step, mean per call, share of phase);
// the top rows as bars, each phase's category shares stacked, forward against
// the whole train step, and the forward FLOP groups with their achieved
// FLOP/s. Full names show on hover over table cells, bars and their labels.
class BreakdownView final : public RunView {
    Q_OBJECT

public:
    static constexpr int kTopBars = 15;
    static constexpr int kMinNameWidth = 120;  // px; past it the figures scroll
    // Columns of tableModel(); the category column is hidden (and left out of
    // the export) when the rows are categories, so no name shows twice.
    enum Column {
        NameColumn,
        CategoryColumn,
        PhaseColumn,
        CallsColumn,
        TotalColumn,
        PerStepColumn,
        PerCallColumn,
        ShareColumn,
        ColumnCount
    };

    explicit BreakdownView(QWidget* parent = nullptr);
    void showRun(const RunDocument* document) override;
    QList<ExportTarget> exportTargets() override;

    // "kernel", "op" or "category" ("stream" for a profiler trace: its kernels
    // per stream, the stream in the phase column); "all", "forward", "backward", "optimizer".
    void setGrouping(const QString& by, const QString& phase);
    const std::vector<BreakdownRow>& rows() const { return rows_; }
    QAbstractItemModel* tableModel() const;   // sorted as the view shows it
    QAbstractItemModel* exportModel() const;  // the shown columns only
    QTableView* tableView() const { return table_; }
    QStandardItemModel* flopModel() const { return flops_; }
    QCustomPlot* topPlot() const { return top_; }
    QCustomPlot* sharesPlot() const { return shares_; }
    TraceRanksPanel* tracePanel() const { return tracePanel_; }  // a profiler trace's ranks

    // Hover texts of the charts: the bar (or its label) at a pixel of the top
    // rows' chart, -1 for none; a top bar's full name and figures; the
    // category segment under a pixel of the shares chart.
    int topBarAt(const QPointF& pixel) const;
    QString topBarToolTip(int bar) const;
    QString sharesToolTipAt(const QPointF& pixel) const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void createTables();
    void createCharts();
    void refresh();
    void plotTopRows();
    void plotShares();

    struct StackedColumn {
        QString label;
        std::vector<std::pair<std::string, double>> shares;  // category, fraction
    };

    const RunDocument* document_ = nullptr;
    QComboBox* by_;
    QComboBox* phase_;
    QLabel* empty_;
    QStandardItemModel* model_;
    QSortFilterProxyModel* sorted_;
    QSortFilterProxyModel* exported_;
    QTableView* table_;
    ColumnFit* columns_;
    QCustomPlot* top_;
    QCustomPlot* shares_;
    QStandardItemModel* flops_;
    TraceRanksPanel* tracePanel_;
    QTableView* flopTable_;
    QTabWidget* tables_;  // the rows, and the FLOP groups
    std::vector<BreakdownRow> rows_;
    std::vector<StackedColumn> shareColumns_;  // as stacked in the shares chart
};

}  // namespace stepscope::ui
