#pragma once

#include <qcustomplot.h>

#include <QPointer>

#include <vector>

#include "views/parts/backdrop.h"

namespace stepscope::ui {

// One category of the memory chart: its stacked series, line, name and
// legend swatch as any graph's, but no fill of its own: the CategoryStack
// under it fills every category at once.
class CategoryGraph final : public QCPGraph {
    Q_OBJECT

public:
    using QCPGraph::QCPGraph;

protected:
    void drawFill(QCPPainter*, QVector<QPointF>*) const override {}
};

// The memory chart's categories, filled in one pass. Each graph holds the
// sum of its category and those below it; in each pixel column a category
// is filled from the top of those below it up to the highest its own sum
// reaches in that column, so a peak narrower than a pixel still shows, and
// the lowest category over a pixel colours it, as when each area was filled
// down to zero and the lower ones drawn over it. Qt fills a step polygon of
// 1,500 points span by span, hundreds a row, each batch handed to its thread
// pool and waited for: eight categories cost 50 ms a draw on two cores. One
// image written column by column costs about a millisecond. A vector
// painter (PDF export) gets a polygon a category instead.
class CategoryStack final : public Backdrop {
    Q_OBJECT

public:
    CategoryStack(QCPAxis* keyAxis, QCPAxis* valueAxis);

    // Bottom to top; each graph's brush is its fill. Hidden graphs are not filled.
    void setGraphs(const std::vector<QCPGraph*>& graphs);

protected:
    void draw(QCPPainter* painter) override;

private:
    // The first row (device pixels from the axis rect's top) each category
    // fills in each column of the axis rect at `scale` device pixels a pixel.
    struct Columns {
        int width = 0;
        int height = 0;
        int baseRow = 0;                    // the first row below zero
        std::vector<std::vector<int>> top;  // per graph, per column; baseRow where empty
    };
    Columns columns(double scale) const;

    std::vector<QPointer<QCPGraph>> graphs_;
};

}  // namespace stepscope::ui
