#include "views/memory_view.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QSlider>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "estimate/cost_model.h"
#include "estimate/memory_estimate.h"
#include "models/allocation_stack.h"
#include "models/format.h"
#include "models/missing_records.h"
#include "models/release_elsewhere.h"
#include "models/run_document.h"
#include "models/snapshot_recording.h"
#include "results/memory_report.h"
#include "views/parts/allocation_bands.h"
#include "views/parts/annotation_bands.h"
#include "views/parts/category_stack.h"
#include "views/parts/rank_memory_panel.h"
#include "views/parts/saved_view.h"
#include "views/parts/snapshot_stack_panel.h"
#include "views/parts/time_tints.h"
#include "widgets/column_fit.h"
#include "widgets/elided_label.h"
#include "widgets/plot_style.h"
#include "widgets/read_only_table.h"
#include "widgets/table_items.h"

namespace stepscope::ui {

namespace {

// The sites table's text columns, as fillSitesTable heads them; the rest are figures.
constexpr int SiteModuleColumn = 4;
constexpr int SiteOpColumn = 5;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr int kDetailSteps = 100;

// Twelve colours that stay apart from each other for modules.
QColor moduleColor(size_t index) {
    static const QColor colors[] = {
        QColor(31, 119, 180),  QColor(255, 127, 14), QColor(44, 160, 44),   QColor(214, 39, 40),
        QColor(148, 103, 189), QColor(140, 86, 75),  QColor(227, 119, 194), QColor(23, 190, 207),
        QColor(188, 189, 34),  QColor(57, 59, 121),  QColor(173, 73, 74),   QColor(99, 121, 57)};
    return colors[index % std::size(colors)];
}

const QColor kSmallerColour(214, 214, 214);
const QColor kOtherModules(120, 144, 156);
constexpr size_t kModuleColours = 11;  // the rest share one colour
const QColor kSelectionColour(220, 0, 160);

}  // namespace

MemoryView::MemoryView(QWidget* parent) : RunView(parent) {
    caption_ = new QLabel;
    caption_->setWordWrap(true);
    QLayout* controls = createControls();
    createSnapshotRow();
    // Two lines whatever is hovered or pinned: the chart above never jumps.
    details_ = new ElidedLabel(2);
    createPlot();
    createLowerTabs();
    auto* chart = new QWidget;
    auto* chartLayout = new QVBoxLayout(chart);
    chartLayout->setContentsMargins(0, 0, 0, 0);
    chartLayout->addWidget(snapshotRow_);
    chartLayout->addLayout(controls);
    chartLayout->addWidget(plot_, 1);
    chartLayout->addWidget(details_);
    rankMemory_ = new RankMemoryPanel;
    chartOrRanks_ = new QStackedWidget;
    chartOrRanks_->addWidget(chart);
    chartOrRanks_->addWidget(rankMemory_);
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(chartOrRanks_);
    splitter->addWidget(lower_);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setCollapsible(0, false);
    // The chart two thirds from the start: on a 768 px screen it had a
    // third, its axis title cut.
    // With the controls on two rows (for a 1024 px screen) the chart needs
    // the room they took: the lower tables start shorter, and drag taller.
    lower_->setMinimumHeight(100);
    splitter->setSizes({520, 140});
    // The axis's room above the peak is in pixels: once the chart has its
    // height (after the first layout, a resize), the axis fits it again.
    connect(plot_, &QCustomPlot::afterLayout, this, [this] {
        const int height = plot_->axisRect()->height();
        if (height != fittedHeight_) {
            fittedHeight_ = height;
            fitValueAxis();
            placePeakMarker();
        }
    });
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(caption_);
    layout->addWidget(splitter, 1);

    connectControls();
    updateFollowToolTip();
    colourBox_->setEnabled(false);
    detail_->setEnabled(false);
}

// The row over the chart: how it stacks and colours, what it hides, Fit,
// and whether it follows the Timeline.
QLayout* MemoryView::createControls() {
    modeBox_ = new QComboBox;
    modeBox_->addItem(tr("By category"));
    modeBox_->addItem(tr("Each allocation"));
    modeBox_->setToolTip(
        tr("By category: seven stacked areas. Each allocation: every allocation its own band, "
           "stacked in the order they were made, as PyTorch's memory_viz draws them."));
    colourBox_ = new QComboBox;
    colourBox_->addItem(tr("colour by category"));
    colourBox_->addItem(tr("colour by module"));
    detail_ = new QSlider(Qt::Horizontal);
    detail_->setRange(0, kDetailSteps);
    detail_->setTracking(false);  // a million events: lay out once the slider is let go
    detail_->setMinimumWidth(100);
    detail_->setToolTip(
        tr("Hide allocations smaller than this size: they are summed into one grey "
           "band, so the total stays right. Further right hides more."));
    // The labels of the row elide rather than widen it: a long count of
    // bands or a hover's module path pushed the window past the screen.
    detailLabel_ = new ElidedLabel;
    fitButton_ = new QToolButton;  // as wide as its word: the row has little to spare
    fitButton_->setText(tr("Fit"));
    fitButton_->setToolTip(tr("Show the whole run (or double-click the chart)"));
    follow_ = new QCheckBox(tr("Follow the Timeline's zoom"));
    follow_->setChecked(true);
    // Two rows: on one, the window could not be narrower than 1225 px.
    auto* what = new QHBoxLayout;
    what->addWidget(modeBox_);
    what->addWidget(colourBox_);
    what->addStretch(1);
    what->addWidget(fitButton_);
    what->addWidget(follow_);
    auto* floor = new QHBoxLayout;
    // Named for what it does: further right hides more (memory_viz calls it Detail).
    floor->addWidget(new QLabel(tr("Hide smaller than")));
    floor->addWidget(detail_);
    floor->addWidget(detailLabel_, 1);
    auto* controls = new QVBoxLayout;
    controls->addLayout(what);
    controls->addLayout(floor);
    return controls;
}

// A snapshot's own controls on a row of their own, shown for snapshots
// only: beside the others they widened the window past a 1366-px screen.
void MemoryView::createSnapshotRow() {
    deviceBox_ = new QComboBox;
    deviceBox_->setToolTip(tr("The snapshot's device to show: each has a trace of its own."));
    deviceBox_->hide();
    rulesButton_ = makeRulesButton();
    snapshotRow_ = new QWidget;
    auto* snapshotControls = new QHBoxLayout(snapshotRow_);
    snapshotControls->setContentsMargins(0, 0, 0, 0);
    snapshotControls->addWidget(deviceBox_);
    snapshotControls->addWidget(rulesButton_);
    snapshotControls->addStretch(1);
    snapshotRow_->hide();
}

// The chart, and what it draws with: allocation bands, the hovered and
// selected ones above them, record_function bands behind.
void MemoryView::createPlot() {
    plot_ = new QCustomPlot;
    // Tall enough for the y axis's title and the peak's label above the peak.
    plot_->setMinimumHeight(kMinimumChartHeight);
    stylePlot(plot_, tr("time (ms)"), tr("active memory (MiB)"));
    plot_->axisRect()->setRangeDrag(Qt::Horizontal);
    plot_->axisRect()->setRangeZoom(Qt::Horizontal);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->setMouseTracking(true);
    plot_->installEventFilter(this);
    plot_->addLayer("categories", plot_->layer("main"), QCustomPlot::limBelow);
    plot_->addLayer("highlights", plot_->layer("main"), QCustomPlot::limAbove);
    // Outlines follow the mouse on a layer of their own, drawn alone: a whole
    // chart of a run's thousands of bands takes 15 ms and more to draw.
    plot_->layer("highlights")->setMode(QCPLayer::lmBuffered);
    bands_ = new AllocationBands(plot_->xAxis, plot_->yAxis);
    bands_->removeFromLegend();
    highlight_ = new AllocationBands(plot_->xAxis, plot_->yAxis);
    highlight_->setLayer("highlights");
    highlight_->setOutline(QPen(QColor(20, 20, 20), 2));
    highlight_->removeFromLegend();
    selection_ = new AllocationBands(plot_->xAxis, plot_->yAxis);
    selection_->setLayer("highlights");
    selection_->setOutline(QPen(kSelectionColour, 2));
    selection_->removeFromLegend();
    annotations_ = new AnnotationBands(plot_->xAxis, plot_->yAxis);
    annotations_->setLayer("background");
    annotations_->removeFromLegend();
    phaseBands_ = new TimeTintBands(plot_->xAxis, plot_->yAxis);
    phaseBands_->setLayer("background");
    phaseBands_->removeFromLegend();
    // First on its layer: the category graphs, added later, draw their lines over it.
    stack_ = new CategoryStack(plot_->xAxis, plot_->yAxis);
    stack_->setLayer("categories");
    stack_->removeFromLegend();
}

// Under the chart: the sites in view, what blocks save for backward, the
// estimate against the measurement, and a snapshot allocation's stack.
void MemoryView::createLowerTabs() {
    sites_ = new QStandardItemModel(this);
    estimate_ = new QStandardItemModel(this);
    narrow_ = new QTimer(this);
    narrow_->setSingleShot(true);
    narrow_->setInterval(80);  // zooming sends many range changes; refill once they settle
    sitesTable_ = readOnlyTable(sites_);
    sitesTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
    sitesTable_->setSelectionMode(QAbstractItemView::SingleSelection);
    sitesTable_->setWordWrap(false);
    new ColumnFit(sitesTable_, {SiteModuleColumn, SiteOpColumn});  // the rest are figures
    // The estimate has a tab of its own: beside the sites' ten columns it
    // had a sixth of a laptop's width, its last column out of sight.
    estimateTable_ = readOnlyTable(estimate_);
    estimateTable_->setWordWrap(false);
    saved_ = new SavedView;
    lower_ = new QTabWidget;
    lower_->addTab(sitesTable_, tr("Allocation sites in view"));
    lower_->addTab(saved_, tr("Saved for backward"));
    lower_->addTab(estimateTable_, tr("Estimate against measured"));
    stackPanel_ = new SnapshotStackPanel;
    lower_->addTab(stackPanel_, tr("Stack"));
    lower_->setTabVisible(lower_->indexOf(stackPanel_), false);
}

void MemoryView::connectControls() {
    connect(plot_->xAxis, qOverload<const QCPRange&, const QCPRange&>(&QCPAxis::rangeChanged), this,
            &MemoryView::keepRangeInRun);
    connect(narrow_, &QTimer::timeout, this, &MemoryView::fillSitesTable);
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, &MemoryView::fit);
    // Pixel geometry is known after the layout: place the peak's label then.
    connect(plot_, &QCustomPlot::afterLayout, this, &MemoryView::placePeakMarker);
    connect(fitButton_, &QToolButton::clicked, this, &MemoryView::fit);
    connect(modeBox_, &QComboBox::currentIndexChanged, this,
            [this](int index) { setMode(index == 0 ? Mode::Categories : Mode::Allocations); });
    connect(colourBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
        setColouring(index == 0 ? Colouring::ByCategory : Colouring::ByModule);
    });
    connect(detail_, &QSlider::valueChanged, this, [this](int value) {
        // Log scale from 1 byte to the largest allocation.
        setSizeFloor(value == 0 ? 0
                                : int64_t(std::llround(std::pow(double(largestAllocation()),
                                                                double(value) / kDetailSteps))));
    });
    connect(saved_, &SavedView::blockPicked, this, [this](const std::vector<uint32_t>& picked) {
        sitesTable_->clearSelection();
        showSelection(picked);
    });
    connect(sitesTable_, &QTableView::clicked, this,
            [this](const QModelIndex& index) { selectSite(index.row()); });
    // Deselecting the row (Ctrl+click) takes its highlight off the chart.
    connect(sitesTable_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        if (!sitesTable_->selectionModel()->hasSelection() && !siteSelection_.empty()) {
            selectSite(-1);
        }
    });
    connect(follow_, &QCheckBox::toggled, this, &MemoryView::updateFollowToolTip);
    connect(deviceBox_, &QComboBox::activated, this, [this](int index) {
        const int device = deviceBox_->itemData(index).toInt();
        if (snapshot_ && device != snapshot_->device) {
            Q_EMIT snapshotDeviceRequested(device);
        }
    });
}

