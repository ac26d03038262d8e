// The run views on their own, fed hand-made runs (QT_QPA_PLATFORM=offscreen):
// the breakdown's figures against sums done here, names shown once and in
// full on hover, the timeline's legend against the colours it draws, and
// charts that keep a readable size and say so when there is nothing to draw.
#include <QtTest/QtTest>

#include <qcustomplot.h>

#include <QHeaderView>
#include <QSet>
#include <QStandardItemModel>
#include <QStyledItemDelegate>
#include <QTableView>
#include <cmath>
#include <map>

#include "controllers/exporter.h"
#include "models/run_document.h"
#include "views/breakdown_view.h"
#include "views/kernel_timeline_view.h"
#include "views/step_timing_view.h"
#include "widgets/column_fit.h"
#include "widgets/plot_style.h"

using namespace stepscope;
using namespace stepscope::ui;

namespace {

const std::string kLongKernel =
    "void at::native::(anonymous namespace)::vectorized_layer_norm_backward_kernel<float, "
    "float, 4, 128>(long, float const*, float const*, float const*, float*, float*)";

// Two warm-up and four measured steps; operators as a traced CPU run keeps them.
RunResult tracedRun() {
    RunResult run;
    run.config.warmupSteps = 2;
    run.config.measuredSteps = 4;
    for (int i = 0; i < 6; ++i) {
        StepRecord step;
        step.index = i;
        step.warmup = i < 2;
        step.totalMs = 10.0 + i;
        step.forwardMs = 4.0;
        step.backwardMs = 6.0 + i;
        run.steps.push_back(step);
    }
    run.operators = {
        {"aten::linear", "matmul", "forward", 16, 12.5},
        {"aten::softmax", "softmax", "forward", 4, 3.25},
        {"aten::add", "elementwise", "forward", 24, 1.75},
        {"aten::linear", "matmul", "backward", 8, 2.0},  // same name, another phase
        {"AddmmBackward0", "matmul", "backward", 16, 21.0},
        {kLongKernel, "normalisation", "backward", 4, 5.5},
        {"aten::_foreach_add_", "optimizer", "optimizer", 4, 0.8},
    };
    return run;
}

// A delegate that counts the cells it is asked to measure.
class CountingDelegate final : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override {
        ++measured;
        return QStyledItemDelegate::sizeHint(option, index);
    }
    mutable int measured = 0;
};

// Built member by member: GCC 12 takes a braced RunResult{} for uninitialised.
RunDocument makeDocument(int id, const RunResult& result, const QString& title) {
    RunDocument made;
    made.id = id;
    made.result = result;
    made.title = title;
    return made;
}

QStringList shownHeaders(const QTableView* table) {
    QStringList headers;
    const QAbstractItemModel* model = table->model();
    for (int column = 0; column < model->columnCount(); ++column) {
        if (!table->isColumnHidden(column)) {
            headers << model->headerData(column, Qt::Horizontal).toString().replace('\n', ' ');
        }
    }
    return headers;
}

QStringList allHeaders(const QAbstractItemModel* model) {
    QStringList headers;
    for (int column = 0; column < model->columnCount(); ++column) {
        headers << model->headerData(column, Qt::Horizontal).toString().replace('\n', ' ');
    }
    return headers;
}

bool saneRange(const QCPRange& range) {
    return std::isfinite(range.lower) && std::isfinite(range.upper) && range.upper > range.lower &&
           range.size() < 1e6;
}

// What is wrong with an empty chart; empty when nothing is.
QString emptyPlotProblem(QCustomPlot* plot) {
    plot->replot();  // lays the chart out at its present size
    if (plot->width() < kMinPlotWidth || plot->height() < kMinPlotHeight) {
        return QString("collapsed to %1×%2").arg(plot->width()).arg(plot->height());
    }
    // The drawing area too, not only the widget (a hidden legend squeezes it).
    const QRect area = plot->axisRect()->rect();
    if (area.width() < plot->width() / 2 || area.height() < plot->height() / 3) {
        return QString("axis rect squeezed to %1×%2 in %3×%4")
            .arg(area.width())
            .arg(area.height())
            .arg(plot->width())
            .arg(plot->height());
    }
    if (!saneRange(plot->xAxis->range()) || !saneRange(plot->yAxis->range())) {
        return "axis range not sane";
    }
    if (noDataText(plot).isEmpty()) {
        return "no note saying why it is empty";
    }
    if (plot->xAxis->tickLabels() || plot->yAxis->tickLabels()) {
        return "tick labels of nothing (0..0 or the last run's)";
    }
    return {};
}

}  // namespace

