#include "views/parts/allocation_bands.h"

#include <algorithm>

namespace stepscope::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

AllocationBands::AllocationBands(QCPAxis* keyAxis, QCPAxis* valueAxis)
    : QCPAbstractPlottable(keyAxis, valueAxis) {
    setAntialiased(false);
    setAntialiasedFill(false);
}

void AllocationBands::setBands(std::vector<Band> bands, std::vector<BandVertex> vertices) {
    bands_ = std::move(bands);
    vertices_ = std::move(vertices);
}

void AllocationBands::addBand(uint32_t allocation, int64_t bytes, double endUs,
                              const std::vector<BandVertex>& vertices, const QColor& colour) {
    if (vertices.empty()) {
        return;
    }
    bands_.push_back({allocation, bytes, endUs, vertices_.size(), vertices.size(), colour});
    vertices_.insert(vertices_.end(), vertices.begin(), vertices.end());
}

bool AllocationBands::extentAt(uint32_t allocation, double timeUs, int64_t* bottom,
                               int64_t* top) const {
    for (const Band& band : bands_) {
        if (band.allocation != allocation) {
            continue;
        }
        const BandVertex* first = vertices_.data() + band.firstVertex;
        const BandVertex* last = first + band.vertexCount;
        if (timeUs < first->timeUs || timeUs >= band.endUs) {
            return false;
        }
        const BandVertex* at =
            std::upper_bound(first, last, timeUs,
                             [](double t, const BandVertex& v) { return t < v.timeUs; }) -
            1;
        *bottom = at->bottom;
        *top = at->bottom + band.bytes;
        return true;
    }
    return false;
}

QCPRange AllocationBands::getKeyRange(bool& foundRange, QCP::SignDomain) const {
    foundRange = !bands_.empty();
    QCPRange range(0, 0);
    if (foundRange) {
        range.lower = vertices_[bands_.front().firstVertex].timeUs / 1e3;
        range.upper = range.lower;
        for (const Band& band : bands_) {
            range.expand(vertices_[band.firstVertex].timeUs / 1e3);
            range.expand(band.endUs / 1e3);
        }
    }
    return range;
}

QCPRange AllocationBands::getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const {
    foundRange = !bands_.empty();
    QCPRange range(0, 0);
    for (const Band& band : bands_) {
        for (size_t v = band.firstVertex; v < band.firstVertex + band.vertexCount; ++v) {
            range.expand(double(vertices_[v].bottom + band.bytes) / kMiB);
        }
    }
    return range;
}

void AllocationBands::draw(QCPPainter* painter) {
    QCPAxis* key = keyAxis();
    QCPAxis* value = valueAxis();
    if (!key || !value || bands_.empty()) {
        return;
    }
    const double lo = key->range().lower * 1e3;
    const double hi = key->range().upper * 1e3;
    const double pxLeft = key->coordToPixel(key->range().lower);
    const double pxRight = key->coordToPixel(key->range().upper);
    const auto px = [&](double timeUs) {
        return std::clamp(key->coordToPixel(timeUs / 1e3), pxLeft - 2, pxRight + 2);
    };
    const auto py = [&](int64_t bytes) { return value->coordToPixel(double(bytes) / kMiB); };
    applyDefaultAntialiasingHint(painter);
    QPolygonF polygon;
    std::vector<QPointF> bottoms;
    for (const Band& band : bands_) {
        const BandVertex* first = vertices_.data() + band.firstVertex;
        const BandVertex* last = first + band.vertexCount;
        if (first->timeUs > hi || band.endUs < lo) {
            continue;
        }
        // Steps: from each kept vertex's x to the next, at its bottom.
        polygon.clear();
        bottoms.clear();
        const double height = py(0) - py(band.bytes);
        double x = px(first->timeUs);
        int64_t bottom = first->bottom;
        for (const BandVertex* v = first + 1; v < last; ++v) {
            const double next = px(v->timeUs);
            if (next - x >= 0.75) {
                bottoms.emplace_back(x, py(bottom));
                bottoms.emplace_back(next, py(bottom));
                x = next;
            }
            bottom = v->bottom;  // within a pixel: the latest place wins
        }
        bottoms.emplace_back(x, py(bottom));
        bottoms.emplace_back(std::max(px(band.endUs), x + 0.75), py(bottom));
        for (const QPointF& point : bottoms) {
            polygon << QPointF(point.x(), point.y() - height);
        }
        for (auto it = bottoms.rbegin(); it != bottoms.rend(); ++it) {
            polygon << *it;
        }
        painter->setBrush(band.colour);
        if (outline_.style() != Qt::NoPen) {
            painter->setPen(outline_);
        } else if (height >= 4) {
            painter->setPen(QPen(band.colour.darker(140), 0));
        } else {
            painter->setPen(Qt::NoPen);
        }
        painter->drawPolygon(polygon);
    }
}

void AllocationBands::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const {
    painter->setPen(outline_);
    painter->setBrush(bands_.empty() ? brush() : QBrush(bands_.front().colour));
    painter->drawRect(rect);
}

}  // namespace stepscope::ui
