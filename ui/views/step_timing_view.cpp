#include "views/step_timing_view.h"

#include <qcustomplot.h>

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include "models/format.h"
#include "models/missing_records.h"
#include "models/run_document.h"
#include "models/step_table_model.h"
#include "widgets/column_fit.h"
#include "widgets/plot_style.h"

namespace stepscope::ui {

namespace {

// In the order a step runs them; a distributed step waits for its
// communication between backward and the optimizer.
const char* kPhases[] = {"forward", "backward", "comm wait", "optimizer"};
constexpr int kPhaseCount = 4;

std::optional<double> phaseOf(const StepRecord& step, int phase) {
    switch (phase) {
        case 0:
            return step.forwardMs;
        case 1:
            return step.backwardMs;
        case 2:
            return step.communicationWaitMs;
        default:
            return step.optimizerMs;
    }
}

}  // namespace

StepTimingView::StepTimingView(QWidget* parent) : RunView(parent) {
    plot_ = new QCustomPlot;
    useIntegerTicks(plot_->xAxis);
    stylePlot(plot_, tr("step"), tr("time per step (ms)"));
    keepSaneSize(plot_);
    plot_->setMinimumHeight(260);
    setNoData(plot_, tr("No run selected"));

    summary_ = new QTableWidget(5, 6);
    summary_->setHorizontalHeaderLabels(
        {tr("mean ms"), tr("std ms"), tr("median ms"), tr("min ms"), tr("max ms"), tr("CV")});
    summary_->setVerticalHeaderLabels(
        {tr("total"), tr("forward"), tr("backward"), tr("comm wait"), tr("optimizer")});
    summary_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    new ColumnFit(summary_);
    // Rows as tall as their text: the phases whole, never a scroll bar.
    summary_->verticalHeader()->setDefaultSectionSize(summary_->fontMetrics().height() + 8);
    summary_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    fitSummaryHeight();
    throughput_ = new QLabel;
    throughput_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    compile_ = new QLabel;
    compile_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    compile_->setWordWrap(true);
    compile_->hide();
    environment_ = new QLabel;
    environment_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    environment_->setWordWrap(true);
    environment_->setStyleSheet("color: #555;");
    // A long interpreter path wraps within the view rather than widening it.
    environment_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    compile_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

    steps_ = new StepTableModel(this);
    stepsView_ = new QTableView;
    stepsView_->setModel(steps_);
    new ColumnFit(stepsView_);
    stepsView_->verticalHeader()->hide();

    auto* lower = new QWidget;
    auto* lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    lowerLayout->addWidget(summary_);
    lowerLayout->addWidget(throughput_);
    lowerLayout->addWidget(compile_);
    lowerLayout->addWidget(environment_);
    lowerLayout->addWidget(stepsView_);

    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(plot_);
    splitter->addWidget(lower);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(splitter);
}

void StepTimingView::clearPlot() {
    plot_->clearPlottables();
    plot_->clearItems();
    plotted_ = 0;
}

int StepTimingView::plottedSteps() const {
    return plotted_;
}

void StepTimingView::showRun(const RunDocument* document) {
    clearPlot();
    if (!document) {
        steps_->setSteps(-1, {});
        summary_->clearContents();
        throughput_->clear();
        compile_->hide();
        environment_->hide();
        setNoData(plot_, tr("No run selected"));
        plot_->replot();
        return;
    }
    const RunResult& run = document->result;
    steps_->setSteps(document->id, run.steps);
    // Nothing to rescale to: fixed axes and a note, not a range that grows
    // with every refresh of a run that has no steps yet.
    setNoData(plot_, run.steps.empty() ? missingRecordsNote(document, Records::Steps) : QString());
    if (int(run.steps.size()) <= kMaxBars) {
        drawStepBars(run);
    } else {
        drawStepLines(run);
    }
    drawMeanBand(run);
    if (!run.steps.empty()) {
        plot_->rescaleAxes();
        plot_->yAxis->setRangeLower(0);
        plot_->yAxis->setRangeUpper(plot_->yAxis->range().upper * 1.1);
        plot_->xAxis->setRange(plot_->xAxis->range().lower - 0.5,
                               plot_->xAxis->range().upper + 0.5);
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
    showSummary(run);
}

// Stacked bars: measured and warm-up steps in separate stacks so that
// warm-up reads as lighter and hatched.
void StepTimingView::drawStepBars(const RunResult& run) {
    // A step recorded without its phases (a profiler trace's) is one bar.
    const auto whole = [](const StepRecord& step) {
        for (int phase = 0; phase < kPhaseCount; ++phase) {
            if (phaseOf(step, phase)) {
                return false;
            }
        }
        return true;
    };
    for (bool warmup : {false, true}) {
        QCPBars* below = nullptr;
        for (int phase = 0; phase <= kPhaseCount; ++phase) {
            QVector<double> keys, values;
            for (const auto& step : run.steps) {
                const std::optional<double> ms =
                    phase < kPhaseCount
                        ? phaseOf(step, phase)
                        : (whole(step) ? std::optional<double>(step.totalMs) : std::nullopt);
                if (step.warmup == warmup && ms) {
                    keys << step.index;
                    values << *ms;
                }
            }
            if (keys.isEmpty()) {
                continue;
            }
            auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
            const QString name = phase < kPhaseCount ? kPhases[phase] : tr("step");
            QColor color = phase < kPhaseCount ? phaseColor(kPhases[phase]) : QColor(120, 120, 120);
            bars->setName(warmup ? tr("%1 (warm-up)").arg(name) : name);
            bars->setPen(QPen(color.darker(120)));
            if (warmup) {
                color.setAlpha(90);
                bars->setBrush(QBrush(color, Qt::BDiagPattern));
            } else {
                bars->setBrush(color);
            }
            bars->setWidth(0.75);
            bars->setData(keys, values, true);
            if (below) {
                bars->moveAbove(below);
            }
            below = bars;
        }
    }
    plotted_ = int(run.steps.size());
}

// Too many steps for bars: each step's total on a line, warm-up apart.
void StepTimingView::drawStepLines(const RunResult& run) {
    for (bool warmup : {false, true}) {
        QVector<double> keys, values;
        for (const auto& step : run.steps) {
            if (step.warmup == warmup) {
                keys << step.index;
                values << step.totalMs;
            }
        }
        auto* graph = plot_->addGraph();
        graph->setName(warmup ? tr("total (warm-up)") : tr("total"));
        graph->setPen(QPen(warmup ? QColor(150, 150, 150) : phaseColor("forward")));
        graph->setAdaptiveSampling(true);
        graph->setData(keys, values, true);
        plotted_ += int(keys.size());
    }
}

// The mean ± std band over the measured steps, and the mean's line.
void StepTimingView::drawMeanBand(const RunResult& run) {
    const RunSummary& s = run.summary;
    if (s.total.count <= 1) {
        return;
    }
    const auto firstMeasured = std::find_if(run.steps.begin(), run.steps.end(),
                                            [](const StepRecord& step) { return !step.warmup; });
    const QVector<double> keys = {firstMeasured->index - 0.5, run.steps.back().index + 0.5};
    auto* upper = plot_->addGraph();
    auto* lowerBand = plot_->addGraph();
    upper->setData(keys, {s.total.mean + s.total.std, s.total.mean + s.total.std});
    lowerBand->setData(keys, {s.total.mean - s.total.std, s.total.mean - s.total.std});
    upper->setPen(Qt::NoPen);
    lowerBand->setPen(Qt::NoPen);
    upper->setBrush(QColor(0, 0, 0, 35));
    upper->setChannelFillGraph(lowerBand);
    upper->setName(tr("mean ± std (measured)"));
    lowerBand->removeFromLegend();
    auto* mean = plot_->addGraph();
    mean->setData(keys, {s.total.mean, s.total.mean});
    mean->setPen(QPen(Qt::black, 1.5, Qt::DashLine));
    mean->setName(tr("mean %1 ms").arg(s.total.mean, 0, 'f', 2));
}

// The summary's height: its header and the rows it shows.
void StepTimingView::fitSummaryHeight() {
    int height = summary_->horizontalHeader()->sizeHint().height() + 2 * summary_->frameWidth();
    for (int row = 0; row < summary_->rowCount(); ++row) {
        height += summary_->isRowHidden(row) ? 0 : summary_->verticalHeader()->defaultSectionSize();
    }
    summary_->setFixedHeight(height);
}

// The per-phase summary table, throughput, compile time and environment.
void StepTimingView::showSummary(const RunResult& run) {
    const RunSummary& s = run.summary;
    const std::optional<Stats> rows[] = {
        s.total.count ? std::optional<Stats>(s.total) : std::nullopt, s.forward, s.backward,
        s.communicationWait, s.optimizer};
    // Only a distributed run waits for communication between backward and the optimizer.
    summary_->setRowHidden(3, !run.distributed && !s.communicationWait);
    fitSummaryHeight();
    for (int row = 0; row < 5; ++row) {
        const auto& stats = rows[row];
        const double values[] = {stats ? stats->mean : 0, stats ? stats->std : 0,
                                 stats ? stats->median : 0, stats ? stats->min : 0,
                                 stats ? stats->max : 0};
        for (int column = 0; column < 5; ++column) {
            summary_->setItem(row, column,
                              new QTableWidgetItem(stats ? formatMs(values[column]) : "–"));
        }
        // One step has no spread: its std and CV are "–", not 0.
        const bool spread = stats && hasSpread(*stats);
        if (!spread) {
            summary_->setItem(row, 1, new QTableWidgetItem("–"));
        }
        summary_->setItem(row, 5, new QTableWidgetItem(spread ? formatPercent(stats->cv) : "–"));
    }
    throughput_->setText(s.total.count ? throughputText(s) : QString());
    compile_->setText(compileText(run));
    compile_->setVisible(!compile_->text().isEmpty());
    environment_->setText(environmentText(run));
    environment_->setToolTip(environment_->text());
    environment_->setVisible(!environment_->text().isEmpty());
}

QString StepTimingView::compileNote() const {
    return compile_->isHidden() ? QString() : compile_->text();
}

QString StepTimingView::environmentNote() const {
    return environment_->isHidden() ? QString() : environment_->text();
}

QList<ExportTarget> StepTimingView::exportTargets() {
    return {{"step-timing", plot_, nullptr},
            {"summary", nullptr, summary_->model()},
            {"steps", nullptr, steps_}};
}

}  // namespace stepscope::ui
