#include "views/kernel_timeline_view.h"

#include <qcustomplot.h>

#include <QLabel>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <set>

#include "models/format.h"
#include "models/run_document.h"
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
    if (id == shownId_ && spans == shownSpans_) {
        return;  // already drawn; a live run grows its steps, not its traced step
    }
    shownId_ = id;
    shownSpans_ = spans;
    plot_->clearItems();
    plot_->clearPlottables();
    drawn_.clear();
    tracks_.clear();
    const StepTimeline* timeline = document ? &document->result.timeline : nullptr;
    if (!timeline || timeline->step < 0) {
        caption_->setText(
            document ? tr("This run has no traced step. Tick “Trace operators” (or “Trace CUDA "
                          "kernels” on a GPU) before running to see its operators and "
                          "kernels here.")
                     : tr("No run selected: pick one in the Runs list or open a run file."));
        plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        plot_->yAxis->setRangeReversed(false);
        setNoData(plot_, document ? tr("No traced step in this run") : tr("No run selected"));
        plot_->replot();
        return;
    }
    setNoData(plot_, QString());
    // Tracks: host threads first, then streams, each in order of first use.
    std::vector<const TimelineSpan*> drawable;
    for (const auto& span : timeline->spans) {
        if (span.kind == SpanKind::Range) {
            continue;
        }
        const QString track = QString::fromStdString(span.track);
        if (!tracks_.contains(track)) {
            tracks_ << track;
        }
        drawable.push_back(&span);
    }
    std::stable_sort(tracks_.begin(), tracks_.end(), [](const QString& a, const QString& b) {
        return a.startsWith("thread") && b.startsWith("stream");
    });
    if (int(drawable.size()) > kMaxSpans) {
        std::partial_sort(drawable.begin(), drawable.begin() + kMaxSpans, drawable.end(),
                          [](const TimelineSpan* a, const TimelineSpan* b) {
                              return a->durationUs > b->durationUs;
                          });
        drawable.resize(kMaxSpans);
    }
    double endUs = 0;
    for (const TimelineSpan* span : drawable) {
        drawn_.push_back({span, int(tracks_.indexOf(QString::fromStdString(span->track)))});
        endUs = std::max(endUs, span->startUs + span->durationUs);
    }
    std::sort(drawn_.begin(), drawn_.end(), [](const Drawn& a, const Drawn& b) {
        return a.track != b.track ? a.track < b.track : a.span->startUs < b.span->startUs;
    });
    const int rows = int(tracks_.size());
    // Phase bands behind everything.
    std::vector<std::string> phases;
    for (const auto& span : timeline->spans) {
        if (!isPhase(span)) {
            continue;
        }
        if (std::find(phases.begin(), phases.end(), span.name) == phases.end()) {
            phases.push_back(span.name);
        }
        auto* band = new QCPItemRect(plot_);
        band->setLayer("background");
        band->topLeft->setCoords(span.startUs, -0.6);
        band->bottomRight->setCoords(span.startUs + span.durationUs, rows - 0.4);
        band->setBrush(bandColor(span.name));
        band->setPen(Qt::NoPen);
        auto* label = new QCPItemText(plot_);
        label->position->setCoords(span.startUs + span.durationUs / 2, -0.5);
        label->setText(QString::fromStdString(span.name));
        label->setColor(phaseColor(QString::fromStdString(span.name)));
        endUs = std::max(endUs, span.startUs + span.durationUs);
    }
    std::set<std::string> categories;
    for (const Drawn& drawn : drawn_) {
        categories.insert(drawn.span->category);
        auto* rect = new QCPItemRect(plot_);
        const double top = drawn.track - (onGpu(*drawn.span) ? 0.4 : 0.3);
        rect->topLeft->setCoords(drawn.span->startUs, top);
        rect->bottomRight->setCoords(drawn.span->startUs + drawn.span->durationUs,
                                     2 * drawn.track - top);
        rect->setBrush(categoryColor(QString::fromStdString(drawn.span->category)));
        rect->setPen(Qt::NoPen);
        rect->setSelectable(false);
    }
    for (const auto& category : categories) {
        const QString name = QString::fromStdString(category);
        addLegendEntry(plot_, name.isEmpty() ? tr("(no category)") : name, categoryColor(name),
                       Qt::NoPen);
    }
    for (const auto& phase : phases) {
        if (isProfilerStep(phase)) {
            continue;  // one per step: the band's own label names it
        }
        addLegendEntry(plot_, tr("%1 phase").arg(QString::fromStdString(phase)), bandColor(phase),
                       QPen(phaseColor(QString::fromStdString(phase))));
    }
    plot_->legend->setVisible(true);
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int i = 0; i < rows; ++i) {
        ticker->addTick(i, tracks_[i]);
    }
    plot_->yAxis->setTicker(ticker);
    plot_->yAxis->setRangeReversed(true);
    plot_->yAxis->setRange(-0.8, rows - 0.2);
    plot_->xAxis->setRange(0, endUs > 0 ? endUs * 1.02 : 1);
    int kernels = 0;
    for (const Drawn& drawn : drawn_) {
        kernels += onGpu(*drawn.span);
    }
    caption_->setText(tr("Step %1: %2 and %3 on %4. Wheel zooms, drag pans. Bar colours are "
                         "operator and kernel categories, shaded bands the phases (legend above "
                         "the chart); hover names a bar.")
                          .arg(timeline->step)
                          .arg(countText(qsizetype(drawn_.size()) - kernels, "operator"),
                               countText(kernels, "kernel/copy", "kernels/copies"),
                               countText(rows, "track")));
    plot_->replot();
}

const TimelineSpan* KernelTimelineView::spanAt(double timeUs, int track) const {
    // Spans on one track do not overlap (top-level operators; one stream's kernels).
    auto it = std::upper_bound(drawn_.begin(), drawn_.end(), std::make_pair(track, timeUs),
                               [](const std::pair<int, double>& key, const Drawn& d) {
                                   return key.first != d.track ? key.first < d.track
                                                               : key.second < d.span->startUs;
                               });
    if (it == drawn_.begin()) {
        return nullptr;
    }
    --it;
    const bool inside = it->track == track && timeUs <= it->span->startUs + it->span->durationUs;
    return inside ? it->span : nullptr;
}

QString KernelTimelineView::describe(const TimelineSpan& span) const {
    QString text = QString::fromStdString(span.name);
    if (text.size() > 160) {
        text = text.left(157) + "…";
    }
    text += tr("\n%1 µs · %2 · %3")
                .arg(span.durationUs, 0, 'f', 1)
                .arg(QString::fromStdString(span.category), QString::fromStdString(span.phase));
    if (!span.detail.empty()) {
        text += (onGpu(span) ? tr("\nlaunched by %1") : tr("\nmodule %1"))
                    .arg(QString::fromStdString(span.detail));
    }
    return text;
}

bool KernelTimelineView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plot_ && event->type() == QEvent::MouseMove) {
        const auto* mouse = static_cast<QMouseEvent*>(event);
        const double time = plot_->xAxis->pixelToCoord(mouse->position().x());
        const int track = int(std::lround(plot_->yAxis->pixelToCoord(mouse->position().y())));
        if (const TimelineSpan* span = spanAt(time, track)) {
            QToolTip::showText(mouse->globalPosition().toPoint(), describe(*span), plot_);
        } else {
            QToolTip::hideText();
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
