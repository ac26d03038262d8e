#include "views/kernel_timeline_view.h"

#include <qcustomplot.h>

#include <QLabel>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <tuple>

#include "models/format.h"
#include "models/missing_records.h"
#include "models/run_document.h"
#include "views/parts/timeline_bars.h"
#include "widgets/kernel_type_colors.h"
#include "widgets/plot_style.h"

namespace stepscope::ui {

namespace {

bool onGpu(const TimelineSpan& span) {
    return span.kind == SpanKind::Kernel || span.kind == SpanKind::Memcpy ||
           span.kind == SpanKind::Memset;
}

bool isProfilerStep(const std::string& name) {
    return name.rfind("ProfilerStep#", 0) == 0;  // a PyTorch profiler trace's steps
}

bool isPhase(const TimelineSpan& span) {
    return span.kind == SpanKind::Range && (span.name == "forward" || span.name == "backward" ||
                                            span.name == "optimizer" || isProfilerStep(span.name));
}

double endOf(const TimelineSpan& span) {
    return span.startUs + span.durationUs;
}

QString elided(const std::string& name) {
    const QString text = QString::fromStdString(name);
    return text.size() > 160 ? text.left(157) + "…" : text;
}

void placeBar(QCPItemRect* rect, const TimelineSpan& span, int track, int depth) {
    const auto [top, bottom] = TimelineBars::rowOf(span, track, depth);
    rect->topLeft->setCoords(span.startUs, top);
    rect->bottomRight->setCoords(endOf(span), bottom);
}

const char* const kLinkLayer = "links";
constexpr size_t kMaxLinksDrawn = 64;  // an operator may launch many kernels

QColor bandColor(const std::string& phase) {
    QColor color = phaseColor(QString::fromStdString(phase));
    color.setAlpha(40);
    return color;
}

// A legend row for a colour drawn with items: an empty series carries the swatch.
void addLegendEntry(QCustomPlot* plot, const QString& name, const QBrush& brush, const QPen& pen) {
    auto* swatch = new QCPBars(plot->xAxis, plot->yAxis);
    swatch->setName(name);
    swatch->setBrush(brush);
    swatch->setPen(pen);
}

// Ticks over microseconds, labelled in milliseconds once the view spans more
// than a few: "250" ms rather than "250000" or "2.5·10⁵" µs.
class TimeTicker final : public QCPAxisTicker {
public:
    // The unit and decimals that suit a view `spanUs` wide; true when they changed.
    bool fit(double spanUs) {
        const bool ms = spanUs >= 5000;
        const double span = ms ? spanUs / 1000 : spanUs;
        const int decimals = span >= 50 ? 0 : span >= 5 ? 1 : 2;
        const bool changed = ms != inMs_ || decimals != decimals_;
        inMs_ = ms;
        decimals_ = decimals;
        return changed;
    }
    bool inMs() const { return inMs_; }

protected:
    QString getTickLabel(double tick, const QLocale& locale, QChar, int) override {
        return locale.toString(inMs_ ? tick / 1000 : tick, 'f', decimals_);
    }

private:
    bool inMs_ = false;
    int decimals_ = 0;
};

}  // namespace

KernelTimelineView::KernelTimelineView(QWidget* parent) : RunView(parent) {
    caption_ = new QLabel;
    caption_->setWordWrap(true);
    plot_ = new QCustomPlot;
    stylePlot(plot_, tr("time in step (µs)"), QString());
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->axisRect()->setRangeDrag(Qt::Horizontal);
    plot_->axisRect()->setRangeZoom(Qt::Horizontal);
    keepSaneSize(plot_);
    plot_->legend->setWrap(5);  // the legend row says what each colour means
    plot_->setMouseTracking(true);
    plot_->installEventFilter(this);
    // The links of the hovered span, on a layer of their own: hovering repaints it alone.
    plot_->addLayer(kLinkLayer, plot_->layer("main"), QCustomPlot::limAbove);
    plot_->layer(kLinkLayer)->setMode(QCPLayer::lmBuffered);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(caption_);
    layout->addWidget(plot_, 1);
    QSharedPointer<TimeTicker> ticker(new TimeTicker);
    plot_->xAxis->setTicker(ticker);
    connect(plot_->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this, ticker](const QCPRange& range) {
                if (ticker->fit(range.size())) {
                    plot_->xAxis->setLabel(ticker->inMs() ? tr("time in step (ms)")
                                                          : tr("time in step (µs)"));
                }
                Q_EMIT visibleRangeChanged(range.lower, range.upper);
            });
}