MemoryView::~MemoryView() = default;

StackOrder MemoryView::order() const {
    return mode_ == Mode::Categories ? StackOrder::ByCategory : StackOrder::ByAllocation;
}

int64_t MemoryView::floorInUse() const {
    return mode_ == Mode::Allocations ? layout_.floorBytes : 0;
}

void MemoryView::showRun(const RunDocument* document) {
    const int id = document ? document->id : -1;
    const size_t events = document ? document->result.memory.size() : 0;
    const MemoryRunData* data = document ? document->memoryData.get() : nullptr;
    const bool live = document && document->live;
    if (id == shownId_ && events == shownEvents_ && data == shownData_ && live == shownLive_) {
        return;
    }
    shownId_ = id;
    shownEvents_ = events;
    shownLive_ = live;
    shownData_ = data;
    clearShown();
    snapshotRow_->setVisible(document && document->snapshot());
    trace_ = events ? &document->result.memory : nullptr;
    // A distributed run's ranks hold their memory at marks, not as a trace.
    const bool ranksOnly = rankMemory_->showRun(document) && !trace_;
    chartOrRanks_->setCurrentWidget(ranksOnly ? static_cast<QWidget*>(rankMemory_)
                                              : chartOrRanks_->widget(0));
    lower_->setVisible(!ranksOnly);
    // A snapshot's device without events keeps its device box: the way back.
    showSnapshot(document && document->snapshot() ? document : nullptr);
    if (!trace_) {
        showNoTrace(document);
        if (ranksOnly) {
            caption_->clear();  // the panel says what it shows
        }
        return;
    }
    setNoData(plot_, QString());
    const MemoryTrace& trace = *trace_;
    // Prepared with the run where its file was read (off the UI thread).
    if (document->memoryData && document->memoryData->isFor(document->result)) {
        data_ = document->memoryData;
    } else {
        data_ = prepareMemoryRunData(document->result);
    }
    index_ = &data_->index;
    const MemorySummary& summary = data_->summary;
    peakBytes_ = summary.peakBytes;
    peakTimeUs_ = summary.peakTimeUs;
    peakText_ =
        trace.phases.empty()  // a PyTorch snapshot: no phases to name
            ? tr("peak %1").arg(bytesText(summary.peakBytes))
            : tr("peak %1 (%2)").arg(bytesText(summary.peakBytes), phaseName(summary.peakPhase));
    drawCategories();
    drawReserved(*document);
    drawPhaseBands();
    createPeakMarker();
    fillEstimate(*document);
    showCaption(*document);
    clamping_ = true;
    plot_->xAxis->setRange(index_->startUs() / 1e3, index_->endUs() / 1e3);
    clamping_ = false;
    redraw(Draw::AtNextTurn);
    fillSitesTable();
    updateDetails();
    saved_->showRun(&document->result, index_, &data_->saved);
}

