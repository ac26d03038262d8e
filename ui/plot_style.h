#pragma once

#include <QColor>
#include <QString>

class QCPAxis;
class QCustomPlot;

namespace stepscope::ui {

// One look for every chart: readable fonts, labelled axes with units, a legend.
void stylePlot(QCustomPlot* plot, const QString& xLabel, const QString& yLabel);

void useIntegerTicks(QCPAxis* axis);  // step numbers: 1, 2, 5, 10, … never 2.5

QColor phaseColor(const QString& phase);  // "forward", "backward", "optimizer"
QColor seriesColor(int index);            // for runs and sweep lines

}  // namespace stepscope::ui
