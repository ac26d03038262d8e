#pragma once

#include <QColor>
#include <QFont>
#include <QList>
#include <QString>

#include "profile/memory_trace.h"

class QCPAxis;
class QCustomPlot;

namespace stepscope::ui {

// One look for every chart: readable fonts, labelled axes with units, a
// legend as many entries a row as the chart's width holds, and axis labels
// that stay whole (fitAxisLabels after every layout).
void stylePlot(QCustomPlot* plot, const QString& xLabel, const QString& yLabel);

// `text` broken at spaces into as few lines as keep each within `width`
// pixels in `font` (a word longer than that stays whole on its line);
// lines it has already keep their breaks.
QString wrapText(const QString& text, const QFont& font, int width);

// An axis label runs centred along its axis: where it would run past its
// axis rect's cell (into the legend's row, or off the chart) it is wrapped
// onto more lines (up to three), and unwrapped
// once there is room. Returns whether a label changed (the chart needs
// another layout then). stylePlot calls it after each layout.
bool fitAxisLabels(QCustomPlot* plot);
// The legend's entries a row: as many as the chart's width holds.
void fitLegendToWidth(QCustomPlot* plot);

// Takes the legend's row out of the layout: an empty, hidden legend still
// narrows the chart's column.
void removeLegend(QCustomPlot* plot);

// A logarithmic axis of `base` whose labels thin out where they would
// overlap (context lengths, sizes side by side on a narrow chart).
void useLogAxis(QCPAxis* axis, double base);
void useIntegerTicks(QCPAxis* axis);  // step numbers: 1, 2, 5, 10, … never 2.5

// Empty charts keep a size a reader can see: no run or a run without data
// must not squeeze a chart to a sliver.
constexpr int kMinPlotWidth = 280;
constexpr int kMinPlotHeight = 200;
// A tab's main chart beside a table that can scroll, on a short screen:
// its least height follows its legend and axes' labels, so that whatever
// rows the legend wraps to at the chart's width, kReadableDataHeight px
// stay for the data; the table gives way, not the chart.
constexpr int kReadableDataHeight = 120;
void keepDataReadable(QCustomPlot* plot);
void keepSaneSize(QCustomPlot* plot);

// A chart with nothing to draw says why in its middle, over 0..1 axes without
// tick labels, instead of a 0..0 axis or the last run's ticks. An empty text
// takes the note away and brings the tick labels (and the legend) back; call
// it before drawing.
void setNoData(QCustomPlot* plot, const QString& text);
QString noDataText(const QCustomPlot* plot);  // empty when the chart shows data

// Fits both axes to the graphs' data with room around it, so that no point
// sits on an axis line: logarithmic axes by `factor` each side (one point
// gets a decade-wide range, not QCustomPlot's default), linear ones by a
// share of the span. A linear value axis that starts at zero stays there.
void fitAxesWithRoom(QCustomPlot* plot, double factor = 1.5, bool valueFromZero = false);

// "forward", "backward", "comm wait", "optimizer"; "compute" (a trace's)
QColor phaseColor(const QString& phase);
// For runs and sweep lines: twelve colours apart from each other, then the
// same twelve dashed, dotted, … so that no two of 48 lines look alike.
QColor seriesColor(int index);
Qt::PenStyle seriesStyle(int index);
constexpr int kSeriesColours = 12;
QColor categoryColor(const QString& category);  // matmul, softmax, … (breakdown categories)
QColor memoryColor(MemoryCategory category);    // parameters, activations, … (memory views)

}  // namespace stepscope::ui