// Nothing of the run shown before is left: chart, bands, tables, hover, selection.
void MemoryView::clearShown() {
    plot_->clearGraphs();
    plot_->clearItems();
    stack_->setGraphs({});
    phaseBands_->setRanges({});
    peakLabel_ = nullptr;
    peakArrow_ = nullptr;
    smallerBottom_ = smallerTop_ = nullptr;
    reserved_ = nullptr;
    reservedUs_.clear();
    reservedBytes_.clear();
    reservedAtPeak_.reset();
    bands_->clearBands();
    highlight_->clearBands();
    selection_->clearBands();
    sites_->clear();
    siteMembers_.clear();
    siteSelection_.clear();
    hovered_ = -1;
    pinned_ = -1;
    details_->clear();
    estimate_->clear();
    releaseElsewhere(std::move(data_));  // often the last reference to a large index
    index_ = nullptr;
    layout_ = AllocationLayout{};
    layoutValid_ = false;
}

// A run without a memory trace, or a snapshot's device without events: why.
void MemoryView::showNoTrace(const RunDocument* document) {
    caption_->setText(
        document && document->snapshot()
            ? tr("Device %1 of this snapshot has no events in its trace (its segments "
                 "only); choose another device above.")
                  .arg(document->snapshot()->device)
            : missingRecordsText(document, Records::Memory));
    // Not the last run's axes: they would read as this run's memory.
    setNoData(plot_, missingRecordsNote(document, Records::Memory));
    plot_->replot();
    saved_->showRun(nullptr, nullptr);
}

// Phase bands along the time axis.
void MemoryView::drawPhaseBands() {
    std::vector<TimeTintBands::Range> ranges;
    ranges.reserve(trace_->phases.size());
    for (const auto& range : trace_->phases) {
        QColor colour = phaseColor(phaseName(range.phase));
        colour.setAlpha(30);
        ranges.push_back({range.startUs, range.endUs, colour});
    }
    phaseBands_->setRanges(std::move(ranges));
}

// The peak: an arrow to the very point, its label kept inside the chart.
void MemoryView::createPeakMarker() {
    peakArrow_ = new QCPItemLine(plot_);
    peakArrow_->setLayer("highlights");
    peakArrow_->setHead(QCPLineEnding::esSpikeArrow);
    peakArrow_->setPen(QPen(QColor(40, 40, 40), 1.2));
    peakLabel_ = new QCPItemText(plot_);
    peakLabel_->setLayer("highlights");
    peakLabel_->position->setType(QCPItemPosition::ptAxisRectRatio);
    peakLabel_->setText(peakText_);
    peakLabel_->setPadding(QMargins(3, 1, 3, 1));
    peakLabel_->setBrush(QColor(255, 255, 255, 210));
}

// Measured by category, at the peak and at most, and the estimator's
// prediction beside it. A recording PyTorch made (a snapshot) has no config
// of ours to estimate: its table shows what was measured, with no estimate
// column.
void MemoryView::fillEstimate(const RunDocument& document) {
    const MemorySummary& summary = data_->summary;
    const bool estimated = document.canEstimate();
    const MemoryPrediction prediction =
        estimated ? predictMemory(document.result.config) : MemoryPrediction{};
    QStringList headers{tr("category"), tr("at peak"), tr("max")};
    if (estimated) {
        headers << tr("estimate (max)");
    }
    estimate_->setHorizontalHeaderLabels(headers);
    auto row = [&](const QString& name, QStandardItem* atPeak, QStandardItem* max,
                   int64_t predicted) {
        QList<QStandardItem*> items{new QStandardItem(name), atPeak, max};
        if (estimated) {
            items << bytesItem(predicted);
        }
        estimate_->appendRow(items);
    };
    for (size_t c = 0; c < kMemoryCategories; ++c) {
        row(QString::fromUtf8(toString(MemoryCategory(c))), bytesItem(summary.atPeak[c]),
            bytesItem(summary.maxByCategory[c]), prediction.maxByCategory[c]);
    }
    row(tr("peak"), bytesItem(summary.peakBytes), new QStandardItem("–"), prediction.peakBytes);
    if (estimated) {
        row(tr("residual-stream tensor"), new QStandardItem("–"), new QStandardItem("–"),
            residualStreamBytes(document.result.config));
    }
    estimateTable_->resizeColumnsToContents();
}

void MemoryView::showCaption(const RunDocument& document) {
    const MemoryTrace& trace = *trace_;
    const MemorySummary& summary = data_->summary;
    // A PyTorch memory snapshot has no steps: its peak is a time alone.
    const QString peakWhere =
        trace.phases.empty()
            ? QString()
            : tr(" in %1 of step %2").arg(phaseName(summary.peakPhase)).arg(summary.peakStep);
    // A snapshot's events as memory_viz counts them (the CLI and the device
    // box say the same); a run's are its trace's allocs and frees. Either's
    // allocations are the blocks of the timeline.
    const std::shared_ptr<const SnapshotRecording> snapshot = document.sharedSnapshot();
    caption_->setText(
        tr("%1 events (%2 allocations) on %3; peak %4 at %5 ms%6. Wheel zooms and "
           "drag pans along time; hover shows an allocation; the table lists allocation sites "
           "alive in view (click one to see it on the chart).%7")
            .arg(qulonglong(snapshot ? snapshot->eventCount() : trace.size()))
            .arg(qulonglong(index_->size()))
            .arg(QString::fromStdString(trace.device), bytesText(summary.peakBytes))
            .arg(summary.peakTimeUs / 1e3, 0, 'f', 3)
            .arg(peakWhere, reservedCaption(document)));
}

void MemoryView::drawCategories() {
    // Every kCheckpoint events, the bytes of each category: a zoomed view
    // starts its series from the nearest one.
    const MemoryTrace& trace = *trace_;
    categoryCheckpoints_.clear();
    CategoryBytes active{};
    for (size_t i = 0; i < trace.size(); ++i) {
        if (i % kCheckpoint == 0) {
            categoryCheckpoints_.push_back(active);
        }
        active[trace.category[i]] += trace.bytes[i];
    }
    std::vector<QCPGraph*> graphs;
    for (size_t c = 0; c < kMemoryCategories; ++c) {
        QCPGraph* graph = new CategoryGraph(plot_->xAxis, plot_->yAxis);
        graphs.push_back(graph);
        graph->setName(toString(MemoryCategory(c)));
        graph->setLineStyle(QCPGraph::lsStepLeft);
        const QColor color = memoryColor(MemoryCategory(c));
        graph->setPen(QPen(color.darker(120)));
        graph->setAntialiased(false);  // axis-parallel steps: nothing to smooth, much to pay
        graph->setAntialiasedFill(false);
        // Opaque, as the old translucent fill looked on white.
        graph->setBrush(QColor::fromRgbF(0.333f + 0.667f * color.redF(),
                                         0.333f + 0.667f * color.greenF(),
                                         0.333f + 0.667f * color.blueF()));
    }
    // The fills in one pass under the lines; the lowest category's line on top.
    stack_->setGraphs(graphs);
    for (auto graph = graphs.rbegin(); graph != graphs.rend(); ++graph) {
        (*graph)->setLayer("categories");
    }
    sampleCategories(trace.timeUs.front(), trace.timeUs.back());
}

