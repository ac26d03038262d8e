#include "views/compare_view.h"

#include <qcustomplot.h>

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "models/format.h"
#include "models/run_document.h"
#include "models/run_label.h"
#include "models/unlike_steps.h"
#include "results/run_comparison.h"
#include "views/parts/memory_compare_view.h"
#include "views/parts/rank_compare_page.h"
#include "widgets/column_fit.h"
#include "widgets/plot_style.h"

namespace stepscope::ui {

namespace {

QTableWidgetItem* numberItem(const QString& text, std::optional<double> exact = std::nullopt) {
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    if (exact) {
        item->setData(Qt::UserRole, *exact);  // exact, for tests and tools
    }
    return item;
}

// Says on the verdict that it compares unlike steps, and which fields make them so.
QTableWidgetItem* markUnlike(QTableWidgetItem* item, const QStringList& unlike) {
    if (unlike.isEmpty()) {
        return item;
    }
    item->setText(CompareView::tr("%1 · unlike steps").arg(item->text()));
    item->setForeground(QColor(160, 90, 0));
    item->setToolTip(CompareView::tr("Unlike steps: %1. The two runs' steps do different "
                                     "work, so this ratio is not a speed-up.\n\n%2")
                         .arg(unlike.join(", "), item->toolTip())
                         .trimmed());
    return item;
}

// What the data can say: "too few steps" where no test at these sizes can
// reach p < 0.05, else the exact test's "faster", "slower" or "within
// noise". The tooltip gives the test, its p (or why there is none), the
// interval of the ratio and whether the steps overlap, as they are.
QString verdictTip(const TimeComparison& t, const QString& firstLabel) {
    QString tip;
    if (t.pValue) {
        tip = CompareView::tr("%1 of the measured steps (%2 and %3) against %4: p = %5.")
                  .arg(t.countA + t.countB > kExactTestLimit
                           ? CompareView::tr("Mann–Whitney U test (normal approximation)")
                           : CompareView::tr("Exact Mann–Whitney U test"))
                  .arg(t.countA)
                  .arg(t.countB)
                  .arg(firstLabel)
                  .arg(*t.pValue, 0, 'g', 3);
        tip += " " + (t.verdict == Verdict::WithinNoise
                          ? CompareView::tr("At p ≥ %1 the difference could be chance.")
                          : CompareView::tr("Below %1 the steps of the two runs are unlikely to "
                                            "come from the same spread."))
                         .arg(kNoiseAlpha);
    } else {
        tip = CompareView::tr(
                  "%1 and %2 measured steps: no test can tell the runs apart at p < "
                  "%3 (the least p any split of them gives is %4). %5 measured steps "
                  "would let it decide.")
                  .arg(t.countA)
                  .arg(t.countB)
                  .arg(kNoiseAlpha)
                  .arg(leastPValue(t.countA, t.countB), 0, 'g', 3)
                  .arg(t.neededA == t.neededB
                           ? CompareView::tr("%1 a side").arg(t.neededA)
                           : CompareView::tr("%1 and %2").arg(t.neededA).arg(t.neededB));
    }
    if (t.ciLow && t.ciHigh) {
        tip += " " + CompareView::tr(
                         "%1% interval of the ratio: %2× to %3× (from the ratios of "
                         "every pair of steps).")
                         .arg(100 * t.ciLevel, 0, 'f', 0)
                         .arg(*t.ciLow, 0, 'f', 3)
                         .arg(*t.ciHigh, 0, 'f', 3);
    }
    return tip + " " +
           (t.overlap ? CompareView::tr("The two runs' steps overlap.")
                      : CompareView::tr("The two runs' steps do not overlap."));
}

QTableWidgetItem* verdictItem(const TimeComparison& t, const QString& firstLabel) {
    auto* item = new QTableWidgetItem(CompareView::tr(toString(t.verdict)));
    if (t.pValue) {
        item->setData(Qt::UserRole, *t.pValue);
    }
    item->setToolTip(verdictTip(t, firstLabel));
    if (t.verdict == Verdict::Faster || t.verdict == Verdict::Slower) {
        item->setForeground(t.verdict == Verdict::Faster ? QColor(30, 120, 30)
                                                         : QColor(170, 40, 20));
    }
    return item;
}

}  // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
    auto* hint = new QLabel(
        tr("Tick two or more runs in the run list to compare them. Times are over the measured "
           "steps; the ratio is the first run's median ÷ that run's (above 1, that run is "
           "faster), and the verdict says whether the difference stands out of the noise, or "
           "that there are too few steps to tell. The "
           "chart overlays the measured steps; warm-up steps are left out (Step timing shows "
           "them, hatched)."));
    hint->setWordWrap(true);
    differences_ = new QLabel;
    differences_->setWordWrap(true);
    differences_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    table_ = new QTableWidget(0, ColumnCount);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    new ColumnFit(table_, {Run});
    plot_ = new QCustomPlot;
    plot_->setMinimumHeight(200);
    useIntegerTicks(plot_->xAxis);
    stylePlot(plot_, tr("measured step"), tr("total time per step (ms)"));
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(table_);
    splitter->addWidget(plot_);
    // Two runs' eight rows whole, and the chart the larger share.
    keepSaneSize(plot_);
    keepDataReadable(plot_);
    splitter->setSizes({280, 420});
    auto* times = new QWidget;
    auto* timesLayout = new QVBoxLayout(times);
    timesLayout->addWidget(hint);
    timesLayout->addWidget(differences_);
    timesLayout->addWidget(splitter, 1);
    memory_ = new MemoryCompareView;
    pages_ = new QTabWidget;
    pages_->addTab(times, tr("Step times"));
    pages_->addTab(memory_, tr("Memory"));
    ranks_ = new RankComparePage;
    pages_->addTab(ranks_, tr("Ranks"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(pages_);
    showRuns({}, {});  // headers named and the chart's note, before any run is ticked
}

void CompareView::describeDifferences(qsizetype configuredRuns) {
    differences_->setVisible(configuredRuns >= 2);
    differences_->setStyleSheet(QString());
    differences_->setText(QString());
    if (configuredRuns < 2) {
        return;
    }
    QStringList fields;
    for (const ComparedField& difference : differenceList_) {
        fields << differenceText(difference);
    }
    if (fields.isEmpty()) {
        differences_->setText(tr("The runs' configurations are the same."));
        return;
    }
    QString text = tr("The runs differ in %1.").arg(fields.join(" · "));
    QStringList phases;
    for (int phase = 0; phase < 4; ++phase) {
        if (!unlikeFields(differenceList_, kStepPhases[phase]).isEmpty()) {
            phases << tr(toString(kStepPhases[phase]));
        }
    }
    if (!phases.isEmpty()) {
        text += " " + tr("Their steps do different work, so the ratio and the verdict compare "
                         "unlike steps (%1).")
                          .arg(phases.join(", "));
        differences_->setStyleSheet("background: #fff4e0; color: #6b3d00; padding: 4px;");
    }
    differences_->setText(text);
}

void CompareView::showRuns(const QList<const RunDocument*>& runs, const QStringList& labels) {
    memory_->showRuns(runs, labels);
    // Recordings with no steps (PyTorch snapshots) have only their memory to compare.
    const bool anySteps = std::any_of(runs.begin(), runs.end(),
                                      [](const RunDocument* run) { return run->hasSteps(); });
    if (runs.size() >= 2 && !anySteps) {
        pages_->setCurrentWidget(memory_);
    }
    QStringList names;
    for (int i = 0; i < runs.size(); ++i) {
        names << (i < labels.size() ? labels[i] : runs[i]->title);
    }
    QList<RunConfig> configs;
    for (const RunDocument* run : runs) {
        if (run->comparesByConfig()) {
            configs << run->result.config;  // a snapshot's default config is no difference
        }
    }
    differenceList_ = comparedFields(configs);
    describeDifferences(configs.size());
    fillTable(runs, names);
    drawSteps(runs, names);
    const bool distributed = ranks_->showRuns(runs, names);
    pages_->setTabEnabled(pages_->indexOf(ranks_), distributed);
    pages_->setTabToolTip(pages_->indexOf(ranks_),
                          distributed ? QString() : tr("Tick a distributed run to compare ranks"));
}

void CompareView::fillTable(const QList<const RunDocument*>& runs, const QStringList& names) {
    table_->clearContents();
    table_->setRowCount(0);
    table_->setHorizontalHeaderLabels({tr("phase"), tr("run"), tr("median ms"), tr("mean ms"),
                                       tr("std ms"), tr("CV"), tr("ratio"), tr("verdict")});
    for (int phase = 0; phase < int(std::size(kStepPhases)); ++phase) {
        // A phase no run has (the wait for communication of one process) is no row.
        const bool any = std::any_of(runs.begin(), runs.end(), [&](const RunDocument* run) {
            return !measuredTimes(run->result, kStepPhases[phase]).empty();
        });
        if (!any && kStepPhases[phase] == StepPhase::CommWait) {
            continue;
        }
        for (int i = 0; i < runs.size(); ++i) {
            addRow(phase, *runs[i], names[i], i == 0 ? nullptr : runs[0], names[0]);
        }
    }
}

// Run `run`'s row of `phase`: its statistics, and beside those of every run
// but the first (`reference`, named `referenceName`) the ratio and verdict.
void CompareView::addRow(int phase, const RunDocument& run, const QString& name,
                         const RunDocument* reference, const QString& referenceName) {
    const std::vector<double> times = measuredTimes(run.result, kStepPhases[phase]);
    const int row = table_->rowCount();
    table_->insertRow(row);
    table_->setItem(row, Phase, new QTableWidgetItem(tr(toString(kStepPhases[phase]))));
    auto* nameItem = new QTableWidgetItem(name);
    nameItem->setToolTip(run.title);
    table_->setItem(row, Run, nameItem);
    if (times.empty()) {
        for (int column = Median; column < ColumnCount; ++column) {
            table_->setItem(row, column, numberItem("–"));
        }
        return;
    }
    const Stats stats = summarize(times);
    table_->setItem(row, Median, numberItem(formatMs(stats.median), stats.median));
    table_->setItem(row, Mean, numberItem(formatMs(stats.mean), stats.mean));
    // One step has no spread: "–", not 0.
    const bool spread = hasSpread(stats);
    table_->setItem(row, Std,
                    spread ? numberItem(formatMs(stats.std), stats.std) : numberItem("–"));
    table_->setItem(row, Cv,
                    spread ? numberItem(formatPercent(stats.cv), stats.cv) : numberItem("–"));
    if (!reference) {
        table_->setItem(row, Ratio, numberItem(tr("reference")));
        table_->setItem(row, Verdict, new QTableWidgetItem());
        return;
    }
    const TimeComparison t =
        compareTimes(measuredTimes(reference->result, kStepPhases[phase]), times);
    auto* ratio =
        t.ratio > 0 ? numberItem(QString::number(t.ratio, 'f', 3) + "×", t.ratio) : numberItem("–");
    table_->setItem(row, Ratio, ratio);
    // A recording made elsewhere has no configuration to differ in.
    const QStringList unlike =
        reference->comparesByConfig() && run.comparesByConfig()
            ? unlikeFields(comparedFields({reference->result.config, run.result.config}),
                           kStepPhases[phase])
            : QStringList();
    table_->setItem(row, Verdict,
                    t.ratio > 0 ? markUnlike(verdictItem(t, referenceName), unlike)
                                : new QTableWidgetItem("–"));
    ratio->setToolTip(table_->item(row, Verdict)->toolTip());
}

// Each run's measured steps, numbered from 1, so that runs with different
// warm-ups line up and a slow first step does not set the scale.
void CompareView::drawSteps(const QList<const RunDocument*>& runs, const QStringList& names) {
    plot_->clearGraphs();
    if (runs.isEmpty()) {
        setNoData(plot_, tr("Tick two or more runs in the run list"));
        plot_->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    setNoData(plot_, QString());
    for (int i = 0; i < runs.size(); ++i) {
        QVector<double> keys, values;
        for (const auto& step : runs[i]->result.steps) {
            if (!step.warmup) {
                keys << double(keys.size() + 1);
                values << step.totalMs;
            }
        }
        auto* graph = plot_->addGraph();
        graph->setName(names[i]);
        graph->setPen(QPen(seriesColor(i), 2, seriesStyle(i)));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
        graph->setAdaptiveSampling(true);
        graph->setData(keys, values, true);
    }
    plot_->rescaleAxes();
    // Half a step of room on either side, so that the first and last points are whole.
    plot_->xAxis->setRange(plot_->xAxis->range().lower - 0.5, plot_->xAxis->range().upper + 0.5);
    plot_->yAxis->setRange(0, plot_->yAxis->range().upper * 1.08 + 1e-9);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QList<ExportTarget> CompareView::exportTargets() {
    return {{"compare", plot_, nullptr},
            {"compare-table", nullptr, table_->model()},
            {"compare-ranks", nullptr, ranks_->model()}};
}

}  // namespace stepscope::ui