void KernelTimelineView::showRun(const RunDocument* document) {
    const int id = document ? document->id : -1;
    const size_t spans = document ? document->result.timeline.spans.size() : 0;
    const bool live = document && document->live;
    if (id == shownId_ && spans == shownSpans_ && live == shownLive_) {
        return;  // already drawn; a live run grows its steps, not its traced step
    }
    shownId_ = id;
    shownSpans_ = spans;
    shownLive_ = live;
    plot_->clearItems();
    plot_->clearPlottables();
    bars_ = nullptr;
    linkItems_.clear();
    hovered_ = linkedFrom_ = -1;
    pinned_ = false;
    const StepTimeline* timeline = document ? &document->result.timeline : nullptr;
    if (!timeline || timeline->step < 0) {
        index_ = TimelineIndex();
        caption_->setText(missingRecordsText(document, Records::Timeline));
        plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        plot_->yAxis->setRangeReversed(false);
        setNoData(plot_, missingRecordsNote(document, Records::Timeline));
        plot_->replot();
        return;
    }
    setNoData(plot_, QString());
    index_ = TimelineIndex(*timeline);
    const int rows = int(index_.tracks().size());
    double endUs = drawPhases();
    drawSpans();
    int kernels = 0;
    int all = 0;
    for (const TimelineSpan& span : timeline->spans) {
        kernels += onGpu(span);
        all += span.kind != SpanKind::Range;
        endUs = std::max(endUs, endOf(span));
    }
    plot_->legend->setVisible(true);
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int i = 0; i < rows; ++i) {
        ticker->addTick(i, index_.tracks()[i]);
    }
    plot_->yAxis->setTicker(ticker);
    plot_->yAxis->setRangeReversed(true);
    plot_->yAxis->setRange(-0.8, rows - 0.2);
    plot_->xAxis->setRange(0, endUs > 0 ? endUs * 1.02 : 1);
    caption_->setText(
        tr("Step %1: %2 and %3 on %4. Wheel zooms, drag pans. Bar colours are operator and "
           "kernel categories, shaded bands the phases (legend above the chart); spans narrower "
           "than a pixel merge into one bar. Hover names a span and links a kernel to its "
           "launch; a click keeps the link.")
            .arg(timeline->step)
            .arg(countText(all - kernels, "operator"),
                 countText(kernels, "kernel/copy", "kernels/copies"), countText(rows, "track")));
    plot_->replot();
}

// The phase bands behind everything, with their legend rows; returns where the last ends.
double KernelTimelineView::drawPhases() {
    const double rows = double(index_.tracks().size());
    double endUs = 0;
    std::vector<std::string> phases;
    for (const auto& span : index_.timeline()->spans) {
        if (!isPhase(span)) {
            continue;
        }
        if (std::find(phases.begin(), phases.end(), span.name) == phases.end()) {
            phases.push_back(span.name);
        }
        auto* band = new QCPItemRect(plot_);
        band->setLayer("background");
        band->topLeft->setCoords(span.startUs, -0.6);
        band->bottomRight->setCoords(endOf(span), rows - 0.4);
        band->setBrush(bandColor(span.name));
        band->setPen(Qt::NoPen);
        auto* label = new QCPItemText(plot_);
        label->position->setCoords(span.startUs + span.durationUs / 2, -0.5);
        label->setText(QString::fromStdString(span.name));
        label->setColor(phaseColor(QString::fromStdString(span.name)));
        endUs = std::max(endUs, endOf(span));
    }
    for (const auto& phase : phases) {
        if (isProfilerStep(phase)) {
            continue;  // one per step: the band's own label names it
        }
        addLegendEntry(plot_, tr("%1 phase").arg(QString::fromStdString(phase)), bandColor(phase),
                       QPen(phaseColor(QString::fromStdString(phase))));
    }
    return endUs;
}

