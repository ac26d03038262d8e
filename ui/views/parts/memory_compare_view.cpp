#include "views/parts/memory_compare_view.h"

#include <qcustomplot.h>

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <QComboBox>
#include <QHBoxLayout>
#include <QSpinBox>

#include <algorithm>
#include <optional>
#include <set>

#include "analysis/recording_summary.h"
#include "analysis/run_memory_snapshot.h"
#include "models/format.h"
#include "models/run_document.h"
#include "widgets/column_fit.h"
#include "widgets/plot_style.h"

namespace stepscope::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Bytes allocated after each event (what was alive before the trace plus
// the running sum of the trace, as the summaries count), in ms from
// `origin` (µs on the trace's clock), decimated to at most `maxPoints` by
// keeping each bucket's highest value.
void allocatedCurve(const MemoryTrace& trace, int64_t aliveBefore, double origin, int maxPoints,
                    QVector<double>* keys, QVector<double>* values) {
    const size_t n = trace.size();
    const size_t bucket = std::max<size_t>(1, (n + size_t(maxPoints) - 1) / size_t(maxPoints));
    int64_t total = aliveBefore;  // what the trace frees without having made it
    int64_t highest = INT64_MIN;
    double highestAt = 0;
    for (size_t i = 0; i < n; ++i) {
        total += trace.bytes[i];
        if (total > highest) {
            highest = total;
            highestAt = trace.timeUs[i];
        }
        if ((i + 1) % bucket == 0 || i + 1 == n) {
            *keys << (highestAt - origin) / 1e3;
            *values << double(highest) / kMiB;
            highest = INT64_MIN;
        }
    }
}

// Where step `step` starts on the trace's clock: its first phase range
// (forward), else its first event; nullopt when the trace has neither.
std::optional<double> stepStartUs(const MemoryTrace& trace, int step) {
    std::optional<double> start;
    for (const MemoryTrace::PhaseRange& range : trace.phases) {
        if (range.step == step && (!start || range.startUs < *start)) {
            start = range.startUs;
        }
    }
    for (size_t i = 0; !start && i < trace.size(); ++i) {
        if (trace.step[i] == step) {
            start = trace.timeUs[i];
        }
    }
    return start;
}

// The steps a run's memory trace has phase ranges for (a snapshot: none).
std::set<int> tracedSteps(const MemoryTrace& trace) {
    std::set<int> steps;
    for (const MemoryTrace::PhaseRange& range : trace.phases) {
        if (range.step >= 0) {
            steps.insert(range.step);
        }
    }
    return steps;
}

// One recording's curve, its time from `origin`, and its peak's marker at
// the very point; returns the peak's time on the axis (ms).
double addCurve(QCustomPlot* plot, int k, const MemoryTrace& trace, const RecordingSummary& summary,
                double origin, const QString& name) {
    QVector<double> keys, values;
    allocatedCurve(trace, summary.aliveBeforeBytes, origin, MemoryCompareView::kMaxPoints, &keys,
                   &values);
    auto* graph = plot->addGraph();
    graph->setName(name);
    graph->setPen(QPen(seriesColor(k), 1.5, seriesStyle(k)));
    graph->setLineStyle(QCPGraph::lsStepLeft);
    graph->setData(keys, values, true);
    // The summary's peak time counts from the first event.
    const double peakAt = (summary.peakTimeUs + trace.timeUs.front() - origin) / 1e3;
    auto* peak = new QCPItemTracer(plot);
    peak->setGraph(graph);
    peak->setGraphKey(peakAt);
    peak->setInterpolating(false);
    peak->setStyle(QCPItemTracer::tsCircle);
    peak->setSize(9);
    peak->setPen(QPen(seriesColor(k), 2));
    return peakAt;
}

QTableWidgetItem* bytesItem(int64_t bytes, bool signedText = false) {
    QString text = bytesText(bytes < 0 ? -bytes : bytes);
    if (signedText) {
        text.prepend(bytes < 0 ? "−" : "+");
    }
    auto* item = new QTableWidgetItem(text);
    item->setData(Qt::UserRole, qlonglong(bytes));
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

}  // namespace

MemoryCompareView::MemoryCompareView(QWidget* parent) : QWidget(parent) {
    caption_ = new QLabel;
    caption_->setWordWrap(true);
    alignBox_ = new QComboBox;
    alignBox_->addItems({tr("their first event"), tr("the start of step")});
    stepBox_ = new QSpinBox;
    stepBox_->setRange(0, 1 << 30);
    stepBox_->setValue(1);  // the first step after a warm-up step 0
    stepBox_->setEnabled(false);
    auto* alignRow = new QHBoxLayout;
    alignRow->addWidget(new QLabel(tr("Align both at")));
    alignRow->addWidget(alignBox_);
    alignRow->addWidget(stepBox_);
    alignRow->addStretch(1);
    plot_ = new QCustomPlot;
    plot_->setMinimumHeight(200);
    stylePlot(plot_, tr("time from the first event (ms)"), tr("allocated (MiB)"));
    table_ = new QTableWidget(0, ColumnCount);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    new ColumnFit(table_, {Site});
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(plot_);
    splitter->addWidget(table_);
    keepSaneSize(plot_);
    splitter->setSizes({420, 280});
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(caption_);
    layout->addLayout(alignRow);
    layout->addWidget(splitter);
    connect(alignBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
        setAlignment(index == 1 ? Align::StepStart : Align::FirstEvent, stepBox_->value());
    });
    connect(stepBox_, &QSpinBox::valueChanged, this, [this](int step) {
        if (align_ == Align::StepStart) {
            setAlignment(Align::StepStart, step);
        }
    });
}

