#include "memory_view.h"

#include <qcustomplot.h>

#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>

#include "bench/cost_model.h"
#include "format.h"
#include "plot_style.h"
#include "read_only_table.h"
#include "results/memory_report.h"
#include "run_document.h"

namespace stepscope::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

QStandardItem* bytesItem(int64_t bytes) {
    auto* item = new QStandardItem(QString::fromStdString(formatBytes(double(bytes))));
    item->setData(qlonglong(bytes), Qt::UserRole);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QColor memoryColor(MemoryCategory category) {
    static const QColor colors[] = {QColor(52, 101, 164), QColor(204, 102, 0), QColor(78, 154, 6),
                                    QColor(204, 0, 0),    QColor(237, 212, 0), QColor(117, 80, 123),
                                    QColor(136, 138, 133)};
    return colors[size_t(category)];
}

}  // namespace

MemoryView::MemoryView(QWidget* parent) : RunView(parent) {
    caption_ = new QLabel;
    caption_->setWordWrap(true);
    plot_ = new QCustomPlot;
    stylePlot(plot_, tr("time (ms)"), tr("active memory (MiB)"));
    plot_->axisRect()->setRangeDrag(Qt::Horizontal);
    plot_->axisRect()->setRangeZoom(Qt::Horizontal);
    plot_->setMouseTracking(true);
    plot_->installEventFilter(this);
    top_ = new QStandardItemModel(this);
    estimate_ = new QStandardItemModel(this);
    narrow_ = new QTimer(this);
    narrow_->setSingleShot(true);
    narrow_->setInterval(80);  // zooming sends many range changes; refill once they settle
    auto* tables = new QSplitter(Qt::Horizontal);
    tables->addWidget(readOnlyTable(top_));
    tables->addWidget(readOnlyTable(estimate_));
    tables->setStretchFactor(0, 3);
    tables->setStretchFactor(1, 2);
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(plot_);
    splitter->addWidget(tables);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(caption_);
    layout->addWidget(splitter, 1);
    connect(plot_->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), narrow_,
            qOverload<>(&QTimer::start));
    connect(narrow_, &QTimer::timeout, this, &MemoryView::fillTopTable);
}

