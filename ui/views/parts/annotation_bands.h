#pragma once

#include <qcustomplot.h>

#include <QList>
#include <QRectF>
#include <QString>

#include <vector>

#include "views/parts/backdrop.h"

namespace stepscope::ui {

// record_function ranges of a PyTorch memory snapshot along the time axis,
// as our runs' phases are banded: each outermost range tints the chart's
// height, and each range of the first kRows nesting levels is a labelled
// strip along the chart's top (its name elided to the strip's width). Times
// in µs go in; the key axis is ms. Drawn from the ranges in view only, so a
// trace with thousands of ranges costs what is visible.
class AnnotationBands final : public Backdrop {
    Q_OBJECT

public:
    static constexpr int kRows = 2;

    struct Range {
        QString name;
        double startUs;
        double endUs;
        int depth;  // ranges open around it
    };
    // A drawn strip: its range and where it is (widget pixels).
    struct Strip {
        QString name;
        QRectF rect;
    };

    AnnotationBands(QCPAxis* keyAxis, QCPAxis* valueAxis);

    void setRanges(std::vector<Range> ranges);  // by start
    const std::vector<Range>& ranges() const { return ranges_; }
    // Pixels the strips take at the chart's top (0 without ranges): the
    // chart keeps that much more room above its peak.
    double stripsHeight() const;
    // The strips as the chart now draws them, left to right, row by row.
    QList<Strip> strips() const;

protected:
    void draw(QCPPainter* painter) override;

private:
    double rowHeight() const;

    std::vector<Range> ranges_;
};

}  // namespace stepscope::ui
