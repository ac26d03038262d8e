#pragma once

#include <qcustomplot.h>

#include <QColor>
#include <QRectF>

#include <vector>

#include "views/parts/backdrop.h"

namespace stepscope::ui {

// A translucent tint over a stretch of a chart's time axis, the chart's
// whole height: a run's phase, a snapshot's outermost record_function range.
struct TimeTint {
    double left;   // widget pixels
    double right;  // widget pixels
    QColor colour;
};

// Draws the tints over `area` as one picture: each pixel column takes the
// last tint over its centre (at least one column a tint, so a narrow one
// still shows), and the row of columns is stretched over the area's height.
// Qt's raster engine splits every fill taller than about a hundred rows
// into parts for its thread pool and waits for them, so 300 phases filled
// one by one took 70 ms a draw on two cores; one image takes well under
// one. A vector painter (PDF export) gets a rectangle per tint instead.
void drawTimeTints(QCPPainter* painter, const QRectF& area, const std::vector<TimeTint>& tints);

// Tints set in time (µs; the key axis is ms), drawn behind a chart with
// drawTimeTints from the ranges in view: a run's phases in the memory view.
class TimeTintBands final : public Backdrop {
    Q_OBJECT

public:
    struct Range {
        double startUs;
        double endUs;
        QColor colour;
    };

    TimeTintBands(QCPAxis* keyAxis, QCPAxis* valueAxis);

    void setRanges(std::vector<Range> ranges);  // in any order
    const std::vector<Range>& ranges() const { return ranges_; }

protected:
    void draw(QCPPainter* painter) override;

private:
    std::vector<Range> ranges_;
};

}  // namespace stepscope::ui
