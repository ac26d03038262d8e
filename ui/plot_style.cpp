#include "plot_style.h"

#include <qcustomplot.h>

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

}  // namespace stepscope::ui