void MemoryView::sampleCategories(double fromUs, double toUs) {
    // Decimate what is in view: per time bucket keep the sample with the most
    // bytes alive, so no peak is lost; then stack categories bottom to top.
    const MemoryTrace& trace = *trace_;
    const auto& times = trace.timeUs;
    size_t first = size_t(std::upper_bound(times.begin(), times.end(), fromUs) - times.begin());
    first = first > 0 ? first - 1 : 0;  // the state holding at the left edge
    const size_t last = size_t(std::upper_bound(times.begin(), times.end(), toUs) - times.begin());
    const size_t count = std::max(first + 1, last) - first;
    const double start = times[first];
    const double span = std::max(1e-3, times[std::max(first + 1, last) - 1] - start);
    const size_t buckets = std::min<size_t>(kMaxPoints, count);
    std::vector<CategoryBytes> samples(buckets, CategoryBytes{});
    std::vector<double> sampleTimes(buckets, -1);
    std::vector<int64_t> best(buckets, INT64_MIN);
    CategoryBytes active = categoryCheckpoints_[first / kCheckpoint];
    for (size_t i = first / kCheckpoint * kCheckpoint; i < first; ++i) {
        active[trace.category[i]] += trace.bytes[i];
    }
    int64_t total = 0;
    for (const int64_t bytes : active) {
        total += bytes;
    }
    for (size_t i = first; i < first + count; ++i) {
        active[trace.category[i]] += trace.bytes[i];
        total += trace.bytes[i];  // kept as it goes: summing the categories was most of the loop
        const size_t bucket =
            std::min(buckets - 1, size_t((times[i] - start) / span * double(buckets)));
        if (total > best[bucket]) {
            best[bucket] = total;
            samples[bucket] = active;
            sampleTimes[bucket] = times[i];
        }
    }
    QVector<double> keys;
    std::vector<QVector<double>> stacked(kMemoryCategories);
    for (size_t b = 0; b < buckets; ++b) {
        if (sampleTimes[b] < 0) {
            continue;  // an empty bucket: the step line carries the last value
        }
        keys << sampleTimes[b] / 1e3;
        double sum = 0;
        for (size_t c = 0; c < kMemoryCategories; ++c) {
            sum += double(samples[b][c]) / kMiB;
            stacked[c] << sum;
        }
    }
    if (last < times.size() && !keys.isEmpty()) {
        keys << times[last] / 1e3;  // carry the line to the right edge
        for (size_t c = 0; c < kMemoryCategories; ++c) {
            stacked[c] << stacked[c].back();
        }
    }
    for (size_t c = 0; c < kMemoryCategories && int(c) < plot_->graphCount(); ++c) {
        plot_->graph(int(c))->setData(keys, stacked[c], /*alreadySorted=*/true);
    }
}

QColor MemoryView::bandColour(size_t allocation) const {
    const MemoryAllocation& a = index_->allocations()[allocation];
    QColor base;
    if (colouring_ == Colouring::ByCategory) {
        base = memoryColor(a.category);
    } else {
        const auto rank = moduleRank_.find(moduleKind(index_->path(allocation)));
        base = rank != moduleRank_.end() && rank->second < kModuleColours
                   ? moduleColor(rank->second)
                   : kOtherModules;
    }
    // Neighbours of one colour stay apart: a small change of lightness each.
    return base.lighter(100 + int((allocation * 2654435761u) % 5) * 9);
}

void MemoryView::drawAllocations() {
    if (!layoutValid_) {
        layout_ = index_->layout(requestedFloor_, kMaxBands, kMaxVertices);
        layoutValid_ = true;
    }
    // Kinds of module ranked by the bytes of their bands: the largest get
    // the distinct colours.
    std::map<std::string, int64_t> bytes;
    for (const uint32_t a : layout_.shown) {
        bytes[moduleKind(index_->path(a))] += index_->allocations()[a].bytes;
    }
    std::vector<std::pair<int64_t, std::string>> kinds;
    for (const auto& [kind, total] : bytes) {
        kinds.emplace_back(total, kind);
    }
    std::sort(kinds.rbegin(), kinds.rend());
    moduleRank_.clear();
    for (size_t k = 0; k < kinds.size(); ++k) {
        moduleRank_[kinds[k].second] = std::min(k, kModuleColours);
    }
    std::vector<AllocationBands::Band> bands;
    bands.reserve(layout_.shown.size());
    for (size_t b = 0; b < layout_.shown.size(); ++b) {
        const uint32_t a = layout_.shown[b];
        const size_t end = b + 1 < layout_.firstVertex.size() ? layout_.firstVertex[b + 1]
                                                              : layout_.vertices.size();
        bands.push_back({a, index_->allocations()[a].bytes, index_->endOf(a),
                         layout_.firstVertex[b], end - layout_.firstVertex[b], bandColour(a)});
    }
    bands_->setBands(std::move(bands), layout_.vertices);
    // The smaller allocations, summed: a grey band on top of the drawn ones.
    smallerBottom_ = plot_->addGraph();
    smallerTop_ = plot_->addGraph();
    smallerBottom_->removeFromLegend();
    smallerBottom_->setName(tr("smaller allocations, bottom"));
    smallerTop_->setName(tr("smaller allocations"));
    for (QCPGraph* graph : {smallerBottom_, smallerTop_}) {
        graph->setLineStyle(QCPGraph::lsStepLeft);
        graph->setPen(QPen(kSmallerColour.darker(130)));
    }
    smallerBottom_->setPen(Qt::NoPen);
    smallerTop_->setBrush(kSmallerColour);
    smallerTop_->setChannelFillGraph(smallerBottom_);
    const QCPRange x = plot_->xAxis->range();
    sampleSmaller(x.lower * 1e3, x.upper * 1e3);
}

void MemoryView::sampleSmaller(double fromUs, double toUs) {
    if (!smallerTop_ || !index_) {
        return;
    }
    const SmallerBand band = index_->smallerBand(fromUs, toUs, layout_.floorBytes, kMaxPoints);
    QVector<double> keys;
    QVector<double> bottom;
    QVector<double> top;
    for (size_t i = 0; i < band.keysUs.size(); ++i) {
        keys << band.keysUs[i] / 1e3;
        bottom << double(band.shownBytes[i]) / kMiB;
        top << double(band.totalBytes[i]) / kMiB;
    }
    smallerBottom_->setData(keys, bottom, true);
    smallerTop_->setData(keys, top, true);
}

void MemoryView::redraw(Draw when) {
    if (!index_) {
        return;
    }
    if (smallerBottom_) {
        plot_->removeGraph(smallerTop_);
        plot_->removeGraph(smallerBottom_);
        smallerBottom_ = smallerTop_ = nullptr;
    }
    for (int i = plot_->plottableCount() - 1; i >= 0; --i) {
        // The module legend's swatches: plottables without bands.
        auto* swatch = qobject_cast<AllocationBands*>(plot_->plottable(i));
        if (swatch && swatch != bands_ && swatch != highlight_ && swatch != selection_) {
            plot_->removePlottable(swatch);
        }
    }
    const bool categories = mode_ == Mode::Categories;
    for (int c = 0; c < int(kMemoryCategories) && c < plot_->graphCount(); ++c) {
        QCPGraph* graph = plot_->graph(c);
        graph->setVisible(categories);
        if (categories || colouring_ == Colouring::ByCategory) {
            graph->addToLegend();
        } else {
            graph->removeFromLegend();
        }
    }
    bands_->setVisible(!categories);
    if (categories) {
        bands_->clearBands();
    } else {
        drawAllocations();
        if (colouring_ == Colouring::ByModule) {
            // A swatch per kind of module, the most bytes first, then the rest.
            std::vector<std::pair<size_t, std::string>> kinds;
            for (const auto& [kind, rank] : moduleRank_) {
                kinds.emplace_back(rank, kind);
            }
            std::sort(kinds.begin(), kinds.end());
            for (const auto& [rank, kind] : kinds) {
                auto* swatch = new AllocationBands(plot_->xAxis, plot_->yAxis);
                swatch->setName(rank == kModuleColours ? tr("other modules")
                                : kind.empty()         ? tr("(outside modules)")
                                                       : QString::fromStdString(kind));
                swatch->setBrush(rank == kModuleColours ? kOtherModules : moduleColor(rank));
                if (rank == kModuleColours) {
                    break;  // one swatch for all the rest
                }
            }
        }
    }
    colourBox_->setEnabled(!categories);
    detail_->setEnabled(!categories);
    updateDetailLabel();
    updateHighlights();
    fitValueAxis();
    placePeakMarker();
    plot_->replot(when == Draw::AtNextTurn ? QCustomPlot::rpQueuedReplot
                                           : QCustomPlot::rpRefreshHint);
}

