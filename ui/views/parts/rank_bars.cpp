#include "views/parts/rank_bars.h"

#include "widgets/plot_style.h"

namespace stepscope::ui {

RankBars::RankBars(QCustomPlot* plot, const RankTimeline& timeline)
    : QCPAbstractItem(plot), timeline_(timeline) {
    setAntialiased(false);
    setSelectable(false);
}

void RankBars::fill(QCPPainter* painter, double fromMs, double toMs, std::pair<double, double> row,
                    const QColor& color) {
    const QCPAxis* x = parentPlot()->xAxis;
    const QCPAxis* y = parentPlot()->yAxis;
    const QCPRange view = x->range();
    if (toMs < view.lower || fromMs > view.upper) {
        return;
    }
    const double left = x->coordToPixel(std::max(fromMs, view.lower));
    const double right = x->coordToPixel(std::min(toMs, view.upper));
    const double top = y->coordToPixel(row.first);
    const double bottom = y->coordToPixel(row.second);
    // A pixel at least: a short collective still shows where it ran.
    const QRectF rect(QPointF(left, std::min(top, bottom)),
                      QPointF(std::max(right, left + 1), std::max(top, bottom)));
    painter->fillRect(rect, color);
    if (rect.width() >= 4) {
        // Its start edge darker: bars that touch or overlap still read as several.
        painter->fillRect(QRectF(rect.left(), rect.top(), 1, rect.height()), color.darker(150));
    }
    ++painted_;
}

void RankBars::draw(QCPPainter* painter) {
    painted_ = 0;
    const auto& lanes = timeline_.lanes();
    for (size_t lane = 0; lane < lanes.size(); ++lane) {
        const int row = int(lane);
        for (const auto& phase : lanes[lane].phases) {
            QString name = QString::fromStdString(phase.phase).replace('_', ' ');
            fill(painter, phase.startMs, phase.endMs, phaseRow(row), phaseColor(name));
        }
        for (const auto& collective : lanes[lane].collectives) {
            fill(painter, collective.startMs, collective.endMs, collectiveRow(row),
                 collectiveColor());
        }
        for (const auto& [from, to] : lanes[lane].exposed) {
            fill(painter, from, to, exposedRow(row), exposedColor());
        }
    }
}

}  // namespace stepscope::ui