QString MemoryCompareView::caption() const {
    return caption_->text();
}

int MemoryCompareView::alignStep() const {
    return stepBox_->value();
}

bool MemoryCompareView::stepAlignmentOffered() const {
    return alignBox_->isEnabled();
}

void MemoryCompareView::setAlignment(Align align, int step) {
    {
        const QSignalBlocker blockAlign(alignBox_);
        const QSignalBlocker blockStep(stepBox_);
        if (align == Align::StepStart && !stepAlignmentOffered()) {
            align = Align::FirstEvent;  // a snapshot has no steps
        }
        align_ = align;
        alignBox_->setCurrentIndex(align == Align::StepStart ? 1 : 0);
        stepBox_->setValue(step);
        stepBox_->setEnabled(align == Align::StepStart);
    }
    draw();
}

void MemoryCompareView::showRuns(const QList<const RunDocument*>& runs, const QStringList& labels) {
    runs_ = runs;
    labels_ = labels;
    draw();
}

// Step alignment where both recordings are runs with steps in common: the
// spin box spans them, step 1 by default (step 0 carries the first call's
// one-off work).
void MemoryCompareView::offerSteps(const QList<int>& traced) {
    std::set<int> common;
    if (traced.size() == 2) {
        const std::set<int> a = tracedSteps(runs_[traced[0]]->result.memory);
        const std::set<int> b = tracedSteps(runs_[traced[1]]->result.memory);
        std::set_intersection(a.begin(), a.end(), b.begin(), b.end(),
                              std::inserter(common, common.begin()));
    }
    const QSignalBlocker blockAlign(alignBox_);
    const QSignalBlocker blockStep(stepBox_);
    alignBox_->setEnabled(!common.empty());
    stepBox_->setVisible(!common.empty());  // a step number means nothing to a snapshot
    alignBox_->setToolTip(common.empty()
                              ? tr("By step only where both recordings are runs of StepScope "
                                   "with steps in common: a PyTorch snapshot has no steps.")
                              : QString());
    if (common.empty()) {
        align_ = Align::FirstEvent;
        alignBox_->setCurrentIndex(0);
        stepBox_->setEnabled(false);
        return;
    }
    const int previous = stepBox_->value();
    stepBox_->setRange(*common.begin(), *common.rbegin());
    stepBox_->setValue(common.count(previous) ? previous : common.count(1) ? 1 : *common.begin());
    stepBox_->setEnabled(align_ == Align::StepStart);
}

void MemoryCompareView::draw() {
    table_->clearContents();
    table_->setRowCount(0);
    table_->setHorizontalHeaderLabels(
        {tr("allocation site"), tr("A at its peak"), tr("B at its peak"), tr("B − A")});
    plot_->clearGraphs();
    plot_->clearItems();
    QList<int> traced;
    for (int i = 0; i < runs_.size() && traced.size() < 2; ++i) {
        if (runs_[i]->hasMemory()) {
            traced << i;
        }
    }
    offerSteps(traced);
    if (traced.size() < 2) {
        caption_->setText(
            tr("Tick two recordings with a memory trace (runs made with “Trace "
               "memory”, PyTorch memory snapshots) to compare their memory."));
        setNoData(plot_, tr("Two recordings with a memory trace"));
        plot_->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    setNoData(plot_, QString());
    const bool byStep = align_ == Align::StepStart;
    plot_->xAxis->setLabel(byStep ? tr("time from the start of step %1 (ms)").arg(alignStep())
                                  : tr("time from the first event (ms)"));
    auto label = [&](int i) { return i < labels_.size() ? labels_[i] : runs_[i]->title; };
    std::vector<RecordingSummary> summaries;
    double peakAtMs[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
        const MemoryTrace& trace = runs_[traced[k]]->result.memory;
        summaries.push_back(summarizeRunMemory(trace, runs_[traced[k]]->title.toStdString()));
        const double first = trace.timeUs.front();
        const double origin = byStep ? stepStartUs(trace, alignStep()).value_or(first) : first;
        peakAtMs[k] = addCurve(plot_, k, trace, summaries.back(), origin,
                               QString("%1: %2").arg(k == 0 ? "A" : "B", label(traced[k])));
    }
    const RecordingDiff diff = diffRecordings(summaries[0], summaries[1]);
    for (const SiteDelta& site : diff.sites) {
        const int row = table_->rowCount();
        table_->insertRow(row);
        table_->setItem(row, Site, new QTableWidgetItem(QString::fromStdString(site.site)));
        table_->setItem(row, ABytes, bytesItem(site.aBytes));
        table_->setItem(row, BBytes, bytesItem(site.bBytes));
        table_->setItem(row, Delta, bytesItem(site.deltaBytes, true));
    }
    caption_->setText(
        tr("A: %1, peak %2 at %3 ms. B: %4, peak %5 at %6 ms. B − A at the peak: "
           "%7. Times from %8; the table lists what was alive at "
           "each one's peak, by site, largest difference first.")
            .arg(label(traced[0]), bytesText(summaries[0].peakBytes))
            .arg(peakAtMs[0], 0, 'f', 3)
            .arg(label(traced[1]), bytesText(summaries[1].peakBytes))
            .arg(peakAtMs[1], 0, 'f', 3)
            .arg((diff.peakDeltaBytes < 0 ? "−" : "+") + bytesText(std::abs(diff.peakDeltaBytes)),
                 byStep ? tr("the start of step %1").arg(alignStep())
                        : tr("each one's first event")));
    plot_->legend->setVisible(true);
    fitAxesWithRoom(plot_, 1.1, true);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace stepscope::ui
