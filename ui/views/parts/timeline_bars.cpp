#include "views/parts/timeline_bars.h"

#include <algorithm>
#include <cmath>

namespace stepscope::ui {

namespace {

constexpr int kLevels = 5;  // nesting deeper than this is drawn at the deepest inset

bool onDevice(const TimelineSpan& span) {
    return span.kind == SpanKind::Kernel || span.kind == SpanKind::Memcpy ||
           span.kind == SpanKind::Memset;
}

}  // namespace

TimelineBars::TimelineBars(QCustomPlot* plot, const TimelineIndex& index,
                           std::vector<QColor> colors)
    : QCPAbstractItem(plot), index_(index), colors_(std::move(colors)) {
    setAntialiased(false);  // blocks on whole pixels, crisp at any zoom
    setSelectable(false);
}

std::pair<double, double> TimelineBars::rowOf(const TimelineSpan& span, int track, int depth) {
    const double half = (onDevice(span) ? 0.4 : 0.3) * (1 - 0.15 * std::min(depth, kLevels - 1));
    return {track - half, track + half};
}

std::vector<QColor> TimelineBars::paintedColors() const {
    std::vector<QColor> colors;
    for (size_t i = 0; i < paintedCategories_.size(); ++i) {
        if (paintedCategories_[i]) {
            colors.push_back(colors_[i]);
        }
    }
    return colors;
}

namespace {

// The spans narrower than a pixel that start in one pixel column of a track
// and level, drawn as one pixel-wide bar in the colour of the category that
// takes most of their time there, as opaque as they fill the pixel's time
// (in quarters, a quarter at least): a few short kernels in a long stretch
// stay pale, a busy stretch solid.
struct Column {
    int pixel = -1;  // none yet
    double top = 0;
    double bottom = 0;
    double busyUs = 0;
    std::vector<std::pair<int, double>> time;  // by category

    void add(int category, double us) {
        busyUs += us;
        for (auto& [known, sum] : time) {
            if (known == category) {
                sum += us;
                return;
            }
        }
        time.emplace_back(category, us);
    }
    int opacity(double pixelUs) const {  // in quarters
        return std::clamp(int(std::ceil(4 * busyUs / pixelUs)), 1, 4);
    }
    int dominant() const {
        return std::max_element(time.begin(), time.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; })
            ->first;
    }
};

}  // namespace

// One track's bars in view, by level.
void TimelineBars::drawTrack(int track, std::vector<std::vector<Bar>>& levels) {
    const QCPAxis* x = parentPlot()->xAxis;
    const QCPAxis* y = parentPlot()->yAxis;
    std::vector<Column> columns(kLevels);
    const QCPRange range = x->range();
    const double pixelUs = range.size() / std::max(1, clipRect().width());
    // A column's bar; beside a bar of the same colour it widens that one instead.
    auto flush = [&levels, pixelUs](Column& column, size_t level) {
        if (column.pixel < 0) {
            return;
        }
        const int category = column.dominant();
        const int opacity = column.opacity(pixelUs);
        std::vector<Bar>& bars = levels[level];
        if (!bars.empty() && bars.back().category == category && bars.back().opacity == opacity &&
            bars.back().rect.right() == column.pixel && bars.back().rect.top() == column.top) {
            bars.back().rect.setRight(column.pixel + 1);
        } else {
            bars.push_back({QRectF(QPointF(column.pixel, column.top),
                                   QPointF(column.pixel + 1, column.bottom)),
                            category, opacity});
        }
        column.pixel = -1;
        column.busyUs = 0;
        column.time.clear();
    };
    index_.forEachIn(track, range.lower, range.upper, [&](int span) {
        const TimelineSpan& s = index_.span(span);
        const int depth = index_.depthOf(span);
        const auto level = size_t(std::min(depth, kLevels - 1));
        const auto [topValue, bottomValue] = rowOf(s, track, depth);
        const double top = std::min(y->coordToPixel(topValue), y->coordToPixel(bottomValue));
        const double bottom = std::max(y->coordToPixel(topValue), y->coordToPixel(bottomValue));
        const double from = x->coordToPixel(s.startUs);
        const double to = x->coordToPixel(s.startUs + s.durationUs);
        const int category = index_.categoryOf(span);
        ++painted_;
        Column& column = columns[level];
        if (to - from >= 1) {
            flush(column, level);
            levels[level].push_back(
                {QRectF(QPointF(std::floor(from), top), QPointF(std::ceil(to), bottom)), category,
                 4});
            return;
        }
        ++merged_;
        const int pixel = int(std::floor(from));
        if (pixel != column.pixel) {
            flush(column, level);
            column.pixel = pixel;
            column.top = top;
            column.bottom = bottom;
        }
        column.add(category, s.durationUs);
    });
    for (size_t level = 0; level < columns.size(); ++level) {
        flush(columns[level], level);
    }
}

void TimelineBars::draw(QCPPainter* painter) {
    painted_ = merged_ = 0;
    paintedCategories_.assign(colors_.size(), 0);
    std::vector<std::vector<Bar>> levels(kLevels);
    for (int track = 0; track < int(index_.tracks().size()); ++track) {
        drawTrack(track, levels);
    }
    // Outer levels first, so that what a span holds lies on top of it.
    painter->setPen(Qt::NoPen);
    std::pair<int, int> brush{-1, -1};  // category, opacity
    for (const std::vector<Bar>& bars : levels) {
        for (const Bar& bar : bars) {
            if (std::make_pair(bar.category, bar.opacity) != brush) {
                brush = {bar.category, bar.opacity};
                QColor color = colors_[size_t(bar.category)];
                color.setAlphaF(float(bar.opacity) / 4);
                painter->setBrush(color);
                paintedCategories_[size_t(bar.category)] = 1;
            }
            painter->drawRect(bar.rect);
        }
    }
}

}  // namespace stepscope::ui