// The spans, drawn from the index at each replot, and a legend row per
// category. In a trace, HTA's kernel types and the runtime calls stand beside
// the host operators' categories: each row then says which it is, kernels
// first ("kernels: COMPUTATION", "runtime: cuda_runtime", "operators: matmul").
void KernelTimelineView::drawSpans() {
    std::vector<QColor> colors;
    const std::vector<std::string>& categories = index_.categories();
    const bool mixed = std::any_of(categories.begin(), categories.end(), [](const auto& c) {
        return traceCategoryColor(QString::fromStdString(c)).has_value();
    });
    std::vector<std::tuple<int, QString, QColor>> legend;  // group, name, colour
    for (const std::string& category : categories) {
        const QString name = QString::fromStdString(category);
        colors.push_back(categoryOrKernelTypeColor(name));
        const bool runtime = name.startsWith("cuda_");
        const int group = !mixed ? 0 : runtime ? 1 : traceCategoryColor(name) ? 0 : 2;
        const QString shown = name.isEmpty() ? tr("(no category)") : name;
        legend.emplace_back(group,
                            !mixed       ? shown
                            : group == 0 ? tr("kernels: %1").arg(shown)
                            : group == 1 ? tr("runtime: %1").arg(shown)
                                         : tr("operators: %1").arg(shown),
                            colors.back());
    }
    std::sort(legend.begin(), legend.end(), [](const auto& a, const auto& b) {
        return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
    });
    for (const auto& [group, name, color] : legend) {
        addLegendEntry(plot_, name, color, Qt::NoPen);
    }
    bars_ = new TimelineBars(plot_, index_, std::move(colors));
}

int KernelTimelineView::drawnSpans() const {
    return bars_ ? bars_->paintedSpans() : 0;
}

int KernelTimelineView::mergedSpans() const {
    return bars_ ? bars_->mergedSpans() : 0;
}

std::vector<QColor> KernelTimelineView::barColors() const {
    return bars_ ? bars_->paintedColors() : std::vector<QColor>{};
}

const TimelineSpan* KernelTimelineView::spanPointer(int index) const {
    return index >= 0 && index_.timeline() ? &index_.span(index) : nullptr;
}

int KernelTimelineView::indexOf(const TimelineSpan& span) const {
    const StepTimeline* timeline = index_.timeline();
    if (!timeline || timeline->spans.empty() || &span < &timeline->spans.front() ||
        &span > &timeline->spans.back()) {
        return -1;
    }
    return int(&span - timeline->spans.data());
}

const TimelineSpan* KernelTimelineView::spanAt(double timeUs, int track, double slackUs) const {
    return spanPointer(index_.spanAt(timeUs, track, slackUs));
}

std::vector<const TimelineSpan*> KernelTimelineView::linkedSpans(const TimelineSpan& span) const {
    std::vector<const TimelineSpan*> linked;
    const int index = indexOf(span);
    if (index < 0) {
        return linked;
    }
    if (const int launch = index_.launchOf(index); launch >= 0) {
        linked.push_back(spanPointer(launch));
    }
    for (const int kernel : index_.launchedBy(index)) {
        linked.push_back(spanPointer(kernel));  // in index order: the spans' start order
    }
    return linked;
}

QString KernelTimelineView::describe(const TimelineSpan& span) const {
    QString text = elided(span.name);
    text += tr("\n%1 µs · %2 · %3")
                .arg(span.durationUs, 0, 'f', 1)
                .arg(QString::fromStdString(span.category), QString::fromStdString(span.phase));
    const std::vector<const TimelineSpan*> linked = linkedSpans(span);
    if (onGpu(span) && !linked.empty()) {
        const TimelineSpan& launch = *linked.front();
        text += tr("\nlaunched by %1 on %2 at %3 µs (%4 µs before it starts)")
                    .arg(elided(launch.name), QString::fromStdString(launch.track))
                    .arg(launch.startUs, 0, 'f', 1)
                    .arg(span.startUs - launch.startUs, 0, 'f', 1);
    } else if (!span.detail.empty()) {
        text += (onGpu(span) ? tr("\nlaunched by %1") : tr("\nmodule %1"))
                    .arg(QString::fromStdString(span.detail));
    }
    if (!onGpu(span) && !linked.empty()) {
        const TimelineSpan& kernel = *linked.front();
        text += tr("\nlaunches %1 on %2 at %3 µs")
                    .arg(elided(kernel.name), QString::fromStdString(kernel.track))
                    .arg(kernel.startUs, 0, 'f', 1);
        if (linked.size() > 1) {
            text += tr(" and %n more", nullptr, int(linked.size() - 1));
        }
    }
    return text;
}