void MemoryView::showRun(const RunDocument* document) {
    const int id = document ? document->id : -1;
    const size_t events = document ? document->result.memory.size() : 0;
    if (id == shownId_ && events == shownEvents_) {
        return;
    }
    shownId_ = id;
    shownEvents_ = events;
    plot_->clearGraphs();
    plot_->clearItems();
    top_->clear();
    estimate_->clear();
    allocations_.clear();
    trace_ = events ? &document->result.memory : nullptr;
    if (!trace_) {
        caption_->setText(
            tr("This run has no memory trace. Tick “Trace memory” before running, "
               "or make it with stepscope-cli run --memory."));
        plot_->replot();
        return;
    }
    const MemoryTrace& trace = *trace_;
    allocations_ = memoryAllocations(trace);
    const MemorySummary summary = summarizeMemory(trace, 0);

    // Decimate: per time bucket keep the sample with the most bytes alive, so
    // no peak is lost; then stack categories bottom to top.
    const double span = std::max(1.0, trace.timeUs.back() - trace.timeUs.front());
    const size_t buckets = std::min<size_t>(kMaxPoints, trace.size());
    std::vector<CategoryBytes> samples(buckets, CategoryBytes{});
    std::vector<double> times(buckets, -1);
    std::vector<int64_t> best(buckets, -1);
    CategoryBytes active{};
    int64_t total = 0;
    for (size_t i = 0; i < trace.size(); ++i) {
        active[trace.category[i]] += trace.bytes[i];
        total += trace.bytes[i];
        const size_t bucket = std::min(
            buckets - 1, size_t((trace.timeUs[i] - trace.timeUs.front()) / span * double(buckets)));
        if (total > best[bucket]) {
            best[bucket] = total;
            samples[bucket] = active;
            times[bucket] = trace.timeUs[i];
        }
    }
    QVector<double> keys;
    std::vector<QVector<double>> stacked(kMemoryCategories);
    CategoryBytes last{};
    for (size_t b = 0; b < buckets; ++b) {
        if (times[b] < 0) {
            continue;  // an empty bucket: the step line carries the last value
        }
        last = samples[b];
        keys << times[b] / 1e3;
        double sum = 0;
        for (size_t c = 0; c < kMemoryCategories; ++c) {
            sum += double(last[c]) / kMiB;
            stacked[c] << sum;
        }
    }
    QCPGraph* below = nullptr;
    for (size_t c = 0; c < kMemoryCategories; ++c) {
        QCPGraph* graph = plot_->addGraph();
        graph->setName(toString(MemoryCategory(c)));
        graph->setLineStyle(QCPGraph::lsStepLeft);
        graph->setData(keys, stacked[c], /*alreadySorted=*/true);
        const QColor color = memoryColor(MemoryCategory(c));
        graph->setPen(QPen(color.darker(120)));
        QColor fill = color;
        fill.setAlpha(170);
        graph->setBrush(fill);
        if (below) {
            graph->setChannelFillGraph(below);
        }
        below = graph;
    }
    // Phase bands along the time axis.
    for (const auto& range : trace.phases) {
        auto* band = new QCPItemRect(plot_);
        band->setLayer("background");
        band->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
        band->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
        band->topLeft->setCoords(range.startUs / 1e3, 0);
        band->bottomRight->setCoords(range.endUs / 1e3, 1);
        QColor color = phaseColor(phaseName(range.phase));
        color.setAlpha(30);
        band->setBrush(color);
        band->setPen(Qt::NoPen);
    }
    auto* peak = new QCPItemText(plot_);
    peak->position->setCoords(summary.peakTimeUs / 1e3, double(summary.peakBytes) / kMiB);
    peak->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
    peak->setText(tr("▼ peak %1 (%2)")
                      .arg(QString::fromStdString(formatBytes(double(summary.peakBytes))),
                           phaseName(summary.peakPhase)));
    plot_->xAxis->setRange(trace.timeUs.front() / 1e3, trace.timeUs.back() / 1e3);
    plot_->yAxis->setRange(0, double(summary.peakBytes) / kMiB * 1.15 + 1e-3);

    const MemoryEstimate estimate = estimateMemory(document->result.config);
    estimate_->setHorizontalHeaderLabels(
        {tr("category"), tr("at peak"), tr("max"), tr("estimate")});
    const std::optional<int64_t> predicted[] = {
        estimate.parameters,  estimate.gradients, estimate.optimizerState,
        estimate.activations, std::nullopt,       std::nullopt,
        std::nullopt};
    for (size_t c = 0; c < kMemoryCategories; ++c) {
        estimate_->appendRow({new QStandardItem(toString(MemoryCategory(c))),
                              bytesItem(summary.atPeak[c]), bytesItem(summary.maxByCategory[c]),
                              predicted[c] ? bytesItem(*predicted[c]) : new QStandardItem("–")});
    }
    estimate_->appendRow({new QStandardItem(tr("residual-stream tensor")), new QStandardItem("–"),
                          new QStandardItem("–"),
                          bytesItem(residualStreamBytes(document->result.config))});
    caption_->setText(tr("%1 events on %2; peak %3 at %4 ms in %5 of step %6. Wheel zooms and drag "
                         "pans along time; the table lists the largest allocations alive in view.")
                          .arg(qulonglong(trace.size()))
                          .arg(QString::fromStdString(trace.device),
                               QString::fromStdString(formatBytes(double(summary.peakBytes))))
                          .arg(summary.peakTimeUs / 1e3, 0, 'f', 1)
                          .arg(phaseName(summary.peakPhase))
                          .arg(summary.peakStep));
    fillTopTable();
    plot_->replot();
}

int MemoryView::plottedPoints() const {
    return plot_->graphCount() ? plot_->graph(0)->dataCount() : 0;
}

void MemoryView::setTimeRange(double startUs, double endUs) {
    if (endUs > startUs) {
        plot_->xAxis->setRange(startUs / 1e3, endUs / 1e3);
        plot_->replot();
        fillTopTable();
    }
}

