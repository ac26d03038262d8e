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
#include "views/parts/memory_compare_view.h"
#include "widgets/plot_style.h"

namespace stepscope::ui {

namespace {

const char* kPhases[] = {"total", "forward", "backward", "optimizer"};

// The measured steps' times of one phase (0 total … 3 optimizer).
std::vector<double> measuredTimes(const RunResult& run, int phase) {
    std::vector<double> times;
    for (const StepRecord& step : run.steps) {
        if (step.warmup) {
            continue;
        }
        const std::optional<double> value = phase == 0   ? std::optional<double>(step.totalMs)
                                            : phase == 1 ? step.forwardMs
                                            : phase == 2 ? step.backwardMs
                                                         : step.optimizerMs;
        if (value) {
            times.push_back(*value);
        }
    }
    return times;
}

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

// "faster", "slower" or "within noise", with the test behind it in the tooltip.
QTableWidgetItem* verdictItem(const std::vector<double>& first, const std::vector<double>& other,
                              double ratio, const QString& firstLabel) {
    if (first.size() < 3 || other.size() < 3) {
        auto* item = new QTableWidgetItem(CompareView::tr("too few steps"));
        item->setToolTip(
            CompareView::tr("Three measured steps a side are the fewest for a "
                            "verdict; run more steps."));
        return item;
    }
    const double p = mannWhitneyPValue(first, other);
    const bool noise = p >= CompareView::kNoiseP;
    auto* item = new QTableWidgetItem(
        noise ? CompareView::tr("within noise")
              : (ratio > 1 ? CompareView::tr("faster") : CompareView::tr("slower")));
    item->setData(Qt::UserRole, p);
    item->setToolTip(
        CompareView::tr("Mann–Whitney U test of the measured steps against %1: p = %2. %3")
            .arg(firstLabel)
            .arg(p, 0, 'g', 3)
            .arg(noise ? CompareView::tr("At p ≥ %1 the difference could be chance: the "
                                         "steps of both runs overlap too much to tell.")
                             .arg(CompareView::kNoiseP)
                       : CompareView::tr("Below %1 the steps of the two runs are unlikely to "
                                         "come from the same spread.")
                             .arg(CompareView::kNoiseP)));
    if (!noise) {
        item->setForeground(ratio > 1 ? QColor(30, 120, 30) : QColor(170, 40, 20));
    }
    return item;
}

}  // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
    auto* hint = new QLabel(
        tr("Tick two or more runs in the run list to compare them. Times are over the measured "
           "steps; the ratio is the first run's median ÷ that run's (above 1, that run is "
           "faster), and the verdict says whether the difference stands out of the noise. The "
           "chart overlays the measured steps; warm-up steps are left out (Step timing shows "
           "them, hatched)."));
    hint->setWordWrap(true);
    differences_ = new QLabel;
    differences_->setWordWrap(true);
    differences_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    table_ = new QTableWidget(0, ColumnCount);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(Run, QHeaderView::Stretch);
    plot_ = new QCustomPlot;
    plot_->setMinimumHeight(200);
    useIntegerTicks(plot_->xAxis);
    stylePlot(plot_, tr("measured step"), tr("total time per step (ms)"));
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(table_);
    splitter->addWidget(plot_);
    // Two runs' eight rows whole, and the chart the larger share.
    keepSaneSize(plot_);
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
    for (const FieldDifference& difference : differenceList_) {
        fields << differenceText(difference);
    }
    if (fields.isEmpty()) {
        differences_->setText(tr("The runs' configurations are the same."));
        return;
    }
    QString text = tr("The runs differ in %1.").arg(fields.join(" · "));
    QStringList phases;
    for (int phase = 0; phase < 4; ++phase) {
        if (!unlikeFields(differenceList_, phase).isEmpty()) {
            phases << tr(kPhases[phase]);
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
    differenceList_ = fieldDifferences(configs);
    describeDifferences(configs.size());
    fillTable(runs, names);
    drawSteps(runs, names);
}

void CompareView::fillTable(const QList<const RunDocument*>& runs, const QStringList& names) {
    table_->clearContents();
    table_->setRowCount(0);
    table_->setHorizontalHeaderLabels({tr("phase"), tr("run"), tr("median ms"), tr("mean ms"),
                                       tr("std ms"), tr("CV"), tr("ratio"), tr("verdict")});
    for (int phase = 0; phase < 4; ++phase) {
        for (int i = 0; i < runs.size(); ++i) {
            addRow(phase, *runs[i], names[i], i == 0 ? nullptr : runs[0], names[0]);
        }
    }
}

// Run `run`'s row of `phase`: its statistics, and beside those of every run
// but the first (`reference`, named `referenceName`) the ratio and verdict.
void CompareView::addRow(int phase, const RunDocument& run, const QString& name,
                         const RunDocument* reference, const QString& referenceName) {
    const std::vector<double> times = measuredTimes(run.result, phase);
    const int row = table_->rowCount();
    table_->insertRow(row);
    table_->setItem(row, Phase, new QTableWidgetItem(tr(kPhases[phase])));
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
    table_->setItem(row, Std, numberItem(formatMs(stats.std), stats.std));
    table_->setItem(row, Cv, numberItem(formatPercent(stats.cv), stats.cv));
    if (!reference) {
        table_->setItem(row, Ratio, numberItem(tr("reference")));
        table_->setItem(row, Verdict, new QTableWidgetItem());
        return;
    }
    const std::vector<double> first = measuredTimes(reference->result, phase);
    const bool hasRatio = !first.empty() && stats.median > 0;
    const double ratio = hasRatio ? summarize(first).median / stats.median : 0;
    table_->setItem(
        row, Ratio,
        hasRatio ? numberItem(QString::number(ratio, 'f', 3) + "×", ratio) : numberItem("–"));
    const QStringList unlike =
        unlikeFields(fieldDifferences({reference->result.config, run.result.config}), phase);
    table_->setItem(row, Verdict,
                    hasRatio ? markUnlike(verdictItem(first, times, ratio, referenceName), unlike)
                             : new QTableWidgetItem("–"));
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
    return {{"compare", plot_, nullptr}, {"compare-table", nullptr, table_->model()}};
}

}  // namespace stepscope::ui
