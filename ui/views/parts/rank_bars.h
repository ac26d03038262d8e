#pragma once

#include <qcustomplot.h>

#include "models/rank_timeline.h"

namespace stepscope::ui {

// The Ranks view's lanes drawn straight from its timeline, only what is in
// view and at least a pixel wide: on each rank's row its phases above, its
// collectives below, and under those a red strip where its communication
// ran exposed (no compute beside it).
class RankBars final : public QCPAbstractItem {
    Q_OBJECT

public:
    RankBars(QCustomPlot* plot, const RankTimeline& timeline);
    double selectTest(const QPointF&, bool, QVariant*) const override { return -1; }

    // A lane's rows, in the value axis' coordinates (rank r's lane is around r).
    static std::pair<double, double> phaseRow(int lane) { return {lane - 0.42, lane - 0.04}; }
    static std::pair<double, double> collectiveRow(int lane) { return {lane + 0.02, lane + 0.30}; }
    static std::pair<double, double> exposedRow(int lane) { return {lane + 0.32, lane + 0.42}; }
    static QColor collectiveColor() { return QColor(0x2c, 0x7f, 0xb8); }
    static QColor exposedColor() { return QColor(0xd7, 0x30, 0x27); }

    int paintedBars() const { return painted_; }  // at the last draw

protected:
    void draw(QCPPainter* painter) override;

private:
    void fill(QCPPainter* painter, double fromMs, double toMs, std::pair<double, double> row,
              const QColor& color);

    const RankTimeline& timeline_;
    int painted_ = 0;
};

}  // namespace stepscope::ui