void MemoryView::fillTopTable() {
    top_->clear();
    top_->setHorizontalHeaderLabels({tr("size"), tr("category"), tr("phase"), tr("step"),
                                     tr("module / node"), tr("lifetime ms")});
    if (!trace_) {
        return;
    }
    const double lo = plot_->xAxis->range().lower * 1e3;
    const double hi = plot_->xAxis->range().upper * 1e3;
    const double end = trace_->timeUs.back();
    std::vector<const MemoryAllocation*> inView;
    for (const auto& allocation : allocations_) {
        const double stop = allocation.endUs >= 0 ? allocation.endUs : end;
        if (allocation.startUs <= hi && stop >= lo) {
            inView.push_back(&allocation);
        }
    }
    const size_t count = std::min<size_t>(kTopRows, inView.size());
    std::partial_sort(
        inView.begin(), inView.begin() + long(count), inView.end(),
        [](const MemoryAllocation* a, const MemoryAllocation* b) { return a->bytes > b->bytes; });
    for (size_t i = 0; i < count; ++i) {
        const MemoryAllocation& a = *inView[i];
        const double stop = a.endUs >= 0 ? a.endUs : end;
        top_->appendRow({bytesItem(a.bytes), new QStandardItem(toString(a.category)),
                         new QStandardItem(phaseName(a.phase)),
                         new QStandardItem(QString::number(a.step)),
                         new QStandardItem(QString::fromStdString(a.path)),
                         new QStandardItem(QString::number((stop - a.startUs) / 1e3, 'f', 3) +
                                           (a.endUs >= 0 ? "" : tr(" (alive)")))});
    }
}

const MemoryAllocation* MemoryView::allocationAt(double timeUs, double bytes) const {
    if (!trace_ || bytes < 0) {
        return nullptr;
    }
    // Stack the allocations alive at that time as the chart does: by category,
    // then in the order they were made; find the one covering the height.
    const double end = trace_->timeUs.back();
    std::vector<const MemoryAllocation*> alive;
    for (const auto& allocation : allocations_) {
        if (allocation.startUs > timeUs) {
            break;
        }
        if ((allocation.endUs >= 0 ? allocation.endUs : end + 1) > timeUs) {
            alive.push_back(&allocation);
        }
    }
    std::stable_sort(alive.begin(), alive.end(),
                     [](const MemoryAllocation* a, const MemoryAllocation* b) {
                         return a->category < b->category;
                     });
    double below = 0;
    for (const MemoryAllocation* allocation : alive) {
        below += double(allocation->bytes);
        if (bytes < below) {
            return allocation;
        }
    }
    return nullptr;
}

QString MemoryView::describe(const MemoryAllocation& a) const {
    const double end = a.endUs >= 0 ? a.endUs : trace_->timeUs.back();
    return tr("%1 · %2\n%3 of step %4 · %5\nalive %6 ms%7")
        .arg(QString::fromStdString(formatBytes(double(a.bytes))), toString(a.category),
             phaseName(a.phase))
        .arg(a.step)
        .arg(a.path.empty() ? tr("(outside modules)") : QString::fromStdString(a.path))
        .arg((end - a.startUs) / 1e3, 0, 'f', 3)
        .arg(a.endUs >= 0 ? QString() : tr(", still alive at the end"));
}

bool MemoryView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plot_ && event->type() == QEvent::MouseMove && trace_) {
        const auto* mouse = static_cast<QMouseEvent*>(event);
        const double time = plot_->xAxis->pixelToCoord(mouse->position().x()) * 1e3;
        const double bytes = plot_->yAxis->pixelToCoord(mouse->position().y()) * kMiB;
        if (const MemoryAllocation* allocation = allocationAt(time, bytes)) {
            QToolTip::showText(mouse->globalPosition().toPoint(), describe(*allocation), plot_);
        } else {
            QToolTip::hideText();
        }
    }
    return RunView::eventFilter(watched, event);
}

QList<ExportTarget> MemoryView::exportTargets() {
    return {{"memory-timeline", plot_, nullptr},
            {"memory-top-allocations", nullptr, top_},
            {"memory-estimate", nullptr, estimate_}};
}

}  // namespace stepscope::ui
