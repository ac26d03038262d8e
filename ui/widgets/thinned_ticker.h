#pragma once

#include <qcustomplot.h>

#include "widgets/plot_style.h"

namespace stepscope::ui {

// A ticker of type `Ticker` whose labels thin out when the axis is too
// short for all of them (operator names on the Breakdown's bars, context
// lengths on the attention charts), instead of overlapping.
template <class Ticker>
class ThinnedTicker : public Ticker {
public:
    explicit ThinnedTicker(const QCPAxis* axis) : axis_(axis) {}
    void generate(const QCPRange& range, const QLocale& locale, QChar formatChar, int precision,
                  QVector<double>& ticks, QVector<double>* subTicks,
                  QVector<QString>* tickLabels) override {
        Ticker::generate(range, locale, formatChar, precision, ticks, subTicks, tickLabels);
        if (tickLabels) {
            thinTickLabels(axis_, ticks, *tickLabels);
        }
    }

private:
    const QCPAxis* axis_;
};

}  // namespace stepscope::ui
