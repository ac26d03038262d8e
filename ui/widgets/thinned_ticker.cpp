#include "widgets/thinned_ticker.h"

#include <algorithm>
#include <vector>

namespace stepscope::ui {

void thinTickLabels(const QCPAxis* axis, const QVector<double>& ticks, QVector<QString>& labels) {
    const bool across = axis->orientation() == Qt::Horizontal;
    const QFontMetrics metrics(axis->tickLabelFont());
    std::vector<int> order;  // left to right, or top to bottom
    for (int i = 0; i < ticks.size() && i < labels.size(); ++i) {
        if (!labels[i].isEmpty()) {
            order.push_back(i);
        }
    }
    const auto pixel = [&](int i) { return axis->coordToPixel(ticks[i]); };
    std::sort(order.begin(), order.end(), [&](int a, int b) { return pixel(a) < pixel(b); });
    double keptEnd = -1e300;
    for (const int i : order) {
        const QRect text = metrics.boundingRect(QRect(), Qt::TextDontClip, labels[i]);
        const double half = (across ? text.width() + 6 : text.height()) / 2.0;
        if (pixel(i) - half < keptEnd) {
            labels[i].clear();
        } else {
            keptEnd = pixel(i) + half;
        }
    }
}

}  // namespace stepscope::ui