std::vector<QCPItemLine*> KernelTimelineView::linkLines() const {
    std::vector<QCPItemLine*> lines;
    for (QCPAbstractItem* item : linkItems_) {
        if (auto* line = qobject_cast<QCPItemLine*>(item)) {
            lines.push_back(line);
        }
    }
    return lines;
}

// Draws the links of a span (-1: none) on their own layer, which alone is
// repainted: each end outlined, drawn or not, and a line from launch to kernel.
void KernelTimelineView::showLinks(int span) {
    if (span == linkedFrom_) {
        return;
    }
    for (QCPAbstractItem* item : linkItems_) {
        plot_->removeItem(item);
    }
    linkItems_.clear();
    linkedFrom_ = span;
    const TimelineSpan* from = spanPointer(span);
    const std::vector<const TimelineSpan*> linked =
        from ? linkedSpans(*from) : std::vector<const TimelineSpan*>{};
    if (!linked.empty()) {
        const QPen outline(QColor(46, 52, 54), 1.5);
        auto mark = [&](const TimelineSpan& end) {
            const int index = indexOf(end);
            auto* rect = new QCPItemRect(plot_);
            rect->setLayer(kLinkLayer);
            placeBar(rect, end, index_.trackOf(index), index_.depthOf(index));
            rect->setBrush(categoryOrKernelTypeColor(QString::fromStdString(end.category)));
            rect->setPen(outline);
            linkItems_.push_back(rect);
        };
        mark(*from);
        for (size_t i = 0; i < std::min<size_t>(linked.size(), kMaxLinksDrawn); ++i) {
            const TimelineSpan& other = *linked[i];
            mark(other);
            const TimelineSpan& launch = onGpu(*from) ? other : *from;
            const TimelineSpan& kernel = onGpu(*from) ? *from : other;
            auto* line = new QCPItemLine(plot_);
            line->setLayer(kLinkLayer);
            line->start->setCoords(launch.startUs, index_.trackOf(indexOf(launch)));
            line->end->setCoords(kernel.startUs, index_.trackOf(indexOf(kernel)));
            line->setPen(QPen(QColor(46, 52, 54), 1.5));
            line->setHead(QCPLineEnding::esSpikeArrow);
            linkItems_.push_back(line);
        }
    }
    plot_->layer(kLinkLayer)->replot();
}

int KernelTimelineView::spanIndexUnder(const QPointF& pixel) const {
    const double time = plot_->xAxis->pixelToCoord(pixel.x());
    const int track = int(std::lround(plot_->yAxis->pixelToCoord(pixel.y())));
    // A few pixels either side: a kernel narrower than a pixel can still be hovered.
    const double slack = std::abs(plot_->xAxis->pixelToCoord(pixel.x() + 3) - time);
    return index_.spanAt(time, track, slack);
}

bool KernelTimelineView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plot_ && index_.timeline()) {
        if (event->type() == QEvent::MouseMove) {
            const auto* mouse = static_cast<QMouseEvent*>(event);
            hovered_ = spanIndexUnder(mouse->position());
            if (const TimelineSpan* span = hoveredSpan()) {
                QToolTip::showText(mouse->globalPosition().toPoint(), describe(*span), plot_);
            } else {
                QToolTip::hideText();
            }
            if (!pinned_) {
                showLinks(hovered_);
            }
        } else if (event->type() == QEvent::MouseButtonPress) {
            pressedAt_ = static_cast<QMouseEvent*>(event)->position();
        } else if (event->type() == QEvent::MouseButtonRelease) {
            // A click (not the end of a drag) keeps the links of what it hit, or lets go.
            const QPointF at = static_cast<QMouseEvent*>(event)->position();
            if ((at - pressedAt_).manhattanLength() < 4) {
                const int span = spanIndexUnder(at);
                pinned_ = span >= 0 && !linkedSpans(index_.span(span)).empty();
                showLinks(pinned_ ? span : -1);
            }
        }
    }
    return RunView::eventFilter(watched, event);
}

void KernelTimelineView::setVisibleRange(double startUs, double endUs) {
    if (endUs > startUs) {
        plot_->xAxis->setRange(startUs, endUs);
        plot_->replot();
    }
}

QList<ExportTarget> KernelTimelineView::exportTargets() {
    return {{"timeline", plot_, nullptr}};
}

}  // namespace stepscope::ui
