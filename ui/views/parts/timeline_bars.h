#pragma once

#include <qcustomplot.h>

#include <QColor>
#include <vector>

#include "models/timeline_index.h"

namespace stepscope::ui {

// A timeline's spans drawn straight from its index, and only those in view:
// a span at least a pixel wide as a bar of its own; those narrower merged per
// pixel column of a track and level into a pixel-wide bar in the colour of the
// category that took most of their time, as opaque as they fill it, so that
// every track shows where and how busy it was at any zoom, and a redraw costs
// the spans in view, not an item each. Kernels fill most of
// their stream's row; host calls less, each level of nesting inset a little.
class TimelineBars final : public QCPAbstractItem {
    Q_OBJECT

public:
    // colors: by the index's category.
    TimelineBars(QCustomPlot* plot, const TimelineIndex& index, std::vector<QColor> colors);
    double selectTest(const QPointF&, bool, QVariant*) const override { return -1; }

    // At the last draw: the spans in view, those of them merged into blocks,
    // and the colours painted.
    int paintedSpans() const { return painted_; }
    int mergedSpans() const { return merged_; }
    std::vector<QColor> paintedColors() const;

    // The top and bottom of a span's bar, in the value axis' coordinates.
    static std::pair<double, double> rowOf(const TimelineSpan& span, int track, int depth);

protected:
    void draw(QCPPainter* painter) override;

private:
    struct Bar {
        QRectF rect;
        int category;
        int opacity;  // in quarters
    };
    void drawTrack(int track, std::vector<std::vector<Bar>>& levels);

    const TimelineIndex& index_;
    std::vector<QColor> colors_;
    std::vector<char> paintedCategories_;
    int painted_ = 0;
    int merged_ = 0;
};

}  // namespace stepscope::ui
