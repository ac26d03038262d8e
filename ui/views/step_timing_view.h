#pragma once

// ui/views: one view per tab of a run. Step timing (here), breakdown,
// timeline, memory, compare; what they are built from (bands, bars, panels,
// the saved-for-backward and memory-compare pages) is in ui/views/parts.
// Includes ui/views/parts, ui/widgets, ui/models and core/.

#include "widgets/run_view.h"

class QCPBars;
class QCPGraph;
class QCustomPlot;
class QLabel;
class QTableView;
class QTableWidget;

namespace stepscope {
struct RunResult;
}

namespace stepscope::ui {

class StepTableModel;

// Time per step, live: stacked bars by phase, warm-up steps lighter, a
// mean ± std band over the measured steps; the per-phase summary; every step.
class StepTimingView final : public RunView {
    Q_OBJECT

public:
    // Above this many steps the chart draws totals as a line (decimated by
    // QCustomPlot) instead of stacked bars; the tables keep every step.
    static constexpr int kMaxBars = 2000;

    explicit StepTimingView(QWidget* parent = nullptr);
    void showRun(const RunDocument* document) override;
    QList<ExportTarget> exportTargets() override;

    int plottedSteps() const;  // points or bars on the chart, one per step
    QTableWidget* summaryTable() const { return summary_; }
    QCustomPlot* plot() const { return plot_; }
    // Below the summary: torch.compile's time, and what ran the run where.
    QString compileNote() const;
    QString environmentNote() const;

private:
    void clearPlot();
    void drawStepBars(const RunResult& run);
    void drawStepLines(const RunResult& run);
    void drawMeanBand(const RunResult& run);
    void showSummary(const RunResult& run);
    void fitSummaryHeight();

    QCustomPlot* plot_;
    QTableWidget* summary_;
    QLabel* throughput_;
    QLabel* compile_;
    QLabel* environment_;
    QTableView* stepsView_;
    StepTableModel* steps_;
    int plotted_ = 0;
};

}  // namespace stepscope::ui
