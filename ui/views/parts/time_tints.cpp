#include "views/parts/time_tints.h"

#include <QImage>

#include <algorithm>
#include <cmath>

namespace stepscope::ui {

void drawTimeTints(QCPPainter* painter, const QRectF& area, const std::vector<TimeTint>& tints) {
    if (tints.empty() || area.isEmpty()) {
        return;
    }
    if (painter->modes().testFlag(QCPPainter::pmVectorized)) {
        for (const TimeTint& tint : tints) {
            painter->fillRect(
                QRectF(tint.left, area.top(), std::max(1.0, tint.right - tint.left), area.height()),
                tint.colour);
        }
        return;
    }
    // Device pixels: an export at twice the size draws twice the columns.
    const double scale = std::max(1e-3, painter->deviceTransform().m11());
    const int width = std::max(1, int(std::lround(area.width() * scale)));
    const int height = std::max(1, int(std::lround(area.height() * scale)));
    QImage image(width, height, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    auto* row = reinterpret_cast<QRgb*>(image.scanLine(0));
    for (const TimeTint& tint : tints) {
        const double from = (tint.left - area.left()) * scale;
        const double to = (tint.right - area.left()) * scale;
        if (!(to >= 0 && from < width)) {
            continue;  // outside the chart, or times no axis can place
        }
        const int first = int(std::round(std::clamp(from, 0.0, double(width - 1))));
        const int last = std::max(first + 1, int(std::round(std::min(to, double(width)))));
        std::fill(row + first, row + last, qPremultiply(tint.colour.rgba()));
    }
    for (int y = 1; y < height; ++y) {
        std::copy(row, row + width, reinterpret_cast<QRgb*>(image.scanLine(y)));
    }
    image.setDevicePixelRatio(scale);
    painter->drawImage(area.topLeft(), image);
}

TimeTintBands::TimeTintBands(QCPAxis* keyAxis, QCPAxis* valueAxis) : Backdrop(keyAxis, valueAxis) {
    setAntialiased(false);
}

void TimeTintBands::setRanges(std::vector<Range> ranges) {
    std::stable_sort(ranges.begin(), ranges.end(),
                     [](const Range& a, const Range& b) { return a.startUs < b.startUs; });
    ranges_ = std::move(ranges);
}

void TimeTintBands::draw(QCPPainter* painter) {
    const QCPAxis* key = keyAxis();
    if (!key || ranges_.empty()) {
        return;
    }
    const double fromUs = key->range().lower * 1e3;
    const double toUs = key->range().upper * 1e3;
    std::vector<TimeTint> tints;
    for (const Range& range : ranges_) {
        if (range.startUs > toUs) {
            break;  // by start: the rest are right of the view
        }
        if (range.endUs >= fromUs) {
            tints.push_back({key->coordToPixel(range.startUs / 1e3),
                             key->coordToPixel(range.endUs / 1e3), range.colour});
        }
    }
    drawTimeTints(painter, key->axisRect()->rect(), tints);
}

}  // namespace stepscope::ui
