#include "plot_style.h"

#include <qcustomplot.h>

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

}  // namespace stepscope::ui
