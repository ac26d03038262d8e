#include "views/parts/category_stack.h"

#include <QImage>

#include <algorithm>
#include <cmath>

namespace stepscope::ui {

namespace {

// The first pixel row a non-antialiased fill whose edge is at y covers (the
// first whose centre lies below it), within [0, last]; a y that is not a
// number (a value no axis can place) covers nothing.
int firstRowBelow(double y, int last) {
    if (!(y == y)) {
        return last;
    }
    return int(std::clamp(std::ceil(y - 0.5), 0.0, double(last)));
}

}  // namespace

CategoryStack::CategoryStack(QCPAxis* keyAxis, QCPAxis* valueAxis) : Backdrop(keyAxis, valueAxis) {
    setAntialiased(false);
}

void CategoryStack::setGraphs(const std::vector<QCPGraph*>& graphs) {
    graphs_.assign(graphs.begin(), graphs.end());
}

CategoryStack::Columns CategoryStack::columns(double scale) const {
    Columns out;
    const QCPAxis* key = keyAxis();
    const QCPAxis* value = valueAxis();
    if (!key || !value) {
        return out;
    }
    const QRect area = key->axisRect()->rect();
    out.width = std::max(0, int(std::lround(area.width() * scale)));
    out.height = std::max(0, int(std::lround(area.height() * scale)));
    out.baseRow = firstRowBelow((value->coordToPixel(0) - area.top()) * scale, out.height);
    for (const QPointer<QCPGraph>& graph : graphs_) {
        std::vector<int> top(size_t(out.width), out.baseRow);
        if (graph && graph->visible() && out.width > 0) {
            const QCPGraphDataContainer& data = *graph->data();
            // The point holding at the left edge, through the last in view.
            auto point = data.findBegin(key->range().lower);
            const auto end = data.findEnd(key->range().upper);
            for (; point != end && point + 1 != data.constEnd(); ++point) {
                // The last point ends the line: no step starts there.
                const double from = (key->coordToPixel(point->key) - area.left()) * scale;
                const double to = (key->coordToPixel((point + 1)->key) - area.left()) * scale;
                // Every column the step touches, at least the one it starts in.
                const double left = std::min(from, to);
                const double right = std::max(from, to);
                if (!(right >= 0 && left < out.width)) {
                    continue;  // outside the chart, or keys no axis can place
                }
                const int first = int(std::floor(std::max(0.0, left)));
                const int last =
                    std::max(first + 1, int(std::ceil(std::min(right, double(out.width)))));
                const int row = firstRowBelow(
                    (value->coordToPixel(point->value) - area.top()) * scale, out.baseRow);
                for (int x = first; x < last; ++x) {
                    top[size_t(x)] = std::min(top[size_t(x)], row);
                }
            }
        }
        out.top.push_back(std::move(top));
    }
    return out;
}

void CategoryStack::draw(QCPPainter* painter) {
    const QCPAxis* key = keyAxis();
    if (!key || graphs_.empty()) {
        return;
    }
    const QRect area = key->axisRect()->rect();
    const bool vector = painter->modes().testFlag(QCPPainter::pmVectorized);
    // Device pixels: an export at twice the size fills twice the columns.
    const double scale = vector ? 1.0 : std::max(1e-3, painter->deviceTransform().m11());
    const Columns columns = this->columns(scale);
    if (columns.width == 0 || columns.baseRow == 0) {
        return;
    }
    if (vector) {
        // Topmost first, each lower one over it.
        painter->setPen(Qt::NoPen);
        for (size_t g = columns.top.size(); g-- > 0;) {
            if (!graphs_[g] || !graphs_[g]->visible()) {
                continue;
            }
            QPolygonF outline;
            outline << QPointF(area.left(), area.top() + columns.baseRow);
            for (int x = 0; x < columns.width; ++x) {
                const double y = area.top() + columns.top[g][size_t(x)];
                outline << QPointF(area.left() + x, y) << QPointF(area.left() + x + 1, y);
            }
            outline << QPointF(area.left() + columns.width, area.top() + columns.baseRow);
            painter->setBrush(graphs_[g]->brush());
            painter->drawPolygon(outline);
        }
        return;
    }
    QImage image(columns.width, columns.height, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    std::vector<QRgb> colours;
    for (const QPointer<QCPGraph>& graph : graphs_) {
        colours.push_back(graph ? qPremultiply(graph->brush().color().rgba()) : 0);
    }
    const qsizetype stride = image.bytesPerLine() / qsizetype(sizeof(QRgb));
    auto* pixels = reinterpret_cast<QRgb*>(image.bits());
    for (int x = 0; x < columns.width; ++x) {
        // Bottom up: each category from the top of those below to its own.
        int below = columns.baseRow;
        for (size_t g = 0; g < columns.top.size(); ++g) {
            const int top = columns.top[g][size_t(x)];
            for (int y = top; y < below; ++y) {
                pixels[y * stride + x] = colours[g];
            }
            below = std::min(below, top);
        }
    }
    image.setDevicePixelRatio(scale);
    painter->drawImage(QPointF(area.topLeft()), image);
}

}  // namespace stepscope::ui