class TestViews : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void breakdownShowsPerStepAndShareOfPhase() {
        RunDocument document = makeDocument(1, tracedRun(), "traced");
        const RunResult& run = document.result;
        // Independently: per (phase, name) totals, phase totals, measured steps.
        std::map<std::pair<std::string, std::string>, double> totals;
        std::map<std::string, double> phaseTotals;
        for (const auto& row : run.operators) {
            totals[{row.phase, row.name}] += row.totalMs;
            phaseTotals[row.phase] += row.totalMs;
        }
        const double measured = 4;

        BreakdownView view;
        view.showRun(&document);
        view.setGrouping("op", "all");
        const QAbstractItemModel* model = view.tableModel();
        QCOMPARE(model->rowCount(), int(totals.size()));
        for (int r = 0; r < model->rowCount(); ++r) {
            const std::string name =
                model->index(r, BreakdownView::NameColumn).data().toString().toStdString();
            const std::string phase =
                model->index(r, BreakdownView::PhaseColumn).data().toString().toStdString();
            QVERIFY2(totals.count({phase, name}), name.c_str());
            const double perStep = totals[{phase, name}] / measured;
            const double share = totals[{phase, name}] / phaseTotals[phase];
            const QModelIndex perStepCell = model->index(r, BreakdownView::PerStepColumn);
            const QModelIndex shareCell = model->index(r, BreakdownView::ShareColumn);
            QVERIFY2(std::abs(perStepCell.data(Qt::UserRole).toDouble() - perStep) < 1e-12,
                     name.c_str());
            QCOMPARE(perStepCell.data().toString(), QString::number(perStep, 'f', 3));
            QVERIFY2(std::abs(shareCell.data(Qt::UserRole).toDouble() - share) < 1e-12,
                     name.c_str());
            QCOMPARE(shareCell.data().toString(), QString::number(100 * share, 'f', 1) + "%");
            QCOMPARE(model->index(r, BreakdownView::NameColumn).data(Qt::ToolTipRole).toString(),
                     QString::fromStdString(name));
        }
        // The long kernel-like name is whole in its tooltip, whatever the cell shows.
        const QModelIndexList found =
            model->match(model->index(0, BreakdownView::NameColumn), Qt::ToolTipRole,
                         QString::fromStdString(kLongKernel), 1, Qt::MatchExactly);
        QCOMPARE(found.size(), 1);
        // Two lines in the header, one in a file.
        QCOMPARE(model->headerData(BreakdownView::PerStepColumn, Qt::Horizontal).toString(),
                 QString("ms /\nstep"));
        QCOMPARE(model->headerData(BreakdownView::ShareColumn, Qt::Horizontal).toString(),
                 QString("share of\nphase"));
        QVERIFY2(exporter::tableToCsv(model).startsWith("operator,category,phase,calls,total "
                                                        "ms,ms / step,mean ms / call,share of "
                                                        "phase\n"),
                 qPrintable(exporter::tableToCsv(model).left(120)));
    }

    void breakdownShowsEachNameOnce_data() {
        QTest::addColumn<QString>("by");
        QTest::addColumn<QString>("phase");
        QTest::newRow("op, all") << "op"
                                 << "all";
        QTest::newRow("op, backward") << "op"
                                      << "backward";
        QTest::newRow("category, all") << "category"
                                       << "all";
        QTest::newRow("category, forward") << "category"
                                           << "forward";
    }

    void breakdownShowsEachNameOnce() {
        QFETCH(QString, by);
        QFETCH(QString, phase);
        RunDocument document = makeDocument(1, tracedRun(), "traced");
        BreakdownView view;
        view.showRun(&document);
        view.setGrouping(by, phase);
        const QTableView* table = view.tableView();
        const QStringList headers = shownHeaders(table);
        QCOMPARE(QSet<QString>(headers.begin(), headers.end()).size(), headers.size());
        const QStringList exported = allHeaders(view.exportModel());
        QCOMPARE(exported, headers);  // the export holds what the table shows
        const QAbstractItemModel* model = view.tableModel();
        QVERIFY(model->rowCount() > 0);
        for (int r = 0; r < model->rowCount(); ++r) {
            const QString name = model->index(r, BreakdownView::NameColumn).data().toString();
            int shown = 0;  // the phase column may say "optimizer" beside that category
            for (int column = 0; column < model->columnCount(); ++column) {
                shown += column != BreakdownView::PhaseColumn && !table->isColumnHidden(column) &&
                         model->index(r, column).data().toString() == name;
            }
            QVERIFY2(shown == 1, qPrintable(name));
        }
    }

    void breakdownChartsNameBarsInFull() {
        RunDocument document = makeDocument(1, tracedRun(), "traced");
        BreakdownView view;
        view.resize(1200, 900);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.showRun(&document);
        view.setGrouping("op", "backward");
        QCustomPlot* top = view.topPlot();
        top->replot();
        // Bars largest first: AddmmBackward0 (21 ms), then the long kernel (5.5 ms).
        const int count = 3;
        QCOMPARE(view.rows().size(), size_t(count));
        QCOMPARE(view.rows()[1].name, kLongKernel);
        const double y = top->yAxis->coordToPixel(count - 1);  // the second bar's key
        const QRect area = top->axisRect()->rect();
        QCOMPARE(view.topBarAt(QPointF(top->xAxis->coordToPixel(1.0), y)), 1);  // on the bar
        QCOMPARE(view.topBarAt(QPointF(area.left() - 30, y)), 1);               // on its label
        QCOMPARE(view.topBarAt(QPointF(area.left() + 5, area.top() - 5)), -1);
        QVERIFY(view.topBarToolTip(1).contains(QString::fromStdString(kLongKernel)));
        QVERIFY(view.topBarToolTip(1).contains("1.375 ms / step"));  // 5.5 ms over 4 steps
        QVERIFY(view.topBarToolTip(count).isEmpty());
        // Each bar in its row's category colour, as the shares chart has it.
        int bars = 0;
        for (int p = 0; p < top->plottableCount(); ++p) {
            auto* series = qobject_cast<QCPBars*>(top->plottable(p));
            QVERIFY(series);
            for (auto bar = series->data()->constBegin(); bar != series->data()->constEnd();
                 ++bar) {
                const BreakdownRow& row = view.rows()[size_t(count - int(bar->key))];
                QCOMPARE(series->brush().color(),
                         categoryColor(QString::fromStdString(row.category)));
                ++bars;
            }
        }
        QCOMPARE(bars, count);
        QVERIFY(top->plottableCount() >= 2);  // the rows are of more than one category

        // The stacked shares name the category under the cursor.
        QCustomPlot* shares = view.sharesPlot();
        shares->replot();
        const double x = shares->xAxis->coordToPixel(1);  // the forward column
        // Forward: elementwise 1.75, matmul 12.5, softmax 3.25 of 17.5, stacked in that order.
        const QString bottom = view.sharesToolTipAt(QPointF(x, shares->yAxis->coordToPixel(5)));
        QVERIFY2(bottom.contains("elementwise") && bottom.contains("10.0%"), qPrintable(bottom));
        const QString middle = view.sharesToolTipAt(QPointF(x, shares->yAxis->coordToPixel(50)));
        QVERIFY2(middle.contains("matmul"), qPrintable(middle));
    }

    // Issue 31: "peak memory (Mi", "total ms over the measured step": a
    // title longer than its axis ran past the chart's edge. It wraps onto
    // more lines where it must, whole again where there is room.
    void axisTitlesStayWithinTheChart() {
        QCustomPlot plot;
        const QString title = "the total time over the measured steps (ms)";
        stylePlot(&plot, title, title);
        plot.addGraph()->setData({1.0, 2.0}, {1.0, 2.0});
        plot.rescaleAxes();
        const auto inside = [&](const QCPAxis* axis) {
            const QRect area = plot.axisRect()->rect();
            const QRect text = QFontMetrics(axis->labelFont())
                                   .boundingRect(QRect(), Qt::TextDontClip, axis->label());
            const bool across = axis->orientation() == Qt::Horizontal;
            const int centre = across ? area.center().x() : area.center().y();
            // Within the chart, and below the legend's white box.
            const int start = across ? 0 : plot.legend->outerRect().bottom();
            const int end = across ? plot.width() : plot.height();
            return centre - text.width() / 2 >= start && centre + text.width() / 2 <= end;
        };
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        for (const QSize size : {QSize(320, 240), QSize(900, 700), QSize(260, 900)}) {
            plot.resize(size);
            QApplication::processEvents();
            plot.replot();
            QApplication::processEvents();  // the queued layout for the wrapped titles
            plot.replot();
            for (const QCPAxis* axis : {plot.xAxis, plot.yAxis}) {
                QVERIFY2(inside(axis), qPrintable(QString("%1×%2: '%3'")
                                                      .arg(size.width())
                                                      .arg(size.height())
                                                      .arg(axis->label())));
                // The words all there, in order; one line where it fits.
                QCOMPARE(QString(axis->label()).replace('\n', ' '), title);
            }
        }
        QVERIFY(plot.xAxis->label().contains('\n'));   // 260 px wide: the x title wraps
        QVERIFY(!plot.yAxis->label().contains('\n'));  // 900 px tall: the y title whole
    }

    // A distributed step waits for communication between backward and the
    // optimizer: the wait is a band of its own, so the bars add up to the step.
    void aDistributedStepsWaitIsStackedInItsOrder() {
        RunResult run;
        for (int i = 0; i < 3; ++i) {
            StepRecord step;
            step.index = i;
            step.warmup = i == 0;
            step.forwardMs = 4.0;
            step.backwardMs = 6.0;
            step.communicationWaitMs = 3.0 + i;
            step.optimizerMs = 1.0;
            step.totalMs = 14.0 + i;
            run.steps.push_back(step);
        }
        const RunDocument document = makeDocument(1, run, "ranks");
        StepTimingView view;
        view.showRun(&document);
        QStringList names;
        QCPBars* top = nullptr;
        for (int i = 0; i < view.plot()->plottableCount(); ++i) {
            if (auto* bars = qobject_cast<QCPBars*>(view.plot()->plottable(i))) {
                names << bars->name();
                top = bars->name() == "optimizer" ? bars : top;
            }
        }
        QVERIFY2(names.contains("comm wait") && names.contains("comm wait (warm-up)"),
                 qPrintable(names.join(", ")));
        // Forward, backward, the wait, then the optimizer on top: step 2's stack is its total.
        QVERIFY(top && top->barBelow() && top->barBelow()->name() == "comm wait");
        QCOMPARE(top->barBelow()->barBelow()->name(), QString("backward"));
        QCOMPARE(top->dataMainValue(1) + top->barBelow()->dataMainValue(1) +
                     top->barBelow()->barBelow()->dataMainValue(1) +
                     top->barBelow()->barBelow()->barBelow()->dataMainValue(1),
                 16.0);
    }

    // Issue 31: twelve lines of a sweep drew six colours twice.
    void noTwoSeriesLookAlike() {
        QSet<QString> seen;
        for (int i = 0; i < 5 * kSeriesColours; ++i) {
            seen << seriesColor(i).name() + QString::number(int(seriesStyle(i)));
        }
        QCOMPARE(seen.size(), 5 * kSeriesColours);
        QSet<QString> colours;
        for (int i = 0; i < kSeriesColours; ++i) {
            colours << seriesColor(i).name();
        }
        QCOMPARE(colours.size(), kSeriesColours);
    }

    void timelineLegendListsEveryColour() {
        RunDocument document = makeDocument(1, RunResult(), "timeline");
        StepTimeline& timeline = document.result.timeline;
        timeline.step = 3;
        auto span = [&](SpanKind kind, const char* name, const char* category, const char* phase,
                        const char* track, double start, double duration) {
            timeline.spans.push_back({kind, name, category, phase, track, "", start, duration});
        };
        span(SpanKind::Range, "step 3", "", "", "ranges", 0, 100);
        span(SpanKind::Range, "forward", "", "forward", "ranges", 0, 40);
        span(SpanKind::Range, "backward", "", "backward", "ranges", 40, 60);
        span(SpanKind::Operator, "aten::linear", "matmul", "forward", "thread 0", 1, 10);
        span(SpanKind::Operator, "aten::softmax", "softmax", "forward", "thread 0", 12, 5);
        span(SpanKind::Operator, "AddmmBackward0", "matmul", "backward", "thread 0", 41, 20);
        span(SpanKind::Kernel, "elementwise_kernel", "elementwise", "backward", "stream 7", 45, 3);
        span(SpanKind::Kernel, "mystery_kernel", "something new", "backward", "stream 7", 50, 2);
        span(SpanKind::Kernel, "misc_kernel", "other", "backward", "stream 7", 53, 2);

        KernelTimelineView view;
        view.showRun(&document);
        QCustomPlot* plot = view.plot();
        QSet<QRgb> drawn;  // the phase bands' and the spans' bars'
        for (int i = 0; i < plot->itemCount(); ++i) {
            if (const auto* rect = qobject_cast<QCPItemRect*>(plot->item(i))) {
                drawn.insert(rect->brush().color().rgba());
            }
        }
        for (const QColor& color : view.barColors()) {
            drawn.insert(color.rgba());
        }
        QSet<QRgb> listed;
        QStringList names;
        QVERIFY(plot->legend->visible());
        for (int i = 0; i < plot->legend->itemCount(); ++i) {
            // Cells of the wrapped legend's grid past the last entry are empty.
            if (auto* entry = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i))) {
                listed.insert(entry->plottable()->brush().color().rgba());
                names << entry->plottable()->name();
            }
        }
        // 5 categories ("something new" is drawn in the grey of "other") + 2 phase bands.
        QCOMPARE(drawn.size(), 6);
        QCOMPARE(listed, drawn);
        for (const char* name : {"matmul", "softmax", "elementwise", "something new", "other",
                                 "forward phase", "backward phase"}) {
            QVERIFY2(names.contains(name), name);
        }
        QCOMPARE(names.size(), 7);

        // Another run with nothing traced: no legend left from the last one.
        RunDocument plain = makeDocument(2, RunResult(), "plain");
        view.showRun(&plain);
        for (int i = 0; i < plot->legend->itemCount(); ++i) {
            QVERIFY(!qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i)));
        }
    }

    // A CPU step lasts hundreds of ms: its axis reads "250" ms, not "250000"
    // or "2.5·10⁵" µs; zoomed to a few µs it reads µs again.
    void timelineAxisSpeaksMillisecondsOrMicroseconds() {
        RunDocument document = makeDocument(1, RunResult(), "long step");
        StepTimeline& timeline = document.result.timeline;
        timeline.step = 1;
        timeline.spans.push_back(
            {SpanKind::Operator, "aten::mm", "matmul", "forward", "thread 0", "", 0, 1'000'000});
        KernelTimelineView view;
        view.showRun(&document);
        QCPAxis* axis = view.plot()->xAxis;
        QCOMPARE(axis->label(), QString("time in step (ms)"));
        view.plot()->replot();
        const QVector<QString> labels = axis->tickVectorLabels();
        QVERIFY(!labels.isEmpty());
        for (const QString& label : labels) {
            QVERIFY2(!label.contains("·") && label.size() <= 5, qPrintable(label));
        }
        QVERIFY(labels.contains("200") || labels.contains("250"));
        view.setVisibleRange(100, 140);
        QCOMPARE(axis->label(), QString("time in step (µs)"));
        QVERIFY(axis->tickVectorLabels().contains("120.0"));
    }

    void emptyChartsKeepASaneSize() {
        RunDocument empty = makeDocument(1, RunResult(), "empty");
        RunDocument traced = makeDocument(2, tracedRun(), "traced");

        StepTimingView timing;
        BreakdownView breakdown;
        KernelTimelineView timeline;
        for (QWidget* view : std::initializer_list<QWidget*>{&timing, &breakdown, &timeline}) {
            view->resize(150, 100);  // a window made small: charts must not collapse
            view->show();
            QVERIFY(QTest::qWaitForWindowExposed(view));
        }
        const std::pair<const RunDocument*, const char*> cases[] = {
            {nullptr, "no run"}, {&empty, "empty run"}, {&traced, "back to none"}};
        for (const auto& [document, label] : cases) {
            const RunDocument* shown = document == &traced ? nullptr : document;
            if (document == &traced) {  // data first, then none: nothing stale is left
                timing.showRun(&traced);
                breakdown.showRun(&traced);
                QVERIFY(noDataText(timing.plot()).isEmpty());
                QVERIFY(timing.plot()->xAxis->tickLabels());
                QVERIFY(noDataText(breakdown.topPlot()).isEmpty());
            }
            timing.showRun(shown);
            breakdown.showRun(shown);
            timeline.showRun(shown);
            QApplication::processEvents();
            const std::pair<QCustomPlot*, const char*> plots[] = {
                {timing.plot(), "step timing"},
                {breakdown.topPlot(), "breakdown top rows"},
                {breakdown.sharesPlot(), "breakdown shares"},
                {timeline.plot(), "timeline"}};
            for (const auto& [plot, name] : plots) {
                const QString problem = emptyPlotProblem(plot);
                QVERIFY2(problem.isEmpty(),
                         qPrintable(QString("%1, %2: %3")
                                        .arg(QLatin1String(label), QLatin1String(name), problem)));
            }
        }
        // A live run without steps yet is shown again and again: its axes stay put.
        timing.showRun(&empty);
        const QCPRange x = timing.plot()->xAxis->range();
        const QCPRange y = timing.plot()->yAxis->range();
        for (int i = 0; i < 5; ++i) {
            timing.showRun(&empty);
        }
        QCOMPARE(timing.plot()->xAxis->range(), x);
        QCOMPARE(timing.plot()->yAxis->range(), y);
    }

    // A table being laid out, or a window dragged wider, is resized many
    // times: each shares out the room again, but the cells (500 sites' take
    // 13 ms) are measured again only when they change.
    void columnsAreMeasuredOncePerChangeOfTheirCells() {
        QStandardItemModel model(200, 3);
        for (int row = 0; row < model.rowCount(); ++row) {
            model.setItem(row, 0, new QStandardItem(QString::number(row * 1000)));
            model.setItem(row, 1, new QStandardItem(QString("module.%1").arg(row)));
            model.setItem(row, 2, new QStandardItem("aten::mm"));
        }
        QTableView table;
        table.setModel(&model);
        auto* counting = new CountingDelegate(&table);
        table.setItemDelegate(counting);
        new ColumnFit(&table, {1});
        table.resize(500, 300);
        table.show();
        QVERIFY(QTest::qWaitForWindowExposed(&table));
        QApplication::processEvents();
        const int measured = counting->measured;
        QVERIFY(measured > 0);
        const int firstWidth = table.columnWidth(0);
        for (const int width : {560, 640, 720, 900}) {
            table.resize(width, 300);
            QApplication::processEvents();
            // The elastic column takes what the others leave: no gap, no overflow.
            QCOMPARE(table.horizontalHeader()->length(), table.viewport()->width());
            QCOMPARE(table.columnWidth(0), firstWidth);
        }
        QCOMPARE(counting->measured, measured);
        // A cell grows: measured again at the loop's next turn (not in the
        // resize that comes first), and its column as wide as it.
        model.item(150, 0)->setText(QString("%1").arg(1234567890123.0, 0, 'f', 0));
        table.resize(880, 300);
        QCOMPARE(counting->measured, measured);
        QApplication::processEvents();
        QVERIFY(counting->measured > measured);
        const int widened = table.columnWidth(0);
        QVERIFY(widened > firstWidth);
        const auto* view = static_cast<const QAbstractItemView*>(&table);
        QCOMPARE(widened, std::max(view->sizeHintForColumn(0),
                                   table.horizontalHeader()->sectionSizeHint(0)));
    }
};

QTEST_MAIN(TestViews)
#include "tst_views.moc"