void MemoryView::setMode(Mode mode) {
    if (mode == mode_) {
        return;
    }
    mode_ = mode;
    const QSignalBlocker block(modeBox_);
    modeBox_->setCurrentIndex(mode == Mode::Categories ? 0 : 1);
    hovered_ = -1;
    highlight_->clearBands();
    redraw();
}

void MemoryView::setColouring(Colouring colouring) {
    if (colouring == colouring_) {
        return;
    }
    colouring_ = colouring;
    const QSignalBlocker block(colourBox_);
    colourBox_->setCurrentIndex(colouring == Colouring::ByCategory ? 0 : 1);
    redraw();
}

int64_t MemoryView::largestAllocation() const {
    int64_t largest = 2;
    if (index_) {
        for (const MemoryAllocation& a : index_->allocations()) {
            largest = std::max(largest, a.bytes);
        }
    }
    return largest;
}

void MemoryView::setSizeFloor(int64_t bytes) {
    requestedFloor_ = std::max<int64_t>(0, bytes);
    {
        const QSignalBlocker block(detail_);  // the slider shows the floor asked for
        detail_->setValue(
            requestedFloor_ <= 1
                ? 0
                : int(std::lround(std::log(double(requestedFloor_)) /
                                  std::log(double(largestAllocation())) * kDetailSteps)));
    }
    layoutValid_ = false;
    hovered_ = -1;
    highlight_->clearBands();
    if (mode_ == Mode::Allocations) {
        redraw();
    }
}

int64_t MemoryView::sizeFloor() const {
    return floorInUse();
}

size_t MemoryView::drawnBandCount() const {
    return mode_ == Mode::Allocations ? layout_.shown.size() : 0;
}

size_t MemoryView::hiddenAllocationCount() const {
    return mode_ == Mode::Allocations ? layout_.hiddenCount : 0;
}

void MemoryView::updateDetailLabel() {
    if (mode_ != Mode::Allocations || !index_) {
        detailLabel_->setText(QString());
        return;
    }
    detailLabel_->setText(layout_.hiddenCount == 0
                              ? tr("all %1 drawn").arg(qulonglong(layout_.shown.size()))
                              : tr("%1 drawn ≥ %2, %3 in grey")
                                    .arg(qulonglong(layout_.shown.size()))
                                    .arg(bytesText(layout_.floorBytes))
                                    .arg(qulonglong(layout_.hiddenCount)));
}

bool MemoryView::bandExtent(const MemoryAllocation& allocation, double timeUs, int64_t* bottom,
                            int64_t* top) const {
    if (!index_ || index_->allocations().empty() || &allocation < &index_->allocations().front() ||
        &allocation > &index_->allocations().back()) {
        return false;
    }
    const auto a = size_t(&allocation - &index_->allocations().front());
    if (mode_ == Mode::Allocations) {
        return bands_->extentAt(uint32_t(a), timeUs, bottom, top);  // what is drawn
    }
    for (const MemoryIndex::Placed& placed : index_->stackAt(timeUs, order(), 0)) {
        if (placed.allocation == a) {
            *bottom = placed.bottom;
            *top = placed.bottom + allocation.bytes;
            return true;
        }
    }
    return false;
}

bool MemoryView::smallerBandExtent(double timeUs, int64_t* bottom, int64_t* top) const {
    if (mode_ != Mode::Allocations || !index_) {
        return false;
    }
    int64_t shown = 0;
    int64_t hidden = 0;
    for (const uint32_t a : index_->aliveAt(timeUs)) {
        (index_->allocations()[a].bytes >= layout_.floorBytes ? shown : hidden) +=
            index_->allocations()[a].bytes;
    }
    *bottom = shown;
    *top = shown + hidden;
    return true;
}

int MemoryView::plottedPoints() const {
    return plot_->graphCount() ? plot_->graph(0)->dataCount() : 0;
}

// ---- reserved memory ---------------------------------------------------------

QToolButton* MemoryView::makeRulesButton() {
    auto* button = new QToolButton;
    button->setText(tr("Category rules…"));
    button->setToolTip(
        tr("Your own categories for PyTorch memory snapshots: a regex on a frame's function "
           "name or file names the category, before StepScope's own rules."));
    connect(button, &QToolButton::clicked, this, &MemoryView::categoryRulesRequested);
    return button;
}

void MemoryView::drawReserved(const RunDocument& document) {
    const MemoryTrace& trace = *trace_;
    if (const SnapshotRecording* snapshot = document.snapshot()) {
        reservedUs_ = snapshot->reserved.timeUs;
        reservedBytes_ = snapshot->reserved.bytes;
    } else if (std::any_of(trace.reserved.begin(), trace.reserved.end(),
                           [](int64_t bytes) { return bytes > 0; })) {
        // A CUDA run: the allocator's total after each event, kept where it changes.
        for (size_t i = 0; i < trace.size() && i < trace.reserved.size(); ++i) {
            if (reservedBytes_.empty() || trace.reserved[i] != reservedBytes_.back()) {
                reservedUs_.push_back(trace.timeUs[i]);
                reservedBytes_.push_back(trace.reserved[i]);
            }
        }
    }
    if (reservedUs_.empty()) {
        return;
    }
    // Reserved just after the event that first reaches the allocated peak.
    int64_t total = 0;
    for (size_t i = 0; i < trace.size() && i < trace.reserved.size(); ++i) {
        total += trace.bytes[i];
        if (total == data_->summary.peakBytes) {
            reservedAtPeak_ = trace.reserved[i];
            break;
        }
    }
    QVector<double> keys;
    QVector<double> values;
    for (size_t i = 0; i < reservedUs_.size(); ++i) {
        keys << reservedUs_[i] / 1e3;
        values << double(reservedBytes_[i]) / kMiB;
    }
    keys << std::max(index_->endUs(), reservedUs_.back()) / 1e3;  // on to the right edge
    values << values.back();
    reserved_ = plot_->addGraph();
    reserved_->setName(tr("reserved (segments)"));
    reserved_->setLayer("main");  // not with the outlines: they redraw at every hover
    reserved_->setLineStyle(QCPGraph::lsStepLeft);
    reserved_->setPen(QPen(QColor(120, 20, 20), 1.6, Qt::DashLine));
    reserved_->setData(keys, values, /*alreadySorted=*/true);
}

std::optional<int64_t> MemoryView::reservedAt(double timeUs) const {
    const auto after = std::upper_bound(reservedUs_.begin(), reservedUs_.end(), timeUs);
    if (after == reservedUs_.begin()) {
        return std::nullopt;
    }
    return reservedBytes_[size_t(after - reservedUs_.begin()) - 1];
}

int64_t MemoryView::reservedMaxBetween(double fromUs, double toUs) const {
    int64_t highest = reservedAt(fromUs).value_or(0);
    for (size_t i = 0; i < reservedUs_.size(); ++i) {
        if (reservedUs_[i] > fromUs && reservedUs_[i] <= toUs) {
            highest = std::max(highest, reservedBytes_[i]);
        }
    }
    return highest;
}

QString MemoryView::reservedCaption(const RunDocument& document) const {
    if (reservedUs_.empty()) {
        return document.snapshot()
                   ? tr(" Reserved memory: not shown, for this snapshot's trace has no segment "
                        "events (segment_alloc, segment_free) to follow it by.")
                   : QString();
    }
    const int64_t peak = data_->summary.peakBytes;
    const int64_t highest = *std::max_element(reservedBytes_.begin(), reservedBytes_.end());
    QString text =
        tr(" Reserved (dashed, the allocator's segments): peak %1.").arg(bytesText(highest));
    if (reservedAtPeak_) {
        const int64_t gap = *reservedAtPeak_ - peak;
        text += tr(" At the allocated peak, %1 reserved: ").arg(bytesText(*reservedAtPeak_));
        // Less reserved than allocated: the trace's segment events miss some
        // segments (a cut trace, a hand-made file); no fragmentation to state.
        text += gap >= 0
                    ? tr("%1 more than allocated (fragmentation, %2% of reserved).")
                          .arg(bytesText(gap))
                          .arg(*reservedAtPeak_ > 0 ? 100.0 * double(gap) / double(*reservedAtPeak_)
                                                    : 0.0,
                               0, 'f', 1)
                    : tr("%1 less than allocated, so the trace's segment events miss "
                         "some of its segments.")
                          .arg(bytesText(-gap));
    }
    return text;
}

