#include "widgets/plot_style.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace stepscope::ui {

void stylePlot(QCustomPlot* plot, const QString& xLabel, const QString& yLabel) {
    QFont font = plot->font();
    font.setPointSize(10);
    QFont labelFont = font;
    labelFont.setPointSize(11);
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        axis->setTickLabelFont(font);
        axis->setLabelFont(labelFont);
    }
    plot->xAxis->setLabel(xLabel);
    plot->yAxis->setLabel(yLabel);
    // The legend sits in its own row above the chart, so it never hides data.
    plot->legend->setVisible(true);
    plot->legend->setFont(font);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot->legend->setWrap(4);
    plot->legend->setBorderPen(Qt::NoPen);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, plot->legend);
    plot->plotLayout()->setRowStretchFactor(0, 0.001);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
}

void removeLegend(QCustomPlot* plot) {
    plot->legend->setVisible(false);
    plot->plotLayout()->take(plot->legend);
    plot->plotLayout()->simplify();
}

void useIntegerTicks(QCPAxis* axis) {
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    axis->setTicker(ticker);
}

void keepSaneSize(QCustomPlot* plot) {
    plot->setMinimumSize(kMinPlotWidth, kMinPlotHeight);
}

namespace {

const char kNoDataName[] = "stepscope-no-data";
const char kLegendTaken[] = "stepscope-legend-taken";

// An empty legend (shown or not) in the layout's top row caps the column's
// width and squeezes the axis rect to a sliver, so an empty chart lends it out.
void takeLegend(QCustomPlot* plot) {
    QCPLayoutGrid* layout = plot->plotLayout();
    if (layout->hasElement(0, 0) && layout->element(0, 0) == plot->legend) {
        layout->take(plot->legend);
        layout->simplify();
        plot->legend->setVisible(false);
        plot->setProperty(kLegendTaken, true);
    }
}

void restoreLegend(QCustomPlot* plot) {
    if (plot->property(kLegendTaken).toBool()) {
        QCPLayoutGrid* layout = plot->plotLayout();
        layout->insertRow(0);
        layout->addElement(0, 0, plot->legend);
        layout->setRowStretchFactor(0, 0.001);
        plot->legend->setVisible(true);
        plot->setProperty(kLegendTaken, false);
    }
}

QCPItemText* noDataItem(const QCustomPlot* plot) {
    for (int i = 0; i < plot->itemCount(); ++i) {
        if (plot->item(i)->objectName() == kNoDataName) {
            return qobject_cast<QCPItemText*>(plot->item(i));
        }
    }
    return nullptr;
}

}  // namespace

void setNoData(QCustomPlot* plot, const QString& text) {
    QCPItemText* note = noDataItem(plot);
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        axis->setTickLabels(text.isEmpty());
    }
    if (text.isEmpty()) {
        if (note) {
            plot->removeItem(note);
        }
        restoreLegend(plot);
        return;
    }
    takeLegend(plot);
    if (!note) {
        note = new QCPItemText(plot);
        note->setObjectName(kNoDataName);
        note->setClipToAxisRect(true);
        note->position->setType(QCPItemPosition::ptAxisRectRatio);
        note->position->setCoords(0.5, 0.5);
        note->setPositionAlignment(Qt::AlignCenter);
        note->setTextAlignment(Qt::AlignCenter);
        note->setColor(QColor(110, 110, 110));
        QFont font = plot->font();
        font.setPointSize(11);
        note->setFont(font);
    }
    note->setText(text);
    plot->xAxis->setRange(0, 1);
    plot->yAxis->setRange(0, 1);
}

QString noDataText(const QCustomPlot* plot) {
    const QCPItemText* note = noDataItem(plot);
    return note ? note->text() : QString();
}

void fitAxesWithRoom(QCustomPlot* plot, double factor, bool valueFromZero) {
    QCPRange keys, values;
    bool haveKeys = false, haveValues = false;
    for (int i = 0; i < plot->graphCount(); ++i) {
        const QCPGraph* graph = plot->graph(i);
        const auto domain = [](const QCPAxis* axis) {
            return axis->scaleType() == QCPAxis::stLogarithmic ? QCP::sdPositive : QCP::sdBoth;
        };
        bool found = false;
        const QCPRange k = graph->getKeyRange(found, domain(graph->keyAxis()));
        if (found) {
            keys = haveKeys ? QCPRange(std::min(keys.lower, k.lower), std::max(keys.upper, k.upper))
                            : k;
            haveKeys = true;
        }
        const QCPRange v = graph->getValueRange(found, domain(graph->valueAxis()));
        if (found) {
            values = haveValues ? QCPRange(std::min(values.lower, v.lower),
                                           std::max(values.upper, v.upper))
                                : v;
            haveValues = true;
        }
    }
    const auto fit = [factor](QCPAxis* axis, QCPRange range, bool fromZero) {
        if (axis->scaleType() == QCPAxis::stLogarithmic) {
            const double room = range.lower == range.upper ? std::max(factor, 3.0) : factor;
            axis->setRange(range.lower / room, range.upper * room);
            return;
        }
        if (fromZero && range.lower >= 0) {
            axis->setRange(0, range.upper > 0 ? range.upper * 1.1 : 1);
            return;
        }
        const double span = range.upper - range.lower;
        const double pad = span > 0 ? span * 0.08 : std::max(std::abs(range.upper) * 0.1, 1.0);
        axis->setRange(range.lower - pad, range.upper + pad);
    };
    if (haveKeys) {
        fit(plot->xAxis, keys, false);
    }
    if (haveValues) {
        fit(plot->yAxis, values, valueFromZero);
    }
}

QColor phaseColor(const QString& phase) {
    if (phase == "forward") {
        return QColor(52, 101, 164);
    }
    if (phase == "backward") {
        return QColor(204, 102, 0);
    }
    return QColor(78, 154, 6);  // optimizer
}

QColor seriesColor(int index) {
    static const QColor colors[] = {QColor(52, 101, 164), QColor(204, 0, 0),
                                    QColor(78, 154, 6),   QColor(117, 80, 123),
                                    QColor(193, 125, 17), QColor(6, 152, 154)};
    return colors[index % 6];
}

QColor categoryColor(const QString& category) {
    static const std::pair<const char*, QColor> colors[] = {
        {"matmul", QColor(52, 101, 164)},      {"attention core", QColor(32, 74, 135)},
        {"softmax", QColor(204, 0, 0)},        {"normalisation", QColor(117, 80, 123)},
        {"elementwise", QColor(193, 125, 17)}, {"reduction", QColor(6, 152, 154)},
        {"copy/cast", QColor(136, 138, 133)},  {"optimizer", QColor(78, 154, 6)}};
    for (const auto& [name, color] : colors) {
        if (category == name) {
            return color;
        }
    }
    return QColor(186, 189, 182);  // other
}

QColor memoryColor(MemoryCategory category) {
    static const QColor colors[] = {
        QColor(52, 101, 164), QColor(204, 102, 0),  QColor(78, 154, 6),    QColor(204, 0, 0),
        QColor(237, 212, 0),  QColor(117, 80, 123), QColor(136, 138, 133), QColor(0, 150, 136)};
    // One per category: a category added without a colour does not compile.
    static_assert(std::size(colors) == kMemoryCategories);
    return colors[size_t(category)];
}

}  // namespace stepscope::ui
