#pragma once

#include <qcustomplot.h>

namespace stepscope::ui {

// Blanks the tick labels that would be drawn over the one kept before them,
// measured with the axis's font and its length on screen (text width along
// a horizontal axis, text height along a vertical one), keeping the first
// from the top or the left. Ticks stay; only their labels thin out.
void thinTickLabels(const QCPAxis* axis, const QVector<double>& ticks, QVector<QString>& labels);

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