// ---- time range -------------------------------------------------------------

void MemoryView::keepRangeInRun(const QCPRange& range, const QCPRange& old) {
    if (clamping_ || !index_) {
        return;
    }
    const QCPRange run(index_->startUs() / 1e3,
                       std::max(index_->endUs(), index_->startUs() + 1) / 1e3);
    QCPRange kept = range;
    if (kept.size() >= run.size()) {
        kept = run;
    } else if (std::abs(kept.size() - old.size()) <= 1e-9 * run.size()) {
        // A pan: the same width, moved back inside the run.
        if (kept.lower < run.lower) {
            kept += run.lower - kept.lower;
        } else if (kept.upper > run.upper) {
            kept -= kept.upper - run.upper;
        }
    } else {
        kept.lower = std::max(kept.lower, run.lower);
        kept.upper = std::min(kept.upper, run.upper);
        if (kept.upper - kept.lower < 1e-3) {  // narrower than a microsecond: keep the old one
            kept = old;
        }
    }
    if (kept != range) {
        clamping_ = true;
        plot_->xAxis->setRange(kept);
        clamping_ = false;
    }
    const QCPRange x = plot_->xAxis->range();
    if (mode_ == Mode::Categories) {
        sampleCategories(x.lower * 1e3, x.upper * 1e3);
        if (hovered_ >= 0 || pinned_ >= 0 || !siteSelection_.empty()) {
            updateHighlights();  // their outlines are worked out for what shows
        }
    } else {
        sampleSmaller(x.lower * 1e3, x.upper * 1e3);
    }
    fitValueAxis();
    placePeakMarker();
    narrow_->start();
}

void MemoryView::fitValueAxis() {
    if (!index_) {
        return;
    }
    const QCPRange x = plot_->xAxis->range();
    // The reserved line too, which is above what is allocated.
    const double peak =
        double(std::max<int64_t>({index_->maxTotal(x.lower * 1e3, x.upper * 1e3),
                                  reservedMaxBetween(x.lower * 1e3, x.upper * 1e3), int64_t(1)}));
    // Room above the peak for its label and arrow: 15% or kPeakRoom pixels.
    const double height = plot_->axisRect()->height();
    // At most a quarter: a chart still being laid out (a few pixels tall)
    // would otherwise scale the axis to twice the peak.
    // A snapshot's record_function strips along the top take their rows more.
    const double strips = annotations_->stripsHeight();
    // Never past 0.9: strips taller than a short chart would flip the axis.
    const double room = height > 0 ? std::clamp((kPeakRoom + strips) / height, 0.13,
                                                std::min(0.25 + strips / height, 0.9))
                                   : 0.13;
    plot_->yAxis->setRange(0, peak / kMiB / (1 - room));
}

void MemoryView::placePeakMarker() {
    if (!peakLabel_ || !peakArrow_) {
        return;
    }
    const QCPRange x = plot_->xAxis->range();
    const QCPRange y = plot_->yAxis->range();
    const double t = peakTimeUs_ / 1e3;
    const double v = double(peakBytes_) / kMiB;
    const bool inView = t >= x.lower && t <= x.upper && v <= y.upper;
    peakLabel_->setVisible(inView);
    peakArrow_->setVisible(inView);
    if (!inView) {
        return;
    }
    // The arrow ends exactly on the peak; the label sits above it, aligned
    // by where the peak is so that it never runs past a side.
    const double xr = (t - x.lower) / std::max(x.size(), 1e-12);
    Qt::Alignment horizontal = Qt::AlignHCenter;
    QCPItemAnchor* from = peakLabel_->bottom;
    if (xr < 0.2) {
        horizontal = Qt::AlignLeft;
        from = peakLabel_->bottomLeft;
    } else if (xr > 0.8) {
        horizontal = Qt::AlignRight;
        from = peakLabel_->bottomRight;
    }
    peakArrow_->end->setCoords(t, v);
    peakLabel_->setPositionAlignment(horizontal | Qt::AlignBottom);
    const double px = plot_->xAxis->coordToPixel(t);
    const double py = plot_->yAxis->coordToPixel(v);
    const QRect area = plot_->axisRect()->rect();
    peakLabel_->position->setPixelPosition(
        QPointF(px, std::max(area.top() + 20.0 + annotations_->stripsHeight(), py - 22)));
    peakArrow_->start->setParentAnchor(from);
}

void MemoryView::setTimeRange(double startUs, double endUs) {
    if (endUs > startUs) {
        plot_->xAxis->setRange(startUs / 1e3, endUs / 1e3);
        plot_->replot();
        fillSitesTable();
    }
}

std::pair<double, double> MemoryView::timeRange() const {
    return {plot_->xAxis->range().lower * 1e3, plot_->xAxis->range().upper * 1e3};
}

void MemoryView::fit() {
    if (!index_) {
        return;
    }
    plot_->xAxis->setRange(index_->startUs() / 1e3,
                           std::max(index_->endUs(), index_->startUs() + 1) / 1e3);
    plot_->replot();
    fillSitesTable();
}

bool MemoryView::followsTimeline() const {
    return follow_->isChecked();
}

void MemoryView::setFollowsTimeline(bool follow) {
    follow_->setChecked(follow);
}

void MemoryView::updateFollowToolTip() {
    follow_->setToolTip(follow_->isChecked()
                            ? tr("Linked: zooming the Timeline (of the same run) zooms this chart")
                            : tr("Not linked: this chart zooms on its own"));
}

// ---- sites and highlights ---------------------------------------------------

void MemoryView::fillSitesTable() {
    // Regrouping for a new range keeps the chosen site highlighted.
    const QSignalBlocker keepSelection(sitesTable_->selectionModel());
    sites_->clear();
    siteMembers_.clear();
    sites_->setHorizontalHeaderLabels({tr("largest"), tr("category"), tr("phase"), tr("steps"),
                                       tr("module /\nnode"), tr("op"), tr("count"), tr("total"),
                                       tr("sizes"), tr("mean life\nms")});
    if (!index_) {
        return;
    }
    const auto [lo, hi] = timeRange();
    // The whole run's, as shown first, were grouped with the run.
    std::vector<AllocationSite> grouped;
    const bool prepared = lo == data_->sitesFromUs && hi == data_->sitesToUs;
    if (!prepared) {
        grouped = groupSites(*index_, index_->aliveBetween(lo, hi));
    }
    const std::vector<AllocationSite>& sites = prepared ? data_->sites : grouped;
    for (size_t s = 0; s < sites.size() && s < size_t(kMaxSiteRows); ++s) {
        const AllocationSite& site = sites[s];
        auto* steps = new QStandardItem(QString::fromStdString(formatSteps(site.steps)));
        steps->setToolTip(steps->text());
        auto* path = new QStandardItem(site.path.empty() ? tr("(outside modules)")
                                                         : QString::fromStdString(site.path));
        path->setToolTip(path->text());
        sites_->appendRow({bytesItem(site.largest), new QStandardItem(toString(site.category)),
                           new QStandardItem(phaseName(site.phase)), steps, path,
                           new QStandardItem(QString::fromStdString(site.op)),
                           numberItem(qlonglong(site.allocations.size())),
                           bytesItem(site.totalBytes), numberItem(qlonglong(site.sizes)),
                           new QStandardItem(QString::number(site.meanLifetimeUs / 1e3, 'f', 3))});
        siteMembers_.push_back(site.allocations);
    }
}

