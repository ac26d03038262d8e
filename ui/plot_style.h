#pragma once

#include <QColor>
#include <QString>

class QCPAxis;
class QCustomPlot;

namespace stepscope::ui {

// One look for every chart: readable fonts, labelled axes with units, a legend.
void stylePlot(QCustomPlot* plot, const QString& xLabel, const QString& yLabel);

// Takes the legend's row out of the layout: an empty, hidden legend still
// narrows the chart's column.
void removeLegend(QCustomPlot* plot);

void useIntegerTicks(QCPAxis* axis);  // step numbers: 1, 2, 5, 10, … never 2.5

QColor phaseColor(const QString& phase);        // "forward", "backward", "optimizer"
QColor seriesColor(int index);                  // for runs and sweep lines
QColor categoryColor(const QString& category);  // matmul, softmax, … (breakdown categories)

}  // namespace stepscope::ui
