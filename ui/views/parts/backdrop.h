#pragma once

#include <qcustomplot.h>

namespace stepscope::ui {

// A plottable that draws on a chart without being its data: it widens no
// axis (what it lies behind sets them), is never selected, and has no
// legend icon. The memory chart's category fills, phase tints and
// record_function bands are drawn as these.
class Backdrop : public QCPAbstractPlottable {
public:
    using QCPAbstractPlottable::QCPAbstractPlottable;

    double selectTest(const QPointF&, bool, QVariant* = nullptr) const override { return -1; }
    QCPRange getKeyRange(bool& foundRange, QCP::SignDomain = QCP::sdBoth) const override {
        foundRange = false;
        return QCPRange();
    }
    QCPRange getValueRange(bool& foundRange, QCP::SignDomain = QCP::sdBoth,
                           const QCPRange& = QCPRange()) const override {
        foundRange = false;
        return QCPRange();
    }

protected:
    void drawLegendIcon(QCPPainter*, const QRectF&) const override {}
};

}  // namespace stepscope::ui