void MemoryView::selectSite(int row) {
    const bool inTable = row >= 0 && size_t(row) < siteMembers_.size();
    if (inTable) {
        sitesTable_->selectRow(row);
    }
    showSelection(inTable ? siteMembers_[size_t(row)] : std::vector<uint32_t>{});
}

void MemoryView::showSelection(const std::vector<uint32_t>& allocations) {
    siteSelection_ = allocations;
    updateHighlights();
    plot_->replot();
}

std::vector<const MemoryAllocation*> MemoryView::highlighted() const {
    std::vector<const MemoryAllocation*> out;
    for (const uint32_t a : siteSelection_) {
        out.push_back(&index_->allocations()[a]);
    }
    return out;
}

void MemoryView::updateHighlights() {
    highlight_->clearBands();
    selection_->clearBands();
    for (int i = plot_->itemCount() - 1; i >= 0; --i) {
        if (plot_->item(i)->property("selectionStrip").toBool()) {
            plot_->removeItem(i);
        }
    }
    if (!index_) {
        return;
    }
    const auto bandFor = [&](uint32_t a) {
        if (mode_ == Mode::Allocations) {  // drawn already: its corners are laid out
            const auto it = std::lower_bound(layout_.shown.begin(), layout_.shown.end(), a);
            if (it != layout_.shown.end() && *it == a) {
                const auto b = size_t(it - layout_.shown.begin());
                const size_t end = b + 1 < layout_.firstVertex.size() ? layout_.firstVertex[b + 1]
                                                                      : layout_.vertices.size();
                return std::vector<BandVertex>(
                    layout_.vertices.begin() + long(layout_.firstVertex[b]),
                    layout_.vertices.begin() + long(end));
            }
            return std::vector<BandVertex>{};  // in the grey band
        }
        const QCPRange x = plot_->xAxis->range();  // where it shows: redone as that changes
        return index_->bandOf(a, order(), floorInUse(), x.lower * 1e3, x.upper * 1e3,
                              size_t(std::max(plot_->axisRect()->width(), 1)));
    };
    // Outlined dark: the band under the mouse and the one clicked.
    for (const int64_t outlined : {hovered_, pinned_ != hovered_ ? pinned_ : int64_t(-1)}) {
        if (outlined >= 0) {
            const auto a = uint32_t(outlined);
            highlight_->addBand(a, index_->allocations()[a].bytes, index_->endOf(a), bandFor(a),
                                bandColour(a).lighter(135));
        }
    }
    QColor fill = kSelectionColour;
    fill.setAlpha(70);
    for (size_t k = 0; k < siteSelection_.size() && k < size_t(kMaxHighlighted); ++k) {
        const uint32_t a = siteSelection_[k];
        selection_->addBand(a, index_->allocations()[a].bytes, index_->endOf(a), bandFor(a), fill);
        // A mark along the time axis too: small allocations are thin bands.
        auto* strip = new QCPItemRect(plot_);
        strip->setLayer("highlights");
        strip->setProperty("selectionStrip", true);
        strip->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
        strip->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
        // Along the top edge, in the room above the peak (under a snapshot's
        // record_function strips): the bottom edge holds the parameters'
        // band, there from start to end.
        const double below =
            annotations_->stripsHeight() / std::max(1, plot_->axisRect()->height());
        strip->topLeft->setCoords(index_->allocations()[a].startUs / 1e3, below);
        strip->bottomRight->setCoords(index_->endOf(a) / 1e3, below + 0.015);
        strip->setPen(Qt::NoPen);
        strip->setBrush(kSelectionColour);
    }
}

const MemoryAllocation* MemoryView::allocationAt(double timeUs, double bytes) const {
    if (!index_) {
        return nullptr;
    }
    const int64_t a = index_->allocationAt(timeUs, bytes, order(), floorInUse());
    return a >= 0 ? &index_->allocations()[size_t(a)] : nullptr;
}

const MemoryAllocation* MemoryView::hovered() const {
    return hovered_ >= 0 ? &index_->allocations()[size_t(hovered_)] : nullptr;
}

QString MemoryView::caption() const {
    return caption_->text();
}

QString MemoryView::describe(const MemoryAllocation& a) const {
    if (snapshot_) {
        return describeSnapshot(a);
    }
    const double end = a.endUs >= 0 ? a.endUs : (trace_ ? trace_->timeUs.back() : a.startUs);
    QString text = tr("%1 · %2 · %3 of step %4\nmade at %5 ms, alive %6 ms%7")
                       .arg(bytesText(a.bytes), toString(a.category), phaseName(a.phase))
                       .arg(a.step)
                       .arg(a.startUs / 1e3, 0, 'f', 3)
                       .arg((end - a.startUs) / 1e3, 0, 'f', 3)
                       .arg(a.endUs >= 0 ? QString() : tr(", still alive at the end"));
    // The stack as memory_viz shows one: a frame a line, outermost first.
    const QList<StackFrame> stack = allocationStack(trace_->name(a.path), trace_->name(a.op));
    if (stack.isEmpty()) {
        text += tr("\nwhere: (not recorded)");
    }
    for (const StackFrame& frame : stack) {
        text += "\n  " + frameKindName(frame.kind) + " " + frame.name;
    }
    return text;
}

QString MemoryView::detailsText() const {
    return details_->text();
}

void MemoryView::updateDetails() {
    const auto line = [this](int64_t a, const QString& lead) {
        const MemoryAllocation& allocation = index_->allocations()[size_t(a)];
        const QString first = describe(allocation).section('\n', 0, 1).replace('\n', " · ");
        return lead + first + "\n" +
               stackLine(allocationStack(index_->path(size_t(a)), index_->op(size_t(a))));
    };
    if (pinned_ >= 0 && index_) {
        details_->setText(line(pinned_, tr("Selected (click elsewhere to let go): ")));
    } else if (hovered_ >= 0 && index_) {
        details_->setText(line(hovered_, QString()));
    } else if (details_->text().isEmpty() || pinned_ < 0) {
        details_->setText(index_ ? tr("Hover over a band for its allocation; click to keep "
                                      "its details here and select its site.")
                                 : QString());
    }
}

int MemoryView::siteRowOf(uint32_t allocation) const {
    for (size_t row = 0; row < siteMembers_.size(); ++row) {
        const auto& members = siteMembers_[row];
        if (std::find(members.begin(), members.end(), allocation) != members.end()) {
            return int(row);
        }
    }
    return -1;
}

int64_t MemoryView::allocationIndexAt(const QPointF& position, double* time, double* bytes) const {
    const double timeUs = plot_->xAxis->pixelToCoord(position.x()) * 1e3;
    const double value = plot_->yAxis->pixelToCoord(position.y()) * kMiB;
    if (time) {
        *time = timeUs;
    }
    if (bytes) {
        *bytes = value;
    }
    const MemoryAllocation* allocation = allocationAt(timeUs, value);
    return allocation ? int64_t(allocation - &index_->allocations().front()) : -1;
}

void MemoryView::hoverAt(const QPointF& position) {
    if (!index_) {
        return;
    }
    double time = 0;
    double bytes = 0;
    const int64_t hit = allocationIndexAt(position, &time, &bytes);
    if (hit != hovered_) {
        hovered_ = hit;
        updateHighlights();
        plot_->layer("highlights")->replot();
    }
    updateDetails();
    if (hit < 0 && pinned_ < 0 && mode_ == Mode::Allocations && bytes >= 0) {
        int64_t bottom = 0;
        int64_t top = 0;
        smallerBandExtent(time, &bottom, &top);
        if (bytes >= double(bottom) && bytes < double(top)) {
            details_->setText(tr("smaller allocations (under %1): %2 in all")
                                  .arg(bytesText(layout_.floorBytes), bytesText(top - bottom)));
        }
    }
}

