#include "widgets/plot_style.h"
#include "widgets/thinned_ticker.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <typeinfo>
#include <utility>

namespace stepscope::ui {

namespace {

const char kNoDataName[] = "stepscope-no-data";
const char kWholeNoteText[] = "stepscope-whole-text";

QCPItemText* noDataItem(const QCustomPlot* plot) {
    for (int i = 0; i < plot->itemCount(); ++i) {
        if (plot->item(i)->objectName() == kNoDataName) {
            return qobject_cast<QCPItemText*>(plot->item(i));
        }
    }
    return nullptr;
}

// The note's whole text broken into lines that fit the axis rect's width.
QString wrappedNote(const QCPItemText* note, const QCustomPlot* plot) {
    return wrapText(note->property(kWholeNoteText).toString(), note->font(),
                    std::max(40, plot->axisRect()->width() - 16));
}

}  // namespace

void stylePlot(QCustomPlot* plot, const QString& xLabel, const QString& yLabel) {
    QFont font = plot->font();
    font.setPointSize(10);
    QFont labelFont = font;
    labelFont.setPointSize(11);
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        axis->setTickLabelFont(font);
        axis->setLabelFont(labelFont);
        // A short axis (a chart on a small screen) drops labels, never overlaps
        // them; a ticker of the caller's own (integer steps) is left as it is.
        const QCPAxisTicker* ticker = axis->ticker().data();
        if (ticker && typeid(*ticker) == typeid(QCPAxisTicker)) {
            axis->setTicker(QSharedPointer<ThinnedTicker<QCPAxisTicker>>::create(axis));
        }
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
    QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot] { fitLegendToWidth(plot); });
    QObject::connect(plot, &QCustomPlot::afterLayout, plot, [plot] {
        // Margins for the labels as they are now: another layout. Not a
        // third in a row: a title wrapped narrows the axis rect, which could
        // let the other unwrap, and so on.
        const int changes = plot->property("stepscope-label-changes").toInt();
        // Tick labels were thinned for the axes' length before this layout:
        // once it changes they are thinned again, for the length drawn.
        const QSize axes = plot->axisRect()->size();
        const bool resized = plot->property("stepscope-axes-size").toSize() != axes;
        plot->setProperty("stepscope-axes-size", axes);
        // The no-data note wraps to the chart's width as the labels do.
        QCPItemText* note = noDataItem(plot);
        const bool rewrapped = note && note->text() != wrappedNote(note, plot);
        if (rewrapped) {
            note->setText(wrappedNote(note, plot));
        }
        if (!fitAxisLabels(plot) && !resized && !rewrapped) {
            plot->setProperty("stepscope-label-changes", 0);
        } else {
            plot->setProperty("stepscope-label-changes", changes + 1);
            if (changes < 2) {
                plot->replot(QCustomPlot::rpQueuedReplot);
            }
        }
    });
}

QString wrapText(const QString& text, const QFont& font, int width) {
    const QFontMetrics metrics(font);
    QStringList out;
    for (const QString& given : text.split('\n')) {
        QString line;
        for (const QString& word : given.split(' ')) {
            const QString longer = line.isEmpty() ? word : line + ' ' + word;
            if (!line.isEmpty() && metrics.horizontalAdvance(longer) > width) {
                out << line;
                line = word;
            } else {
                line = longer;
            }
        }
        out << line;
    }
    return out.join('\n');
}

namespace {

const char kWholeLabel[] = "stepscope-whole-label";
const char kShownLabel[] = "stepscope-shown-label";

int widestLine(const QString& text, const QFont& font) {
    const QFontMetrics metrics(font);
    int widest = 0;
    for (const QString& line : text.split('\n')) {
        widest = std::max(widest, metrics.horizontalAdvance(line));
    }
    return widest;
}

// The label in as few lines (at most three) as fit `room` pixels.
QString labelFitting(const QString& whole, const QFont& font, int room) {
    QString text = whole;
    const int length = widestLine(whole, font);
    for (int lines = 2; lines <= 3 && widestLine(text, font) > room; ++lines) {
        // Each line about a share of the whole, so that two lines are even.
        text = wrapText(whole, font, std::max(room, length / lines));
    }
    return text;
}

}  // namespace

