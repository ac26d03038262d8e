// PyTorch profiler traces in the app (issue 30, items 2, 3 and 5): a folder of
// rank traces opens off the UI thread as one recording, a run per rank, into
// the Breakdown (kernels by name with HTA's kernel types, the ranks' table
// with the slowest rank per step) and the Timeline (streams, host threads,
// profiler-step bands, hover); what is not a trace is refused with the
// reader's own message in the dialog. The Timeline links a kernel to its launch
// and finds every span of a large trace on hover; HTA's kernel types have one
// colour in tables and charts; a trace's kernels per stream and its profiler
// steps match `stepscope-cli breakdown --json`.
#include <QtTest/QtTest>

#include <qcustomplot.h>

#include <QListWidget>
#include <QMessageBox>
#include <QProcess>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <numeric>

#include "controllers/run_list.h"
#include "main_window.h"
#include "models/format.h"
#include "models/run_document.h"
#include "models/run_label.h"
#include "models/timeline_index.h"
#include "pages/config_panel.h"
#include "views/breakdown_view.h"
#include "views/compare_view.h"
#include "views/kernel_timeline_view.h"
#include "views/memory_view.h"
#include "views/parts/rank_compare_page.h"
#include "views/parts/trace_ranks_panel.h"
#include "views/parts/trace_steps_panel.h"
#include "views/ranks_view.h"
#include "views/step_timing_view.h"
#include "widgets/kernel_type_colors.h"
#include "widgets/plot_style.h"

using namespace stepscope;
using namespace stepscope::ui;

namespace {

const QString kTraces = QStringLiteral(STEPSCOPE_TRACES);

TimelineSpan makeSpan(SpanKind kind, const char* name, const char* track, double start,
                      double duration, const char* category = "") {
    TimelineSpan span;
    span.kind = kind;
    span.name = name;
    span.category = category;
    span.track = track;
    span.startUs = start;
    span.durationUs = duration;
    return span;
}

const BreakdownRow* rowNamed(const BreakdownView& view, const std::string& name) {
    for (const BreakdownRow& row : view.rows()) {
        if (row.name == name) {
            return &row;
        }
    }
    return nullptr;
}

const TimelineSpan* spanNamed(const RunDocument& document, const std::string& prefix,
                              double startUs) {
    for (const TimelineSpan& span : document.result.timeline.spans) {
        if (span.name.rfind(prefix, 0) == 0 && span.startUs == startUs) {
            return &span;
        }
    }
    return nullptr;
}

// Moves the mouse over the timeline at a time on a track, as a user does.
void hover(KernelTimelineView& timeline, double timeUs, int track) {
    QCustomPlot* plot = timeline.plot();
    const QPointF pixel(plot->xAxis->coordToPixel(timeUs), plot->yAxis->coordToPixel(track));
    QMouseEvent move(QEvent::MouseMove, pixel, plot->mapToGlobal(pixel), Qt::NoButton, Qt::NoButton,
                     Qt::NoModifier);
    QApplication::sendEvent(plot, &move);
}

void click(KernelTimelineView& timeline, double timeUs, int track) {
    QCustomPlot* plot = timeline.plot();
    const QPointF pixel(plot->xAxis->coordToPixel(timeUs), plot->yAxis->coordToPixel(track));
    for (const QEvent::Type type : {QEvent::MouseButtonPress, QEvent::MouseButtonRelease}) {
        QMouseEvent event(type, pixel, plot->mapToGlobal(pixel), Qt::LeftButton,
                          type == QEvent::MouseButtonPress ? Qt::LeftButton : Qt::NoButton,
                          Qt::NoModifier);
        QApplication::sendEvent(plot, &event);
    }
}

// `stepscope-cli breakdown PATH --json`, as a user runs it.
nlohmann::json cliBreakdown(const QString& path) {
    QProcess cli;
    cli.start(QStringLiteral(STEPSCOPE_CLI), {"breakdown", path, "--json"});
    if (!cli.waitForFinished(60000) || cli.exitCode() != 0) {
        qWarning("%s", cli.readAllStandardError().constData());
        return {};
    }
    return nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
}

}  // namespace