void MemoryView::clickAt(const QPointF& position) {
    if (!index_) {
        return;
    }
    pinned_ = allocationIndexAt(position);
    if (pinned_ < 0) {
        sitesTable_->clearSelection();
        showSelection({});
    } else {
        // Its site, as a click on the table's row selects it; one allocation
        // alone where the table (narrowed to the view, or cut short) lacks it.
        const int row = siteRowOf(uint32_t(pinned_));
        if (row >= 0) {
            lower_->setCurrentWidget(sitesTable_);
            selectSite(row);
            sitesTable_->scrollTo(sites_->index(row, 0));
        } else {
            sitesTable_->clearSelection();
            showSelection({uint32_t(pinned_)});
        }
    }
    updateDetails();
    showPinnedStack();
}

const MemoryAllocation* MemoryView::pinned() const {
    return pinned_ >= 0 && index_ ? &index_->allocations()[size_t(pinned_)] : nullptr;
}

QList<QRectF> MemoryView::lifetimeMarks() const {
    QList<QRectF> marks;
    for (int i = 0; i < plot_->itemCount(); ++i) {
        if (const auto* strip = qobject_cast<QCPItemRect*>(plot_->item(i));
            strip && strip->property("selectionStrip").toBool()) {
            marks << QRectF(strip->topLeft->pixelPosition(), strip->bottomRight->pixelPosition())
                         .normalized();
        }
    }
    return marks;
}

bool MemoryView::eventFilter(QObject* watched, QEvent* event) {
    if (watched != plot_ || !trace_) {
        return RunView::eventFilter(watched, event);
    }
    // Only a mouse event is one: cast after its type says so (UBSan caught a
    // QChildEvent cast here at the app's start).
    const auto* mouse = event->type() == QEvent::MouseMove ||
                                event->type() == QEvent::MouseButtonPress ||
                                event->type() == QEvent::MouseButtonRelease
                            ? static_cast<const QMouseEvent*>(event)
                            : nullptr;
    if (event->type() == QEvent::MouseMove) {
        hoverAt(mouse->position());
        if (const MemoryAllocation* allocation = hovered()) {
            QToolTip::showText(mouse->globalPosition().toPoint(), describe(*allocation), plot_);
        } else {
            QToolTip::hideText();
        }
    } else if (event->type() == QEvent::MouseButtonPress && mouse->button() == Qt::LeftButton) {
        pressedAt_ = mouse->position().toPoint();
    } else if (event->type() == QEvent::MouseButtonRelease && mouse->button() == Qt::LeftButton &&
               (mouse->position().toPoint() - pressedAt_).manhattanLength() <= 3) {
        clickAt(mouse->position());  // a drag pans; only a click selects
    } else if (event->type() == QEvent::Leave && hovered_ >= 0) {
        hovered_ = -1;
        updateDetails();
        updateHighlights();
        plot_->layer("highlights")->replot();
    }
    return RunView::eventFilter(watched, event);
}

// ---- a PyTorch memory snapshot's own parts --------------------------------

void MemoryView::showSnapshot(const RunDocument* document) {
    snapshot_ = document ? document->sharedSnapshot() : nullptr;
    const QSignalBlocker block(deviceBox_);
    deviceBox_->clear();
    if (snapshot_) {
        for (const auto& [device, events] : snapshot_->devices) {
            deviceBox_->addItem(tr("device %1 (%2 events)").arg(device).arg(qulonglong(events)),
                                device);
            if (device == snapshot_->device) {
                deviceBox_->setCurrentIndex(deviceBox_->count() - 1);
            }
        }
    }
    deviceBox_->setVisible(deviceBox_->count() > 1);
    std::vector<AnnotationBands::Range> ranges;
    if (snapshot_) {
        ranges.reserve(snapshot_->bands.size());
        for (const TimelineBand& band : snapshot_->bands) {
            ranges.push_back({snapshot_->bandName(band), band.startUs, band.endUs, band.depth});
        }
    }
    annotations_->setRanges(std::move(ranges));
    lower_->setTabVisible(lower_->indexOf(stackPanel_), snapshot_ != nullptr);
    stackPanel_->clear();
}

QString MemoryView::describeSnapshot(const MemoryAllocation& a) const {
    const bool freed = a.endUs >= 0;
    const double end = freed ? a.endUs : (trace_ ? trace_->timeUs.back() : a.startUs);
    QString text = tr("%1 · %2\nmade at %3 ms, %4 alive %5 ms")
                       .arg(bytesText(a.bytes), toString(a.category))
                       .arg(a.startUs / 1e3, 0, 'f', 3)
                       .arg(freed ? tr("freed at %1 ms,").arg(a.endUs / 1e3, 0, 'f', 3)
                                  : tr("still alive at the end,"))
                       .arg((end - a.startUs) / 1e3, 0, 'f', 3);
    text += tr("\nsite %1").arg(QString::fromStdString(trace_->name(a.path)));
    const uint32_t stack = snapshot_->stackOf(a);
    const size_t all = snapshot_->frameCount(stack);
    const size_t shown = snapshot_->shownFrameCount(stack);
    if (all == 0) {
        return text + tr("\nstack: none recorded");
    }
    text += shown < all ? tr("\nstack, innermost first (%1 of %2 frames; PyTorch's internal "
                             "ones left out, click for all):")
                              .arg(shown)
                              .arg(all)
                        : tr("\nstack, innermost first:");
    // A tooltip of a few dozen lines: the Stack tab holds the rest.
    constexpr int kTooltipLines = 30;
    const QStringList lines = snapshot_->stackText(stack, false).split('\n');
    for (int i = 0; i < lines.size() && i < kTooltipLines; ++i) {
        text += "\n  " + lines[i];
    }
    if (lines.size() > kTooltipLines) {
        text +=
            tr("\n  … %1 lines more (click for the whole stack)").arg(lines.size() - kTooltipLines);
    }
    return text;
}

// A click on a snapshot's allocation shows its whole stack in the Stack tab.
void MemoryView::showPinnedStack() {
    if (!snapshot_) {
        return;
    }
    const MemoryAllocation* allocation = pinned();
    if (!allocation) {
        stackPanel_->clear();
        return;
    }
    stackPanel_->showStack(snapshot_, snapshot_->stackOf(*allocation),
                           tr("%1 made at %2 ms at %3")
                               .arg(bytesText(allocation->bytes))
                               .arg(allocation->startUs / 1e3, 0, 'f', 3)
                               .arg(QString::fromStdString(trace_->name(allocation->path))));
    lower_->setCurrentWidget(stackPanel_);
}

QList<QPair<QString, QRectF>> MemoryView::annotationStrips() const {
    QList<QPair<QString, QRectF>> strips;
    for (const AnnotationBands::Strip& strip : annotations_->strips()) {
        strips.push_back({strip.name, strip.rect});
    }
    return strips;
}

QList<ExportTarget> MemoryView::exportTargets() {
    if (chartOrRanks_->currentWidget() == rankMemory_) {
        return {{"memory-per-rank", rankMemory_->plot(), nullptr},
                {"memory-per-rank-by-category", nullptr, rankMemory_->categoriesModel()}};
    }
    return {{"memory-timeline", plot_, nullptr},
            {"memory-allocation-sites", nullptr, sites_},
            {"memory-estimate", nullptr, estimate_},
            {"memory-saved-for-backward", saved_->plot(), nullptr},
            {"memory-saved-per-block", nullptr, saved_->blocksModel()}};
}

}  // namespace stepscope::ui