bool fitAxisLabels(QCustomPlot* plot) {
    bool changed = false;
    const QRect chart = plot->viewport();
    for (QCPAxisRect* rect : plot->axisRects()) {
        for (QCPAxis* axis : rect->axes()) {
            const QString current = axis->label();
            // A label the code set since: the whole one, as it was given.
            const QString whole = current == axis->property(kShownLabel).toString()
                                      ? axis->property(kWholeLabel).toString()
                                      : current;
            if (whole.isEmpty()) {
                continue;
            }
            // Its room: the axis rect's cell, margins and all, but not the
            // legend's row above it, whose white box would hide its end.
            const QRect area = rect->rect();
            const QRect cell = rect->outerRect().intersected(chart);
            const bool across = axis->orientation() == Qt::Horizontal;
            const int centre = across ? area.center().x() : area.center().y();
            const int room = across ? 2 * std::min(centre - cell.left(), cell.right() - centre)
                                    : 2 * std::min(centre - cell.top(), cell.bottom() - centre);
            const QString shown = labelFitting(whole, axis->labelFont(), room);
            axis->setProperty(kWholeLabel, whole);
            axis->setProperty(kShownLabel, shown);
            if (shown != current) {
                axis->setLabel(shown);
                changed = true;
            }
        }
    }
    return changed;
}

void fitLegendToWidth(QCustomPlot* plot) {
    QCPLegend* legend = plot->legend;
    if (!legend || legend->itemCount() == 0) {
        return;
    }
    int widest = 1;
    for (int i = 0; i < legend->elementCount(); ++i) {
        if (const QCPLayoutElement* item = legend->elementAt(i)) {  // a wrapped grid has holes
            widest = std::max(widest, item->minimumOuterSizeHint().width());
        }
    }
    const int room =
        plot->viewport().width() - legend->margins().left() - legend->margins().right() - 8;
    const int columns = std::clamp(room / (widest + legend->columnSpacing()), 1, 12);
    if (legend->wrap() != columns) {
        legend->setWrap(columns);
        legend->setFillOrder(legend->fillOrder(), /*rearrange=*/true);
    }
}

void removeLegend(QCustomPlot* plot) {
    plot->legend->setVisible(false);
    plot->plotLayout()->take(plot->legend);
    plot->plotLayout()->simplify();
}

void keepDataReadable(QCustomPlot* plot) {
    const int least = std::max(plot->minimumHeight(), kMinPlotHeight);
    QObject::connect(plot, &QCustomPlot::afterLayout, plot, [plot, least] {
        // Not before the chart is shown at a size of its own: its layout
        // until then is for a size it never has.
        if (!plot->isVisible() || plot->height() < least) {
            return;
        }
        // What the legend and the axes take at this width, plus the data's share.
        const int around = plot->height() - plot->axisRect()->height();
        const int wanted = std::max(least, around + kReadableDataHeight);
        if (plot->minimumHeight() != wanted) {
            plot->setMinimumHeight(wanted);
        }
    });
}

void useLogAxis(QCPAxis* axis, double base) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new ThinnedTicker<QCPAxisTickerLog>(axis));
    ticker->setLogBase(base);
    axis->setTicker(ticker);
}

void useIntegerTicks(QCPAxis* axis) {
    QSharedPointer<QCPAxisTickerFixed> ticker(new ThinnedTicker<QCPAxisTickerFixed>(axis));
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    axis->setTicker(ticker);
}

void keepSaneSize(QCustomPlot* plot) {
    plot->setMinimumSize(kMinPlotWidth, kMinPlotHeight);
}

namespace {

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
    note->setProperty(kWholeNoteText, text);
    note->setText(wrappedNote(note, plot));
    plot->xAxis->setRange(0, 1);
    plot->yAxis->setRange(0, 1);
}

QString noDataText(const QCustomPlot* plot) {
    const QCPItemText* note = noDataItem(plot);
    return note ? note->property(kWholeNoteText).toString() : QString();
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
    if (phase == "comm wait") {  // a distributed step's wait for communication
        return QColor(117, 80, 123);
    }
    if (phase == "compute") {  // a profiler trace's computation, steps unnamed
        return QColor(96, 125, 139);
    }
    return QColor(78, 154, 6);  // optimizer
}

QColor seriesColor(int index) {
    // Tango's and Tableau's darker tones: apart in hue and lightness.
    static const QColor colors[kSeriesColours] = {
        QColor(52, 101, 164), QColor(204, 0, 0),    QColor(78, 154, 6),   QColor(117, 80, 123),
        QColor(193, 125, 17), QColor(6, 152, 154),  QColor(0, 0, 0),      QColor(227, 119, 194),
        QColor(140, 86, 75),  QColor(188, 189, 34), QColor(255, 127, 14), QColor(136, 138, 133)};
    return colors[std::abs(index) % kSeriesColours];
}

Qt::PenStyle seriesStyle(int index) {
    static const Qt::PenStyle styles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                          Qt::DashDotDotLine};
    return styles[(std::abs(index) / kSeriesColours) % std::size(styles)];
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