class TestTraceApp : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // gpu_two_ranks: the hand-counted figures of tst_kineto_trace.cpp.
    void aFolderOfRankTracesOpensAsOneRecording() {
        MainWindow window;
        window.show();
        QVERIFY(window.openRunFile(kTraces + "/gpu_two_ranks"));
        QCOMPARE(int(window.documents().size()), 2);
        const RunDocument& rank0 = window.documents().front();
        QVERIFY(rank0.trace() && window.documents().back().trace());
        QCOMPARE(rank0.trace()->rank, int64_t(0));
        QCOMPARE(window.documents().back().trace()->rank, int64_t(1));
        window.selectDocument(rank0.id);

        BreakdownView* breakdown = window.breakdownView();
        QVERIFY(window.selectTab("Breakdown"));
        breakdown->setGrouping("kernel", "all");
        const BreakdownRow* gemm = rowNamed(
            *breakdown,
            "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4>(Params)");
        QVERIFY(gemm);
        QCOMPARE(gemm->calls, int64_t(2));
        QVERIFY(std::abs(gemm->totalMs - 0.070) < 1e-12);
        QCOMPARE(gemm->category, std::string("COMPUTATION"));
        QVERIFY(std::abs(gemm->msPerStep - 0.035) < 1e-12);  // two analysed profiler steps
        const BreakdownRow* memset = rowNamed(*breakdown, "Memset (Device)");
        QVERIFY(memset && memset->category == "MEMORY");

        TraceRanksPanel* panel = breakdown->tracePanel();
        QVERIFY(!panel->isHidden());
        QStandardItemModel* ranks = panel->ranksModel();
        QCOMPARE(ranks->rowCount(), 2);
        QCOMPARE(ranks->item(0, TraceRanksPanel::IdleColumn)->text(), QString("33.0 (19.4%)"));
        QCOMPARE(ranks->item(0, TraceRanksPanel::ComputeColumn)->text(), QString("81.0 (47.6%)"));
        QCOMPARE(ranks->item(0, TraceRanksPanel::StepColumn)->text(), QString("100.0"));
        // Each analysed step has one slowest rank, marked on its row.
        QStringList slowest;
        for (int row = 0; row < 2; ++row) {
            slowest << ranks->item(row, TraceRanksPanel::SlowestColumn)->text();
        }
        QVERIFY2(!slowest.join(", ").isEmpty(), qPrintable(slowest.join("|")));
        QStandardItemModel* types = panel->kernelTypesModel();
        QCOMPARE(types->rowCount(), 6);
        QCOMPARE(types->item(0, 1)->text(), QString("COMMUNICATION"));
        QCOMPARE(types->item(0, 0)->text(), QString("44.0"));
        QVERIFY(panel->summaryText().contains("rank 0 of 2"));

        KernelTimelineView* timeline = window.timelineView();
        QVERIFY(window.selectTab("Timeline"));
        const QStringList tracks = timeline->tracks();
        for (const char* track : {"stream 7", "stream 20", "stream 21"}) {
            QVERIFY2(tracks.contains(track), qPrintable(tracks.join(", ")));
        }
        const int stream7 = int(tracks.indexOf("stream 7"));
        // The first gemm runs [20, 60) µs on the trace's clock; the timeline starts at 0 µs.
        const TimelineSpan* under = timeline->spanAt(30.0, stream7);
        QVERIFY(under);
        QVERIFY(timeline->describe(*under).contains("cutlass"));
        bool band = false;
        for (const TimelineSpan& span : rank0.result.timeline.spans) {
            band |= span.kind == SpanKind::Range && span.name == "ProfilerStep#2";
        }
        QVERIFY(band);
        int bands = 0;
        for (int i = 0; i < timeline->plot()->itemCount(); ++i) {
            bands += timeline->plot()->item(i)->layer()->name() == "background";
        }
        QCOMPARE(bands, 3);  // a band per profiler step
        int spans = 0;
        for (const TimelineSpan& span : rank0.result.timeline.spans) {
            spans += span.kind != SpanKind::Range;
        }
        QCOMPARE(timeline->drawnSpans(), spans);  // all in view, none left out

        // A run's breakdown hides the panel again.
        breakdown->showRun(nullptr);
        QVERIFY(panel->isHidden());
    }

    // Issue 40, item 4: a trace in the run list read "ctx 128 · train-step ·
    // fp32 · attention naive · cpu · steps 5", the panel's defaults; the panel
    // showed a stale train-step form; Memory told it to tick "Trace memory".
    // Its label, panel and empty views say what it is and holds, nothing else.
    void aTraceSaysWhatItIsInTheListThePanelAndItsEmptyViews() {
        MainWindow window;
        window.resize(1024, 768);
        window.show();
        QVERIFY(window.openRunFile(kTraces + "/gpu_two_ranks"));
        QApplication::processEvents();
        const RunDocument& rank0 = window.documents().front();
        window.selectDocument(rank0.id);
        QListWidget* list = window.runList()->widget();
        QCOMPARE(list->count(), 2);
        const RunConfig defaults = window.configPanel()->config();  // the form, not the trace's
        const QStringList invented = configFields(defaults);
        QVERIFY(invented.size() > 3);
        for (int row = 0; row < list->count(); ++row) {
            const QString label = list->item(row)->text() + "\n" + list->item(row)->toolTip();
            QVERIFY2(label.contains("PyTorch profiler trace") &&
                         label.contains(QString("rank %1 of 2").arg(row)),
                     qPrintable(label));
            for (const QString& field : invented) {
                QVERIFY2(!label.contains(field), qPrintable(field + " in " + label));
            }
        }
        ConfigPanel* panel = window.configPanel();
        QVERIFY(panel->isReadOnly() && !panel->formShown());
        const QString facts = panel->viewingText();
        for (const char* said : {"recorded by PyTorch", "PyTorch profiler trace", "0 of 2",
                                 "Steps found", "profiler step", "rank0.json"}) {
            QVERIFY2(facts.contains(said), qPrintable(QString(said) + " not in " + facts));
        }
        for (const QString& field : invented) {
            QVERIFY2(!facts.contains(field), qPrintable(field + " in " + facts));
        }
        // The facts are in view, not scrolled away above the form.
        QLabel* banner = nullptr;
        for (QLabel* label : panel->findChildren<QLabel*>()) {
            if (label->text() == facts) {
                banner = label;
            }
        }
        QVERIFY(banner && banner->isVisible());
        const QRect shown(banner->mapTo(&window, QPoint(0, 0)), banner->size());
        QVERIFY2(window.rect().contains(shown.topLeft()), "the panel's note is out of view");
        // Memory says what a trace holds, not what to tick.
        QVERIFY(window.selectTab("Memory"));
        QApplication::processEvents();
        const QString memory = window.memoryView()->caption();
        QVERIFY2(memory.contains("profiler trace") && !memory.contains("Tick"), qPrintable(memory));
        QCOMPARE(noDataText(window.memoryView()->plot()),
                 QString("A profiler trace has no memory trace"));
        // "Edit" gives the user's form back, editable.
        panel->editCopyButton()->click();
        QVERIFY(!panel->isReadOnly() && panel->formShown());
    }

    // gpu_two_ranks/rank0.json: the first gemm (correlation 1) runs [20, 60) µs on
    // stream 7, launched by cudaLaunchKernel [10, 15) on thread 100 inside
    // aten::mm [9, 16) (tests/data/make_kineto_traces.py).
    void aKernelLinksToItsLaunch() {
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(window.openRunFile(kTraces + "/gpu_two_ranks"));
        const RunDocument& rank0 = window.documents().front();
        window.selectDocument(rank0.id);
        KernelTimelineView* timeline = window.timelineView();
        QVERIFY(window.selectTab("Timeline"));
        const double origin = rank0.result.timeline.clockOriginUs;
        const TimelineSpan* gemm = spanNamed(rank0, "void cutlass", 20 - origin);
        const TimelineSpan* launch = spanNamed(rank0, "cudaLaunchKernel", 10 - origin);
        QVERIFY(gemm && launch);
        QCOMPARE(launch->track, std::string("thread 100"));
        const std::vector<const TimelineSpan*> ofGemm = timeline->linkedSpans(*gemm);
        QCOMPARE(int(ofGemm.size()), 1);
        QCOMPARE(ofGemm.front(), launch);
        const std::vector<const TimelineSpan*> ofLaunch = timeline->linkedSpans(*launch);
        QCOMPARE(int(ofLaunch.size()), 1);
        QCOMPARE(ofLaunch.front(), gemm);

        const int thread = int(timeline->tracks().indexOf("thread 100"));
        const int stream = int(timeline->tracks().indexOf("stream 7"));
        timeline->setVisibleRange(0, 100 - origin);
        hover(*timeline, 30 - origin, stream);
        QCOMPARE(timeline->hoveredSpan(), gemm);
        QCOMPARE(timeline->linkedFrom(), gemm);
        std::vector<QCPItemLine*> lines = timeline->linkLines();
        QCOMPARE(int(lines.size()), 1);
        QCOMPARE(lines[0]->start->coords(), QPointF(10 - origin, thread));
        QCOMPARE(lines[0]->end->coords(), QPointF(20 - origin, stream));
        const QString kernelText = timeline->describe(*gemm);
        QVERIFY2(kernelText.contains("launched by cudaLaunchKernel on thread 100 at 10.0 µs"),
                 qPrintable(kernelText));

        // The launch: the innermost span under the mouse, inside aten::mm.
        hover(*timeline, 12 - origin, thread);
        QCOMPARE(timeline->hoveredSpan(), launch);
        lines = timeline->linkLines();
        QCOMPARE(int(lines.size()), 1);
        QCOMPARE(lines[0]->end->coords(), QPointF(20 - origin, stream));
        const QString launchText = timeline->describe(*launch);
        QVERIFY2(launchText.contains("launches void cutlass") && launchText.contains("stream 7"),
                 qPrintable(launchText));
        hover(*timeline, 9.5 - origin, thread);
        QCOMPARE(timeline->hoveredSpan()->name, std::string("aten::mm"));
        QVERIFY(timeline->linkLines().empty());  // an operator of a trace launches nothing itself

        // A click keeps the link while the mouse moves on; a click on nothing lets go.
        click(*timeline, 30 - origin, stream);
        hover(*timeline, 95 - origin, thread);
        QCOMPARE(timeline->linkedFrom(), gemm);
        QCOMPARE(int(timeline->linkLines().size()), 1);
        click(*timeline, 95 - origin, thread);
        QVERIFY(!timeline->linkedFrom());
        QVERIFY(timeline->linkLines().empty());
    }

    // Our own runs keep the name of a kernel's launching operator: the link
    // goes to the latest operator of that name that began before the kernel.
    void ourRunsLinkAKernelToItsLaunchingOperator() {
        RunDocument document;
        document.id = 1;
        StepTimeline& timeline = document.result.timeline;
        timeline.step = 3;
        auto add = [&timeline](SpanKind kind, const char* name, const char* track, double start,
                               double duration, const char* detail) {
            TimelineSpan span;
            span.kind = kind;
            span.name = name;
            span.category = "matmul";
            span.track = track;
            span.detail = detail;
            span.startUs = start;
            span.durationUs = duration;
            timeline.spans.push_back(span);
        };
        add(SpanKind::Operator, "aten::mm", "thread 0", 0, 10, "layers.0.attn");
        add(SpanKind::Operator, "aten::mm", "thread 0", 20, 10, "layers.0.ffn");
        add(SpanKind::Kernel, "gemm", "stream 7", 25, 15, "aten::mm");
        KernelTimelineView view;
        view.resize(900, 500);
        view.show();
        view.showRun(&document);
        const std::vector<const TimelineSpan*> linked = view.linkedSpans(timeline.spans[2]);
        QCOMPARE(int(linked.size()), 1);
        QCOMPARE(linked.front(), &timeline.spans[1]);
        QCOMPARE(view.linkedSpans(timeline.spans[1]).front(), &timeline.spans[2]);
        QVERIFY(view.linkedSpans(timeline.spans[0]).empty());
        QVERIFY(
            view.describe(timeline.spans[2]).contains("launched by aten::mm on thread 0 at 20.0"));
        hover(view, 30, int(view.tracks().indexOf("stream 7")));
        QCOMPARE(int(view.linkLines().size()), 1);
        QCOMPARE(view.linkLines()[0]->start->coords(), QPointF(20, 0));
    }

    // The index behind drawing and hover, on nested host spans (a trace's
    // operators hold runtime calls) and a stream: the innermost span at a
    // time, the nearest within a slack, and only the spans in a window.
    void theTimelineIndexFindsNestedSpansAndVisitsOnlyThoseInView() {
        StepTimeline timeline;
        timeline.step = 1;
        auto add = [&timeline](SpanKind kind, const char* name, const char* track, double start,
                               double duration) {
            timeline.spans.push_back(makeSpan(kind, name, track, start, duration));
            return int(timeline.spans.size() - 1);
        };
        add(SpanKind::Range, "ProfilerStep#1", "ranges", 0, 100);
        const int kernelA = add(SpanKind::Kernel, "a", "stream 7", 5, 10);
        const int linear = add(SpanKind::Operator, "aten::linear", "thread 1", 0, 50);
        const int mm = add(SpanKind::Operator, "aten::mm", "thread 1", 10, 20);
        const int launch = add(SpanKind::Operator, "cudaLaunchKernel", "thread 1", 12, 3);
        const int add2 = add(SpanKind::Operator, "aten::add", "thread 1", 35, 5);
        const int kernelB = add(SpanKind::Kernel, "b", "stream 7", 40, 10);
        timeline.spans[size_t(kernelB)].launch = launch;
        const TimelineIndex index(timeline);
        QCOMPARE(index.tracks(), QStringList({"thread 1", "stream 7"}));
        QCOMPARE(index.trackOf(0), -1);  // the range is a band, on no track
        QCOMPARE(index.depthOf(linear), 0);
        QCOMPARE(index.depthOf(mm), 1);
        QCOMPARE(index.depthOf(launch), 2);
        QCOMPARE(index.depthOf(add2), 1);
        QCOMPARE(index.spanAt(13, 0), launch);
        QCOMPARE(index.spanAt(20, 0), mm);      // after the launch, inside aten::mm
        QCOMPARE(index.spanAt(32, 0), linear);  // between its children
        QCOMPARE(index.spanAt(60, 0), -1);
        QCOMPARE(index.spanAt(51, 0, 2), linear);    // within the slack of its end
        QCOMPARE(index.spanAt(30, 1), -1);           // the stream's gap
        QCOMPARE(index.spanAt(30, 1, 10), kernelB);  // nearer the next kernel's start (10 away)
        QCOMPARE(index.launchOf(kernelB), launch);
        QCOMPARE(index.launchedBy(launch), std::vector<int>({kernelB}));
        QCOMPARE(index.launchOf(kernelA), -1);
        std::vector<int> visited;
        index.forEachIn(0, 20, 36, [&visited](int span) { visited.push_back(span); });
        QCOMPARE(visited, std::vector<int>({linear, mm, add2}));  // not the launch, ended by 20
        visited.clear();
        index.forEachIn(1, 16, 39, [&visited](int span) { visited.push_back(span); });
        QVERIFY(visited.empty());
    }

    // Over 50,000 spans, most narrower than a pixel at first: those are merged
    // into blocks, not drawn as bars of their own, and hover still finds any
    // span: a short kernel between long ones, its launch, zoomed in on or not.
    void hoverFindsSpansThatAreNotDrawn() {
        RunDocument document;
        document.id = 2;
        StepTimeline& timeline = document.result.timeline;
        timeline.step = 1;
        const int longKernels = 60000;
        const double shortStart = 2.0 * (longKernels / 2) + 1.3;  // in a gap
        for (int i = 0; i < longKernels; ++i) {
            timeline.spans.push_back(
                makeSpan(SpanKind::Kernel, "long", "stream 7", 2.0 * i, 1, "COMPUTATION"));
        }
        timeline.spans.push_back(makeSpan(SpanKind::Operator, "cudaLaunchKernel", "thread 1",
                                          shortStart - 0.5, 0.05, "cuda_runtime"));
        TimelineSpan kernel =
            makeSpan(SpanKind::Kernel, "short", "stream 7", shortStart, 0.1, "MEMORY");
        kernel.launch = int32_t(timeline.spans.size() - 1);
        timeline.spans.push_back(kernel);
        const TimelineSpan& shortKernel = timeline.spans.back();

        KernelTimelineView view;
        view.resize(1200, 500);
        view.show();
        view.showRun(&document);
        QCOMPARE(view.drawnSpans(), longKernels + 2);   // all in view
        QCOMPARE(view.mergedSpans(), longKernels + 2);  // and none a bar of its own
        const int stream = int(view.tracks().indexOf("stream 7"));
        const int thread = int(view.tracks().indexOf("thread 1"));
        QCOMPARE(view.spanAt(shortStart + 0.05, stream), &shortKernel);
        QCOMPARE(view.spanAt(shortStart - 0.25, stream), nullptr);  // the gap before it
        QCOMPARE(view.spanAt(shortStart - 0.25, stream, 0.5)->name, std::string("long"));
        QCOMPARE(view.spanAt(shortStart - 0.48, thread), &timeline.spans[size_t(longKernels)]);
        hover(view, shortStart + 0.05, stream);  // a pixel holds dozens of kernels: one of them
        QVERIFY(view.hoveredSpan() && view.hoveredSpan()->track == "stream 7");
        // Zoomed in on it, it is drawn as a bar of its own, and hovered.
        view.setVisibleRange(shortStart - 1, shortStart + 1);
        QCOMPARE(view.drawnSpans(), 4);  // its long neighbours, its launch and itself
        QCOMPARE(view.mergedSpans(), 0);
        hover(view, shortStart + 0.05, stream);
        QCOMPARE(view.hoveredSpan(), &shortKernel);
        const std::vector<QCPItemLine*> lines = view.linkLines();
        QCOMPARE(int(lines.size()), 1);
        QCOMPARE(lines[0]->start->coords(), QPointF(shortStart - 0.5, thread));
        QVERIFY(view.describe(shortKernel).contains("launched by cudaLaunchKernel on thread 1"));
    }

    // One colour per HTA kernel type (and overlap): the Breakdown's table cells,
    // its shares chart, the kernel types' table and the Timeline's legend.
    void kernelTypesHaveOneColourEverywhere() {
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(window.openRunFile(kTraces + "/gpu_two_ranks"));
        window.selectDocument(window.documents().front().id);
        BreakdownView* breakdown = window.breakdownView();
        QVERIFY(window.selectTab("Breakdown"));
        breakdown->setGrouping("kernel", "all");
        QAbstractItemModel* table = breakdown->tableModel();
        QSet<QString> typesSeen;
        for (int row = 0; row < table->rowCount(); ++row) {
            const QModelIndex cell = table->index(row, BreakdownView::CategoryColumn);
            const std::optional<QColor> expected = traceCategoryColor(cell.data().toString());
            QVERIFY2(expected, qPrintable(cell.data().toString()));
            QCOMPARE(cell.data(Qt::DecorationRole).value<QColor>(), *expected);
            typesSeen << cell.data().toString();
        }
        QCOMPARE(typesSeen.size(), 4);  // COMPUTATION, COMMUNICATION, MEMORY, OTHER
        int bars = 0;
        for (int i = 0; i < breakdown->sharesPlot()->plottableCount(); ++i) {
            const QCPAbstractPlottable* plottable = breakdown->sharesPlot()->plottable(i);
            QCOMPARE(plottable->brush().color(), *traceCategoryColor(plottable->name()));
            ++bars;
        }
        QCOMPARE(bars, 4);
        QStandardItemModel* types = breakdown->tracePanel()->kernelTypesModel();
        QSet<QRgb> colours;
        for (int row = 0; row < types->rowCount(); ++row) {
            const QStandardItem* name = types->item(row, 1);
            QCOMPARE(name->data(Qt::DecorationRole).value<QColor>(),
                     *traceCategoryColor(name->text()));
            colours << name->data(Qt::DecorationRole).value<QColor>().rgb();
        }
        QCOMPARE(colours.size(), types->rowCount());  // each combination its own colour
        KernelTimelineView* timeline = window.timelineView();
        QVERIFY(window.selectTab("Timeline"));
        // Issue 40: HTA's kernel types and the host operators' categories
        // share the legend; each row says which it is, and no kernel type
        // or runtime call wears an operator category's colour.
        int legend = 0;
        QSet<QRgb> traceColours, operatorColours;
        for (int i = 0; i < timeline->plot()->plottableCount(); ++i) {
            const QCPAbstractPlottable* entry = timeline->plot()->plottable(i);
            const QString group = entry->name().section(": ", 0, 0);
            const QString name = entry->name().section(": ", 1);
            if (group == "kernels" || group == "runtime") {
                const std::optional<QColor> color = traceCategoryColor(name);
                QVERIFY2(color, qPrintable(entry->name()));
                QCOMPARE(entry->brush().color(), *color);
                traceColours << color->rgb();
                ++legend;
            } else if (group == "operators") {
                QVERIFY2(!traceCategoryColor(name), qPrintable(entry->name()));
                operatorColours << entry->brush().color().rgb();
            }
        }
        QVERIFY(legend >= 4);                 // the kernel types and the runtime calls
        QVERIFY(!operatorColours.isEmpty());  // the host operators' categories beside them
        QVERIFY(!traceColours.intersects(operatorColours));
        for (const char* category :
             {"matmul", "attention core", "softmax", "normalisation", "elementwise", "reduction",
              "copy/cast", "optimizer", "other"}) {
            QVERIFY2(!traceColours.contains(categoryColor(category).rgb()), category);
        }
    }

    // A CPU trace's Step timing was a tiny empty square under a steps table
    // of two rows, every summary cell "–": its steps have no phases. Each
    // analysed step is one bar, and the summary's whole-step row is the CLI's.
    void aTracesStepsAreDrawnAndSummarisedAsTheCliCountsThem() {
        const nlohmann::json cli = cliBreakdown(kTraces + "/cpu_gloo");
        QVERIFY(!cli.is_null());
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(window.openRunFile(kTraces + "/cpu_gloo"));
        QVERIFY(window.selectTab("Step timing"));
        for (size_t rank = 0; rank < 2; ++rank) {
            window.selectDocument(window.documents()[rank].id);
            std::vector<double> analysed;
            for (const nlohmann::json& step : cli.at("ranks")[rank].at("steps")) {
                if (step.at("analysed").get<bool>()) {
                    analysed.push_back(step.at("duration_us").get<double>() / 1e3);
                }
            }
            QVERIFY(analysed.size() >= 2);
            StepTimingView* view = window.stepTimingView();
            QCOMPARE(view->plottedSteps(), int(analysed.size()));
            QCustomPlot* plot = view->exportTargets()[0].plot;
            QCPBars* bars = nullptr;
            for (int i = 0; i < plot->plottableCount(); ++i) {
                bars = bars ? bars : qobject_cast<QCPBars*>(plot->plottable(i));
            }
            QVERIFY(bars);
            QCOMPARE(bars->name(), QString("step"));
            QCOMPARE(bars->data()->size(), int(analysed.size()));
            for (int i = 0; i < int(analysed.size()); ++i) {
                QVERIFY(std::abs(bars->data()->at(i)->value - analysed[size_t(i)]) < 1e-9);
            }
            QVERIFY(plot->yAxis->range().upper >=
                    *std::max_element(analysed.begin(), analysed.end()));
            // Row 0 (total), column 0 (mean).
            QAbstractItemModel* summary = view->exportTargets()[1].table;
            const double mean =
                std::accumulate(analysed.begin(), analysed.end(), 0.0) / double(analysed.size());
            QCOMPARE(summary->index(0, 0).data().toString(), formatMs(mean));
            QCOMPARE(summary->index(1, 0).data().toString(), QString("–"));  // no forward recorded
        }
    }

    // A folder of gloo rank traces in the Ranks tab: a lane per rank with
    // its gloo:* collectives, each rank's communication as the CLI's
    // breakdown --json counts it, and a hovered collective found on both.
    void aTraceFoldersRanksShowAsARunsRanksDo() {
        const nlohmann::json cli = cliBreakdown(kTraces + "/cpu_gloo");
        QVERIFY(!cli.is_null());
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(window.openRunFile(kTraces + "/cpu_gloo"));
        QVERIFY(window.selectTab("Ranks"));
        RanksView* view = window.ranksView();
        QCOMPARE(int(view->timeline().lanes().size()), 2);
        QCOMPARE(view->ranksModel()->rowCount(), 2);
        QVERIFY2(view->captionText().contains("gloo threads"), qPrintable(view->captionText()));
        for (int rank = 0; rank < 2; ++rank) {
            const nlohmann::json& expected = cli.at("ranks")[size_t(rank)];
            int analysed = 0;
            for (const nlohmann::json& step : expected.at("steps")) {
                analysed += step.at("analysed").get<bool>();
            }
            const double perStep =
                expected.at("communication").at("time_us").get<double>() / 1e3 / analysed;
            QCOMPARE(view->ranksModel()->item(rank, RanksView::CommunicationColumn)->text(),
                     formatMs(perStep));
            QVERIFY(!view->timeline().lanes()[size_t(rank)].collectives.empty());
        }
        // Hover the middle of rank 0's first collective: outlined on both ranks.
        view->plot()->replot();
        const auto& first = view->timeline().lanes()[0].collectives.front();
        const QPointF at(view->plot()->xAxis->coordToPixel((first.startMs + first.endMs) / 2),
                         view->plot()->yAxis->coordToPixel(0.15));
        QVERIFY(!view->hoverAt(at).isEmpty());
        QCOMPARE(view->highlighted(), 2);
        // The same view follows the selected rank's document: still both lanes.
        window.selectDocument(window.documents()[1].id);
        QCOMPARE(int(view->timeline().lanes().size()), 2);
    }

    // Two folders of rank traces ticked in Compare: each recording's ranks
    // once, rank by rank, whichever of its ranks' documents are ticked.
    void twoTraceFoldersCompareRankByRank() {
        MainWindow window;
        window.show();
        QVERIFY(window.openRunFile(kTraces + "/cpu_gloo"));
        QVERIFY(window.openRunFile(kTraces + "/gpu_two_ranks"));
        QCOMPARE(int(window.documents().size()), 4);
        QList<int> all;
        for (const RunDocument& document : window.documents()) {
            all << document.id;
        }
        window.setCompared(all);  // both ranks of both recordings
        RankComparePage* page = window.compareView()->rankCompare();
        QStandardItemModel* rows = page->model();
        QCOMPARE(rows->rowCount(), 4);  // 2 ranks each, not 4 each
        QStringList ranks;
        for (int row = 0; row < rows->rowCount(); ++row) {
            ranks << rows->item(row, RankComparePage::RankColumn)->text();
        }
        QCOMPARE(ranks, QStringList({"0", "1", "0", "1"}));
        QVERIFY(window.compareView()->pages()->isTabEnabled(
            window.compareView()->pages()->indexOf(page)));
    }

    // The app's per-stream rows and profiler steps are the CLI's figures.
    void perStreamAndPerStepRowsMatchTheCli() {
        const nlohmann::json cli = cliBreakdown(kTraces + "/gpu_two_ranks");
        QVERIFY(!cli.is_null());
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(window.openRunFile(kTraces + "/gpu_two_ranks"));
        BreakdownView* breakdown = window.breakdownView();
        QVERIFY(window.selectTab("Breakdown"));
        for (size_t rank = 0; rank < 2; ++rank) {
            window.selectDocument(window.documents()[rank].id);
            const nlohmann::json& expected = cli.at("ranks")[rank];
            breakdown->setGrouping("stream", "all");
            const nlohmann::json& streams = expected.at("kernels_per_stream");
            QCOMPARE(breakdown->rows().size(), streams.size());
            QCOMPARE(breakdown->tableModel()
                         ->headerData(BreakdownView::PhaseColumn, Qt::Horizontal)
                         .toString(),
                     QString("stream"));
            // Long kernel names and a column more: the names keep room to be read.
            QVERIFY(breakdown->tableView()->columnWidth(BreakdownView::NameColumn) >=
                    BreakdownView::kMinNameWidth);
            for (const nlohmann::json& row : streams) {
                const std::string stream = "stream " + std::to_string(row.at("stream").get<int>());
                bool found = false;
                for (const BreakdownRow& shown : breakdown->rows()) {
                    if (shown.name == row.at("name") && shown.phase == stream) {
                        found = true;
                        QCOMPARE(shown.calls, row.at("calls").get<int64_t>());
                        QVERIFY(std::abs(shown.totalMs * 1e3 - row.at("total_us").get<double>()) <
                                1e-9);
                    }
                }
                QVERIFY2(found, row.dump().c_str());
            }
            QStandardItemModel* steps = breakdown->tracePanel()->stepsPanel()->stepsModel();
            QVERIFY(!breakdown->tracePanel()->stepsPanel()->isHidden());
            const nlohmann::json& cliSteps = expected.at("steps");
            QCOMPARE(size_t(steps->rowCount()), cliSteps.size());
            for (int row = 0; row < steps->rowCount(); ++row) {
                const nlohmann::json& step = cliSteps[size_t(row)];
                auto value = [&](int column) {
                    return steps->item(row, column)->data(Qt::UserRole).toDouble();
                };
                QCOMPARE(value(TraceStepsPanel::StepColumn), step.at("step").get<double>());
                QCOMPARE(value(TraceStepsPanel::DurationColumn),
                         step.at("duration_us").get<double>());
                QCOMPARE(value(TraceStepsPanel::KernelsColumn), step.at("kernels").get<double>());
                QCOMPARE(value(TraceStepsPanel::KernelTimeColumn),
                         step.at("kernel_us").get<double>());
                const QString note = steps->item(row, TraceStepsPanel::NoteColumn)->text();
                QCOMPARE(note.contains("left out"), !step.at("analysed").get<bool>());
                QCOMPARE(note.contains("slowest rank"), step.at("slowest").get<bool>());
            }
        }
        // A run has no streams to group by, and no profiler steps.
        breakdown->showRun(nullptr);
        QVERIFY(breakdown->tracePanel()->stepsPanel()->isHidden());
    }

    void aSingleGzipTraceOpens() {
        MainWindow window;
        QVERIFY(window.openRunFile(kTraces + "/gpu_two_ranks/rank1.pt.trace.json.gz"));
        QCOMPARE(int(window.documents().size()), 1);
        QVERIFY(window.documents().front().trace());
        QCOMPARE(window.documents().front().trace()->rank, int64_t(1));
    }

    void aBrokenTraceSaysWhatTheReaderSays() {
        QTemporaryDir dir;
        QFile whole(kTraces + "/gpu_two_ranks/rank1.pt.trace.json.gz");
        QVERIFY(whole.open(QIODevice::ReadOnly));
        const QByteArray bytes = whole.readAll();
        QFile cut(dir.filePath("cut.pt.trace.json.gz"));
        QVERIFY(cut.open(QIODevice::WriteOnly));
        cut.write(bytes.left(bytes.size() / 2));
        cut.close();
        MainWindow window;
        window.show();
        QVERIFY(!window.openRunFile(cut.fileName()));
        QVERIFY(window.lastErrorDialog() && window.lastErrorDialog()->isVisible());
        const QString text = window.lastErrorDialog()->text();
        QVERIFY2(text.contains("truncated gzip") && text.contains(cut.fileName()),
                 qPrintable(text));
        QVERIFY(window.documents().empty());
    }
};

QTEST_MAIN(TestTraceApp)
#include "tst_trace_app.moc"
