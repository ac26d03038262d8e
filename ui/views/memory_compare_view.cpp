#include "views/memory_compare_view.h"

#include <qcustomplot.h>

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "interop/recording_summary.h"
#include "interop/run_memory_snapshot.h"
#include "models/format.h"
#include "models/run_document.h"
#include "widgets/plot_style.h"

namespace stepscope::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Bytes allocated after each event (what was alive before the trace plus
// the running sum of the trace, as the summaries count), in ms from the first event, decimated to
// at most `maxPoints` by keeping each bucket's highest value.
void allocatedCurve(const MemoryTrace& trace, int64_t aliveBefore, int maxPoints,
                    QVector<double>* keys, QVector<double>* values) {
    const size_t n = trace.size();
    const size_t bucket = std::max<size_t>(1, (n + size_t(maxPoints) - 1) / size_t(maxPoints));
    const double origin = trace.timeUs.front();
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
    plot_ = new QCustomPlot;
    plot_->setMinimumHeight(200);
    stylePlot(plot_, tr("time from the first event (ms)"), tr("allocated (MiB)"));
    table_ = new QTableWidget(0, ColumnCount);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(Site, QHeaderView::Stretch);
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(plot_);
    splitter->addWidget(table_);
    keepSaneSize(plot_);
    splitter->setSizes({420, 280});
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(caption_);
    layout->addWidget(splitter);
}

QString MemoryCompareView::caption() const {
    return caption_->text();
}

void MemoryCompareView::showRuns(const QList<const RunDocument*>& runs, const QStringList& labels) {
    table_->clearContents();
    table_->setRowCount(0);
    table_->setHorizontalHeaderLabels(
        {tr("allocation site"), tr("A at its peak"), tr("B at its peak"), tr("B − A")});
    plot_->clearGraphs();
    plot_->clearItems();
    QList<int> traced;
    for (int i = 0; i < runs.size() && traced.size() < 2; ++i) {
        if (!runs[i]->result.memory.empty()) {
            traced << i;
        }
    }
    if (traced.size() < 2) {
        caption_->setText(
            tr("Tick two recordings with a memory trace (runs made with “Trace "
               "memory”, PyTorch memory snapshots) to compare their memory."));
        setNoData(plot_, tr("Two recordings with a memory trace"));
        plot_->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    setNoData(plot_, QString());
    auto label = [&](int i) { return i < labels.size() ? labels[i] : runs[i]->title; };
    std::vector<RecordingSummary> summaries;
    for (int k = 0; k < 2; ++k) {
        const RunDocument* run = runs[traced[k]];
        summaries.push_back(summarizeRunMemory(run->result.memory, run->title.toStdString()));
        QVector<double> keys, values;
        allocatedCurve(run->result.memory, summaries.back().aliveBeforeBytes, kMaxPoints, &keys,
                       &values);
        auto* graph = plot_->addGraph();
        graph->setName(QString("%1: %2").arg(k == 0 ? "A" : "B", label(traced[k])));
        graph->setPen(QPen(seriesColor(k), 1.5, seriesStyle(k)));
        graph->setLineStyle(QCPGraph::lsStepLeft);
        graph->setData(keys, values, true);
        // The peak: a marker at the very point.
        auto* peak = new QCPItemTracer(plot_);
        peak->setGraph(graph);
        peak->setGraphKey(summaries.back().peakTimeUs / 1e3);
        peak->setInterpolating(false);
        peak->setStyle(QCPItemTracer::tsCircle);
        peak->setSize(9);
        peak->setPen(QPen(seriesColor(k), 2));
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
           "%7. Both from their first event; the table lists what was alive at "
           "each one's peak, by site, largest difference first.")
            .arg(label(traced[0]), bytesText(summaries[0].peakBytes))
            .arg(summaries[0].peakTimeUs / 1e3, 0, 'f', 3)
            .arg(label(traced[1]), bytesText(summaries[1].peakBytes))
            .arg(summaries[1].peakTimeUs / 1e3, 0, 'f', 3)
            .arg((diff.peakDeltaBytes < 0 ? "−" : "+") + bytesText(std::abs(diff.peakDeltaBytes))));
    plot_->legend->setVisible(true);
    fitAxesWithRoom(plot_, 1.1, true);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace stepscope::ui
