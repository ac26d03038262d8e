#include "views/parts/annotation_bands.h"

#include <QFontMetricsF>

#include <algorithm>

#include "views/parts/time_tints.h"

namespace stepscope::ui {

namespace {

// A colour per name, so that the same range reads the same every step.
QColor rangeColour(const QString& name) {
    static const QColor colours[] = {QColor(78, 121, 167),  QColor(242, 142, 43),
                                     QColor(89, 161, 79),   QColor(176, 122, 161),
                                     QColor(118, 183, 178), QColor(237, 201, 72)};
    return colours[qHash(name) % std::size(colours)];
}

}  // namespace

AnnotationBands::AnnotationBands(QCPAxis* keyAxis, QCPAxis* valueAxis)
    : Backdrop(keyAxis, valueAxis) {
    setAntialiased(false);
}

void AnnotationBands::setRanges(std::vector<Range> ranges) {
    ranges_ = std::move(ranges);
}

double AnnotationBands::rowHeight() const {
    return QFontMetricsF(mParentPlot ? mParentPlot->font() : QFont()).height() + 2;
}

double AnnotationBands::stripsHeight() const {
    int rows = 0;
    for (const Range& range : ranges_) {
        rows = std::max(rows, std::min(range.depth + 1, kRows));
    }
    return rows * rowHeight();
}

QList<AnnotationBands::Strip> AnnotationBands::strips() const {
    QList<Strip> out;
    const QCPAxis* key = keyAxis();
    if (!key || ranges_.empty()) {
        return out;
    }
    const QRectF area = key->axisRect()->rect();
    const double height = rowHeight();
    const double fromUs = key->range().lower * 1e3;
    const double toUs = key->range().upper * 1e3;
    for (const Range& range : ranges_) {
        if (range.startUs > toUs) {
            break;  // by start: the rest are right of the view
        }
        if (range.depth >= kRows || range.endUs < fromUs) {
            continue;
        }
        const double left = std::max(area.left(), key->coordToPixel(range.startUs / 1e3));
        const double right = std::min(area.right(), key->coordToPixel(range.endUs / 1e3));
        const double top = area.top() + range.depth * height;
        out.push_back({range.name, QRectF(left, top, std::max(1.0, right - left), height)});
    }
    return out;
}

void AnnotationBands::draw(QCPPainter* painter) {
    const QCPAxis* key = keyAxis();
    if (!key) {
        return;
    }
    const QRectF area = key->axisRect()->rect();
    // The outermost ranges tint the whole height, as phases do.
    std::vector<TimeTint> tints;
    for (const Strip& strip : strips()) {
        if (strip.rect.top() <= area.top()) {
            QColor tint = rangeColour(strip.name);
            tint.setAlpha(22);
            tints.push_back({strip.rect.left(), strip.rect.right(), tint});
        }
    }
    drawTimeTints(painter, area, tints);
    painter->setFont(mParentPlot->font());
    const QFontMetricsF metrics(painter->font());
    for (const Strip& strip : strips()) {
        QColor fill = rangeColour(strip.name);
        fill.setAlpha(110);
        painter->setPen(QPen(fill.darker(140), 1));
        painter->setBrush(fill);
        painter->drawRect(strip.rect.adjusted(0, 0, -1, -1));
        if (strip.rect.width() > 14) {
            painter->setPen(QColor(30, 30, 30));
            painter->drawText(
                strip.rect.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft,
                metrics.elidedText(strip.name, Qt::ElideRight, strip.rect.width() - 6));
        }
    }
}

}  // namespace stepscope::ui
