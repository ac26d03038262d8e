// stepscope-ui-bench: two figures of the desktop app, printed as Markdown.
//  1. Responsiveness: while a run streams steps into the main window, a 1 ms
//     probe timer on the UI thread records the gaps between its ticks; the
//     longest gap is the longest time the UI thread was busy (or starved).
//  2. Opening and drawing a run file with 100,000 step records.
//  3. Opening and drawing a run with one million memory events, and the
//     queries the memory view answers on hover and on zoom; the RSS the
//     window holds for it. `memory10m` (on demand only: 20 s, 4 GB) does
//     the same with ten million.
//  4. The UI thread while that run file opens: a 2 ms probe timer records
//     the longest gap between its ticks from File → Open until it is drawn.
//  5. A PyTorch memory snapshot of a million events: read, open into the
//     Memory tab and draw, hover, and what the app then holds (its RSS).
//  6. A PyTorch profiler trace in the Timeline tab: open and draw, a redraw
//     (what each pan or zoom step costs), hover with the launch link drawn.
//  7. `stages FILE.pickle`: where a snapshot's open goes off the UI thread,
//     stage by stage (read, parse, timeline, trace, index, sites, freed).
// Sections can be named: stepscope-ui-bench [stream] [steps] [memory] [open]
// [memory10m] [snapshot [FILE.pickle]] [stages FILE.pickle] [trace FILE.json]
// (without FILE, snapshot takes the synthetic run's million events written as
// a snapshot by StepScope's memory_viz export; trace needs one, e.g. from
// make_kineto_traces.py large).
// `stepscope-ui-bench gallery RUN.json OUTDIR` instead saves pictures of the
// memory view of that run in each of its modes (docs/memory-view.md).
#include <qcustomplot.h>

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>

#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <random>

#include "analysis/snapshot_as_run.h"
#include "analysis/snapshot_timeline.h"
#include "controllers/category_rules_control.h"
#include "interop/memory_snapshot.h"
#include "interop/memviz_export.h"
#include "main_window.h"
#include "models/memory_index.h"
#include "models/memory_run_data.h"
#include "models/snapshot_recording.h"
#include "pages/config_panel.h"
#include "profile/memory_trace.h"
#include "results/run_file.h"
#include "util/atomic_file.h"
#include "views/kernel_timeline_view.h"
#include "views/memory_view.h"
#include "views/step_timing_view.h"

using namespace stepscope;

namespace {

struct Gaps {
    double maxMs = 0;
    double p99Ms = 0;
    size_t ticks = 0;
};

Gaps measureRun(const RunConfig& config) {
    ui::MainWindow window;
    window.resize(1400, 900);
    window.show();
    window.configPanel()->setConfig(config);
    std::vector<double> gaps;
    QElapsedTimer clock;
    QTimer probe;
    probe.setTimerType(Qt::PreciseTimer);
    probe.setInterval(1);
    QObject::connect(&probe, &QTimer::timeout, [&] {
        gaps.push_back(double(clock.nsecsElapsed()) / 1e6);
        clock.restart();
    });
    QSignalSpy finished(&window, &ui::MainWindow::runFinished);
    clock.start();
    probe.start();
    window.startRun();
    finished.wait(600000);
    probe.stop();
    std::sort(gaps.begin(), gaps.end());
    Gaps result;
    result.ticks = gaps.size();
    if (!gaps.empty()) {
        result.maxMs = gaps.back();
        result.p99Ms = gaps[gaps.size() * 99 / 100];
    }
    return result;
}

RunResult syntheticRun(int steps) {
    RunResult run;
    run.config.model = *findPreset("small");
    run.config.measuredSteps = steps - 5;
    run.config.warmupSteps = 5;
    run.parameterCount = parameterCount(run.config.model);
    run.environment.libtorchVersion = "synthetic";
    std::mt19937 random(1);
    std::normal_distribution<double> noise(0, 1);
    for (int i = 0; i < steps; ++i) {
        StepRecord step;
        step.index = i;
        step.warmup = i < 5;
        step.forwardMs = 20 + noise(random);
        step.backwardMs = 40 + noise(random);
        step.optimizerMs = 5 + 0.1 * noise(random);
        step.totalMs = *step.forwardMs + *step.backwardMs + *step.optimizerMs + 0.2;
        step.loss = 9.0 - 1e-5 * i;
        run.steps.push_back(step);
    }
    run.summary = summarizeSteps(run.steps, run.config, std::nullopt);
    return run;
}

// 500,000 allocations and their frees over 100 steps, shaped like a training
// run: parameters and optimizer state made once, the rest per phase.
RunResult syntheticMemoryRun(size_t events) {
    RunResult run = syntheticRun(10);
    MemoryTrace& trace = run.memory;
    trace.device = "cpu";
    trace.paths = {"layers.0.attn", "layers.0.ffn", "MmBackward0"};
    std::mt19937 random(2);
    std::uniform_int_distribution<int64_t> size(256, 4 << 20);
    std::vector<std::pair<uint64_t, int64_t>> live;
    const int steps = 100;
    const size_t perStep = events / size_t(steps);
    double time = 0;
    int64_t total = 0;
    uint64_t address = 1 << 20;
    auto push = [&](uint64_t at, int64_t bytes, MemoryCategory category, int phase, int step) {
        trace.timeUs.push_back(time);
        trace.address.push_back(at);
        trace.bytes.push_back(bytes);
        trace.category.push_back(uint8_t(category));
        trace.phase.push_back(uint8_t(phase));
        trace.step.push_back(step);
        trace.path.push_back(phase == 2 ? 2 : phase == 1 ? int32_t(at % 2) : -1);
        total += bytes;
        trace.allocated.push_back(total);
        trace.reserved.push_back(0);
        time += 1.0;
    };
    for (int step = 0; step < steps; ++step) {
        for (int phase = 1; phase <= 3; ++phase) {
            const double start = time;
            for (size_t i = 0; i < perStep / 6; ++i) {  // an allocation and its free each
                const int64_t bytes = size(random);
                const MemoryCategory category =
                    phase == 1 ? MemoryCategory::Activations : MemoryCategory::Temporaries;
                push(address, bytes, category, phase, step);
                live.emplace_back(address, bytes);
                address += uint64_t(bytes);
                if (live.size() > 64) {
                    push(live.front().first, -live.front().second, category, phase, step);
                    live.erase(live.begin());
                }
            }
            trace.phases.push_back({uint8_t(phase), step, start, time});
        }
    }
    return run;
}

// Reads a run file alone, then opens it in a fresh window on `tab` and draws
// that tab's chart; both timed. The window stays for further queries.
// How many times a chart is drawn while it lives, and for how long in all:
// a draw of a million events is most of an open.
struct DrawCount {
    explicit DrawCount(QCustomPlot* chart)
        : started(QObject::connect(chart, &QCustomPlot::beforeReplot, [this] { timer.start(); })),
          ended(QObject::connect(chart, &QCustomPlot::afterReplot, [this] {
              ++draws;
              ms += double(timer.nsecsElapsed()) / 1e6;
          })) {}
    ~DrawCount() {
        QObject::disconnect(started);
        QObject::disconnect(ended);
    }
    DrawCount(const DrawCount&) = delete;
    DrawCount& operator=(const DrawCount&) = delete;

    int draws = 0;
    double ms = 0;
    QElapsedTimer timer;
    QMetaObject::Connection started, ended;
};

struct Opened {
    double readMs = 0;
    double openMs = 0;
    int draws = 0;      // the chart's draws while the file opened
    double drawMs = 0;  // their time in all
    std::unique_ptr<ui::MainWindow> window;
};

Opened openAndDraw(const QString& path, const QString& tab,
                   QCustomPlot* (*chartOf)(ui::MainWindow&)) {
    Opened opened;
    QElapsedTimer timer;
    timer.start();
    readRunFile(path.toStdString());
    opened.readMs = double(timer.nsecsElapsed()) / 1e6;
    opened.window = std::make_unique<ui::MainWindow>();
    opened.window->resize(1400, 900);
    opened.window->selectTab(tab);
    opened.window->show();
    QApplication::processEvents();
    QCustomPlot* chart = chartOf(*opened.window);
    const DrawCount counted(chart);
    timer.restart();
    opened.window->openRunFile(path);
    chart->replot(QCustomPlot::rpImmediateRefresh);
    QApplication::processEvents();
    opened.openMs = double(timer.nsecsElapsed()) / 1e6;
    opened.draws = counted.draws;
    opened.drawMs = counted.ms;
    return opened;
}

// The process's resident memory now, in MB (Linux; 0 elsewhere).
double residentMb() {
    QFile status("/proc/self/status");
    if (!status.open(QIODevice::ReadOnly)) {
        return 0;
    }
    for (const QByteArray& line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:")) {
            return line.mid(6).trimmed().split(' ').first().toDouble() / 1024.0;
        }
    }
    return 0;
}

// A 2 ms probe timer on the UI thread while `work` runs and until `done()`
// holds, then 50 ms more: the longest gap between its ticks is the longest
// the window did not answer. Timed until `done()`.
struct UiGap {
    double maxGapMs = 0;
    double ms = 0;
    size_t ticks = 0;
};

UiGap measureUiGap(const std::function<void()>& work, const std::function<bool()>& done) {
    UiGap gap;
    QElapsedTimer sinceTick;
    QTimer probe;
    probe.setTimerType(Qt::PreciseTimer);
    probe.setInterval(2);
    QObject::connect(&probe, &QTimer::timeout, [&] {
        gap.maxGapMs = std::max(gap.maxGapMs, double(sinceTick.nsecsElapsed()) / 1e6);
        sinceTick.restart();
        ++gap.ticks;
    });
    QElapsedTimer total;
    total.start();
    sinceTick.start();
    probe.start();
    work();
    while (!done()) {
        QApplication::processEvents(QEventLoop::AllEvents, 5);
    }
    gap.ms = double(total.nsecsElapsed()) / 1e6;
    QElapsedTimer settle;
    settle.start();
    while (settle.elapsed() < 50) {
        QApplication::processEvents(QEventLoop::AllEvents, 5);
    }
    gap.maxGapMs = std::max(gap.maxGapMs, double(sinceTick.nsecsElapsed()) / 1e6);
    return gap;
}

// Events handled for a while: what the last change set off has happened.
void settle(int ms = 100) {
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < ms) {
        QApplication::processEvents(QEventLoop::AllEvents, 5);
    }
}

// The lowest band in the column nearest the middle that has one (each
// allocation's mode sums the smallest in a grey band, which may fill a column).
QPointF lowestBand(const ui::MemoryView* view, const QRect& area) {
    const QCPAxis* x = view->plot()->xAxis;
    const QCPAxis* y = view->plot()->yAxis;
    for (int offset = 0; offset < area.width() / 2; offset += 4) {
        for (const int column : {area.center().x() - offset, area.center().x() + offset}) {
            for (int row = area.bottom() - 2; row > area.top(); row -= 2) {
                if (view->allocationAt(x->pixelToCoord(column) * 1e3,
                                       y->pixelToCoord(row) * 1024.0 * 1024.0)) {
                    return QPointF(column, row);
                }
            }
        }
    }
    return area.center();
}

// The mouse moved over the lowest band near `middleUs` (the lowest drawn: in
// each allocation's mode the smallest are summed on top) at three zooms
// around it (the whole run, a hundredth of it, 5 ms): the slowest, in ms,
// of the hover itself (the allocation found, its outline drawn on its
// layer) and of the hover until the window has painted it. The view is
// left showing the whole run, nothing hovered.
struct HoverMs {
    double hover = 0;
    double painted = 0;
};
HoverMs slowestHover(ui::MemoryView* view, double middleUs) {
    view->fit();
    const auto [startUs, endUs] = view->timeRange();
    HoverMs slowest;
    for (const double span : {endUs - startUs, (endUs - startUs) / 100, 5000.0}) {
        view->setTimeRange(middleUs - span / 2, middleUs + span / 2);
        view->plot()->replot(QCustomPlot::rpImmediateRefresh);
        const QPointF lowest = lowestBand(view, view->plot()->axisRect()->rect());
        view->hoverAt(QPointF(-10, -10));
        settle();  // what the zoom set off (sampling the categories again) done first
        QElapsedTimer timer;
        timer.start();
        view->hoverAt(lowest);
        slowest.hover = std::max(slowest.hover, double(timer.nsecsElapsed()) / 1e6);
        QApplication::processEvents();
        slowest.painted = std::max(slowest.painted, double(timer.nsecsElapsed()) / 1e6);
        if (!view->hovered()) {
            std::fprintf(stderr, "ui-bench: no allocation under the mouse (span %.0f µs)\n", span);
        }
        view->hoverAt(QPointF(-10, -10));
    }
    view->fit();
    view->plot()->replot(QCustomPlot::rpImmediateRefresh);
    return slowest;
}

// Where a snapshot's open goes off the UI thread, stage by stage, three
// times, as the app's reader and the memory view's preparation do them one
// after the other: the file read into memory, the pickle parsed into the
// snapshot, the busiest device's timeline, its memory trace, the memory
// index, the sites of the whole run, what each block saves for backward,
// and all of it freed again.
void benchSnapshotStages(const QString& path) {
    std::printf(
        "\n## A snapshot's open off the UI thread, stage by stage (%s, %.1f MB)\n\n"
        "| attempt | events | read file ms | parse ms | timeline ms | trace ms | index ms | "
        "sites ms | saved ms | freed ms | in all ms |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        qPrintable(QFileInfo(path).fileName()), double(QFileInfo(path).size()) / 1e6);
    for (int attempt = 1; attempt <= 3; ++attempt) {
        std::vector<double> ms;
        QElapsedTimer all;
        all.start();
        QElapsedTimer timer;
        timer.start();
        const auto lap = [&] {
            ms.push_back(double(timer.nsecsElapsed()) / 1e6);
            timer.restart();
        };
        size_t events = 0;
        {
            std::string bytes(size_t(QFileInfo(path).size()), '\0');
            std::ifstream(path.toStdString(), std::ios::binary)
                .read(bytes.data(), std::streamsize(bytes.size()));
            lap();
            const MemorySnapshot snapshot = parseMemorySnapshot(std::move(bytes), "bench");
            lap();
            const SnapshotTimeline timeline = buildTimeline(snapshot, busiestDevice(snapshot));
            lap();
            RunResult run;
            run.origin = kOriginMemorySnapshot;
            run.memory = memoryTraceOfSnapshot(timeline);
            events = run.memory.size();
            lap();
            const ui::MemoryIndex index(run.memory);
            lap();
            const auto sites =
                ui::groupSites(index, index.aliveBetween(index.startUs(), index.endUs()));
            lap();
            const ui::SavedBlocks saved = ui::savedBlocks(run, index);
            lap();
        }
        lap();
        std::printf("| %d | %zu | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n",
                    attempt, events, ms[0], ms[1], ms[2], ms[3], ms[4], ms[5], ms[6], ms[7],
                    double(all.nsecsElapsed()) / 1e6);
        std::fflush(stdout);
    }
}

// A snapshot opened as a user opens it, three times: the reader and the
// timeline alone, then File → Open into the Memory tab and the draw, hover
// in both modes, and the RSS with the window still open.
void benchSnapshot(const QString& given, const QTemporaryDir& dir) {
    QString path = given;
    if (path.isEmpty()) {
        path = dir.filePath("snapshot-1m.pickle");
        writeFileAtomically(path.toStdString(), memvizPickle(syntheticMemoryRun(1000000).memory));
    }
    std::printf(
        "\n## Open a PyTorch memory snapshot (%s, %.1f MB)\n\n"
        "Read: readMemorySnapshot + the busiest device's timeline. Open + draw: File → Open\n"
        "into the Memory tab (read off the UI thread, indexed) and the category chart drawn.\n"
        "Hover: as the run bench's (found and outlined; painted), in each mode, the slowest\n"
        "of three zooms. Rules again: a user's category rule saved and applied to the open\n"
        "snapshot (categorised again off the UI thread, indexed, drawn), and the UI thread's\n"
        "longest gap meanwhile. Device switch: another device of the snapshot\n"
        "shown as its box does (built off the UI thread, drawn), and the longest gap (– with one\n"
        "device). RSS: the process with the window open, before the rules and after them.\n\n"
        "| attempt | events | read ms | open + draw ms | hover (category) ms | painted ms | "
        "each allocation ms | hover (each) ms | painted ms | rules again ms | "
        "rules: longest gap ms | device switch ms | switch: longest gap ms | RSS MB | "
        "after rules MB |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        qPrintable(QFileInfo(path).fileName()), double(QFileInfo(path).size()) / 1e6);
    for (int attempt = 1; attempt <= 3; ++attempt) {
        QElapsedTimer timer;
        timer.start();
        size_t events = 0;
        {
            const MemorySnapshot snapshot = readMemorySnapshot(path.toStdString());
            events = buildTimeline(snapshot, busiestDevice(snapshot)).events;
        }
        const double readMs = double(timer.nsecsElapsed()) / 1e6;
        ui::MainWindow window;
        window.resize(1400, 900);
        window.selectTab("Memory");
        window.show();
        QApplication::processEvents();
        timer.restart();
        if (!window.openRunFile(path)) {
            std::fprintf(stderr, "ui-bench: %s did not open\n", qPrintable(path));
            return;
        }
        ui::MemoryView* view = window.memoryView();
        view->plot()->replot(QCustomPlot::rpImmediateRefresh);
        QApplication::processEvents();
        const double openMs = double(timer.nsecsElapsed()) / 1e6;
        const MemoryTrace& trace = window.documents().back().result.memory;
        const double middle = trace.timeUs[trace.size() / 2];
        const HoverMs hoverCategory = slowestHover(view, middle);
        timer.restart();
        view->setMode(ui::MemoryView::Mode::Allocations);
        view->plot()->replot(QCustomPlot::rpImmediateRefresh);
        const double eachMs = double(timer.nsecsElapsed()) / 1e6;
        const HoverMs hoverEach = slowestHover(view, middle);
        view->setMode(ui::MemoryView::Mode::Categories);
        const double openRss = residentMb();
        // Applied off the UI thread: timed until the snapshot is drawn again.
        auto applyRules = [&](const std::vector<CategoryRule>& rules) {
            QSignalSpy applied(window.categoryRules(), &ui::CategoryRulesControl::applied);
            return measureUiGap([&] { window.categoryRules()->apply(rules); },
                                [&] {
                                    if (applied.isEmpty()) {
                                        return false;
                                    }
                                    view->plot()->replot(QCustomPlot::rpImmediateRefresh);
                                    return true;
                                });
        };
        const UiGap rules = applyRules({{"inputs", "forward", RuleTarget::Name}});
        const double rulesRss = residentMb();
        applyRules({});
        // Another device, as its box does (a snapshot with two or more).
        QString switchMs = "–";
        QString switchGapMs = "–";
        if (QComboBox* devices = view->deviceBox(); devices->count() > 1) {
            const int other = devices->currentIndex() == 0 ? 1 : 0;
            const int device = devices->itemData(other).toInt();
            const UiGap gap =
                measureUiGap([&] { Q_EMIT devices->activated(other); },
                             [&] {
                                 const auto& shown = window.documents().back();
                                 return shown.snapshot() && shown.snapshot()->device == device;
                             });
            view->plot()->replot(QCustomPlot::rpImmediateRefresh);
            switchMs = QString::number(gap.ms, 'f', 0);
            switchGapMs = QString::number(gap.maxGapMs, 'f', 0);
        }
        std::printf(
            "| %d | %zu | %.0f | %.0f | %.2f | %.1f | %.0f | %.2f | %.1f | %.0f | %.0f | %s | %s | "
            "%.0f | %.0f |\n",
            attempt, events, readMs, openMs, hoverCategory.hover, hoverCategory.painted, eachMs,
            hoverEach.hover, hoverEach.painted, rules.ms, rules.maxGapMs, qPrintable(switchMs),
            qPrintable(switchGapMs), openRss, rulesRss);
        std::fflush(stdout);
    }
}

// A profiler trace opened into the Timeline tab, three times: open (read,
// analysed and converted off the UI thread) and the first draw; a redraw;
// hovering kernels across the middle of the busiest stream, each with its
// launch link drawn on the link layer.
void benchTrace(const QString& path) {
    std::printf(
        "\n## A PyTorch profiler trace in the Timeline tab (%s, %.1f MB)\n\n"
        "Open + draw: File → Open until the Timeline is drawn. Redraw: one full replot of the\n"
        "whole trace in view (a pan or zoom step costs at most this). Merged: the spans\n"
        "narrower than a pixel there. Hover: a mouse move over a kernel, its launch link drawn\n"
        "(mean and worst of 200 positions across stream 7, zoomed to 1/1000 of the trace).\n\n"
        "| attempt | spans | merged in the whole view | open + draw ms | redraw ms | hover mean ms "
        "| hover max ms | RSS MB |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        qPrintable(QFileInfo(path).fileName()), double(QFileInfo(path).size()) / 1e6);
    for (int attempt = 1; attempt <= 3; ++attempt) {
        ui::MainWindow window;
        window.resize(1400, 900);
        window.selectTab("Timeline");
        window.show();
        QApplication::processEvents();
        QElapsedTimer timer;
        timer.start();
        if (!window.openRunFile(path)) {
            std::fprintf(stderr, "ui-bench: %s did not open\n", qPrintable(path));
            return;
        }
        ui::KernelTimelineView* view = window.timelineView();
        QCustomPlot* plot = view->plot();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const double openMs = double(timer.nsecsElapsed()) / 1e6;
        timer.restart();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const double redrawMs = double(timer.nsecsElapsed()) / 1e6;
        const int merged = view->mergedSpans();
        const StepTimeline& timeline = window.documents().back().result.timeline;
        double endUs = 0;
        for (const TimelineSpan& span : timeline.spans) {
            endUs = std::max(endUs, span.startUs + span.durationUs);
        }
        const int stream = int(view->tracks().indexOf("stream 7"));
        const double middle = endUs / 2;
        view->setVisibleRange(middle, middle + endUs / 1000);
        double totalMs = 0;
        double worstMs = 0;
        const int moves = 200;
        for (int i = 0; i < moves; ++i) {
            const QPointF pixel(plot->xAxis->coordToPixel(middle + endUs / 1000 * i / moves),
                                plot->yAxis->coordToPixel(std::max(stream, 0)));
            QMouseEvent move(QEvent::MouseMove, pixel, plot->mapToGlobal(pixel), Qt::NoButton,
                             Qt::NoButton, Qt::NoModifier);
            timer.restart();
            QApplication::sendEvent(plot, &move);
            const double ms = double(timer.nsecsElapsed()) / 1e6;
            totalMs += ms;
            worstMs = std::max(worstMs, ms);
        }
        size_t spans = 0;
        for (const TimelineSpan& span : timeline.spans) {
            spans += span.kind != SpanKind::Range;
        }
        std::printf("| %d | %zu | %d | %.0f | %.0f | %.2f | %.2f | %.0f |\n", attempt, spans,
                    merged, openMs, redrawMs, totalMs / moves, worstMs, residentMb());
        std::fflush(stdout);
    }
}

// Opens `path` in a fresh window showing `tab`, as File → Open does, under
// measureUiGap until the run is drawn.
UiGap measureOpenGap(const QString& path, const QString& tab) {
    ui::MainWindow window;
    window.resize(1400, 900);
    window.selectTab(tab);
    window.show();
    QApplication::processEvents();
    bool opened = false;
    const UiGap gap = measureUiGap(
        [&] {
            window.openRunFile(path);
            // Until the chart has been drawn, with the probe still counting.
            window.memoryView()->plot()->replot(QCustomPlot::rpQueuedRefresh);
            opened = true;
        },
        [&] { return opened; });
    if (window.documents().size() != 1) {
        std::fprintf(stderr, "ui-bench: %s did not open\n", qPrintable(path));
    }
    return gap;
}

// The memory view of a run, grabbed as the user would see it: categories,
// each allocation coloured by module, a hovered allocation, a site clicked.
int gallery(const QString& run, const QString& out) {
    ui::MainWindow window;
    window.resize(1500, 1150);
    window.selectTab("Memory");
    window.show();
    if (!window.openRunFile(run)) {
        return 1;
    }
    ui::MemoryView* view = window.memoryView();
    auto save = [&](const char* name) {
        QApplication::processEvents();
        view->plot()->replot(QCustomPlot::rpImmediateRefresh);
        QApplication::processEvents();
        const QString path = QDir(out).filePath(QString("memory-view-%1.png").arg(name));
        view->grab().save(path);
        std::printf("%s\n", qPrintable(path));
    };
    save("categories");
    view->setMode(ui::MemoryView::Mode::Allocations);
    view->setColouring(ui::MemoryView::Colouring::ByModule);
    save("allocations-by-module");
    // Hover over the largest allocation alive at the peak, a third of the way up it.
    const MemorySummary summary = summarizeMemory(window.currentDocument()->result.memory, 0);
    const MemoryAllocation* target = nullptr;
    for (double bytes = 0; bytes < double(summary.peakBytes);
         bytes += double(summary.peakBytes) / 400) {
        const MemoryAllocation* hit = view->allocationAt(summary.peakTimeUs, bytes);
        if (hit && (!target || hit->bytes > target->bytes)) {
            target = hit;
        }
    }
    if (target) {
        int64_t bottom = 0;
        int64_t top = 0;
        const double at = view->bandExtent(*target, summary.peakTimeUs, &bottom, &top)
                              ? double(bottom + top) / 2
                              : 0;
        view->hoverAt(QPointF(view->plot()->xAxis->coordToPixel(summary.peakTimeUs / 1e3),
                              view->plot()->yAxis->coordToPixel(at / (1024.0 * 1024.0))));
    }
    save("hover");
    view->hoverAt(QPointF(-10, -10));
    view->setColouring(ui::MemoryView::Colouring::ByCategory);
    view->setSizeFloor(1 << 20);  // a MiB: the rest summed in grey
    view->setTimeRange(summary.peakTimeUs - 60000, summary.peakTimeUs + 40000);
    save("detail");
    view->setSizeFloor(0);
    view->fit();
    view->selectSite(0);
    save("sites");
    return 0;
}

// A synthetic run of `events` memory events written to a run file, then
// opened as File → Open does and drawn, `attempts` times: the times a user
// waits for, and the memory the window holds for it (the process's RSS with
// the window open, over the RSS before, per event).
void benchMemoryRun(size_t events, int attempts, const QTemporaryDir& dir) {
    const QString path = dir.filePath(QString("memory-%1.json").arg(events));
    size_t count = 0;
    double middle = 0;
    {
        const RunResult run = syntheticMemoryRun(events);
        writeRunFile(run, path.toStdString());
        count = run.memory.size();
        middle = run.memory.timeUs[count / 2];
    }
    malloc_trim(0);  // what writing the file freed goes back: not counted as the window's
    const double baseMb = residentMb();
    std::printf(
        "\n## Open and draw a run with %zu memory events (%.1f MB)\n\n"
        "Read: the run file alone. Open + draw: read, index and draw the category chart.\n"
        "Each allocation: switch to one band per allocation (layout + draw). Hover: the\n"
        "mouse onto the lowest band in the middle of the chart, in each mode, the slowest\n"
        "of three zooms (the whole run, a hundredth, 5 ms): the allocation found and its\n"
        "outline drawn, then (painted) until the window shows it. Sites: regroup the sites\n"
        "list for a 5 ms window, and Fit: redraw the whole run and regroup its sites.\n\n"
        "Draws: how many times the chart was drawn while the file opened and while it\n"
        "switched to each allocation, and those draws' time in all. RSS: the process with\n"
        "the window open; bytes an event: that over the process before the open, per event.\n\n"
        "| attempt | read file ms | open + draw ms | each allocation ms | bands | "
        "hover (category) ms | painted ms | hover (each) ms | painted ms | sites 5 ms window ms "
        "| Fit (draw + sites) ms | draws: open (ms) | draws: each allocation (ms) | RSS MB | "
        "bytes an event |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
        "|---:|\n",
        count, double(QFileInfo(path).size()) / 1e6);
    for (int attempt = 1; attempt <= attempts; ++attempt) {
        const Opened opened = openAndDraw(
            path, "Memory", [](ui::MainWindow& window) { return window.memoryView()->plot(); });
        ui::MemoryView* view = opened.window->memoryView();
        const HoverMs hoverCategory = slowestHover(view, middle);
        QElapsedTimer timer;
        timer.start();
        std::optional<DrawCount> eachDraws(std::in_place, view->plot());
        view->setMode(ui::MemoryView::Mode::Allocations);
        view->plot()->replot(QCustomPlot::rpImmediateRefresh);
        const double eachMs = double(timer.nsecsElapsed()) / 1e6;
        const int eachCount = eachDraws->draws;
        const double eachDrawMs = eachDraws->ms;
        eachDraws.reset();
        const HoverMs hoverEach = slowestHover(view, middle);
        timer.restart();
        view->setTimeRange(middle, middle + 5000);
        const double narrowMs = double(timer.nsecsElapsed()) / 1e6;
        timer.restart();
        view->fit();
        const double wholeMs = double(timer.nsecsElapsed()) / 1e6;
        malloc_trim(0);
        const double rssMb = residentMb();
        std::printf(
            "| %d | %.0f | %.0f | %.0f | %zu | %.2f | %.1f | %.2f | %.1f | %.1f | %.1f | %d (%.0f) "
            "| %d (%.0f) | %.0f | %.0f |\n",
            attempt, opened.readMs, opened.openMs, eachMs, view->drawnBandCount(),
            hoverCategory.hover, hoverCategory.painted, hoverEach.hover, hoverEach.painted,
            narrowMs, wholeMs, opened.draws, opened.drawMs, eachCount, eachDrawMs, rssMb,
            (rssMb - baseMb) * 1e6 / double(count));
        std::fflush(stdout);
    }
}

// The file named after `section` on the command line ("trace FILE"), or
// empty where none is.
QString fileAfter(const QStringList& sections, const QString& section) {
    const qsizetype at = sections.indexOf(section);
    return at >= 0 && at + 1 < sections.size() ? sections[at + 1] : QString();
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName("StepScopeBench");
    QApplication::setApplicationName("StepScopeBench");
    QTemporaryDir dir;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir.filePath("settings"));
    QStringList sections = app.arguments().mid(1);
    if (sections.size() == 3 && sections[0] == "gallery") {
        return gallery(sections[1], sections[2]);
    }
    if (sections.isEmpty()) {
        sections = {"stream", "steps", "memory", "open"};
    }
    for (const char* needsFile : {"stages", "trace"}) {  // said before any section runs
        if (sections.contains(needsFile) && fileAfter(sections, needsFile).isEmpty()) {
            std::fprintf(stderr, "ui-bench: %s needs a file\n", needsFile);
            return 2;
        }
    }

    if (sections.contains("stream")) {
        std::printf(
            "## UI thread while steps stream in (1 ms probe timer)\n\n"
            "| run | steps | probe ticks | longest gap ms | p99 gap ms |\n"
            "|---|---:|---:|---:|---:|\n");
        struct Case {
            const char* name;
            const char* preset;
            int64_t context;
            int steps;
        };
        for (const Case& c : {Case{"nano ctx 16 (fast steps)", "nano", 16, 3000},
                              Case{"tiny ctx 128", "tiny", 128, 200}}) {
            RunConfig config;
            config.model = *findPreset(c.preset);
            config.contextLength = c.context;
            config.batchSize = 2;
            config.warmupSteps = 2;
            config.measuredSteps = c.steps;
            const Gaps gaps = measureRun(config);
            std::printf("| %s | %d | %zu | %.1f | %.1f |\n", c.name, c.steps + 2, gaps.ticks,
                        gaps.maxMs, gaps.p99Ms);
            std::fflush(stdout);
        }
    }

    if (sections.contains("steps")) {
        const QString path = dir.filePath("100k.json");
        writeRunFile(syntheticRun(100000), path.toStdString());
        std::printf(
            "\n## Open and draw a run file with 100,000 steps (%.1f MB)\n\n"
            "| attempt | read file ms | open + draw ms |\n|---:|---:|---:|\n",
            double(QFileInfo(path).size()) / 1e6);
        for (int attempt = 1; attempt <= 3; ++attempt) {
            const Opened opened = openAndDraw(path, "Step timing", [](ui::MainWindow& window) {
                return window.stepTimingView()->plot();
            });
            std::printf("| %d | %.0f | %.0f |\n", attempt, opened.readMs, opened.openMs);
            std::fflush(stdout);
        }
    }

    if (sections.contains("memory")) {
        benchMemoryRun(1000000, 3, dir);

        // The worst case for hover: a quarter of a million allocations alive.
        MemoryTrace crowded;
        crowded.device = "cpu";
        for (size_t i = 0; i < 500000; ++i) {  // half of them freed at once, half kept
            for (int event = 0; event < (i % 2 == 0 ? 2 : 1); ++event) {
                crowded.timeUs.push_back(double(crowded.timeUs.size()));
                crowded.address.push_back(i + 1);
                crowded.bytes.push_back(event == 0 ? int64_t(512 + i % 4096)
                                                   : -int64_t(512 + i % 4096));
                crowded.category.push_back(uint8_t(i % kMemoryCategories));
                crowded.phase.push_back(1);
                crowded.step.push_back(0);
                crowded.path.push_back(-1);
            }
        }
        QElapsedTimer timer;
        timer.start();
        const ui::MemoryIndex index(crowded);
        const double buildMs = double(timer.nsecsElapsed()) / 1e6;
        const double end = crowded.timeUs.back();
        double worst[2] = {0, 0};
        for (const auto order : {ui::StackOrder::ByCategory, ui::StackOrder::ByAllocation}) {
            for (const double at : {end / 2, end}) {
                timer.restart();
                index.allocationAt(at, 1e8, order, 0);
                worst[int(order)] = std::max(worst[int(order)], double(timer.nsecsElapsed()) / 1e6);
            }
        }
        timer.restart();
        index.bandOf(1, ui::StackOrder::ByCategory, 0);  // alive from the start to the end
        const double bandMs = double(timer.nsecsElapsed()) / 1e6;
        std::printf(
            "\nHover with %zu allocations alive (%zu events): index built in %.0f ms; the "
            "allocation under the cursor in %.2f ms (category) / %.2f ms (each allocation); the "
            "band of one allocation alive throughout in %.1f ms.\n",
            index.aliveAt(end).size(), crowded.size(), buildMs, worst[0], worst[1], bandMs);
    }

    if (sections.contains("memory10m")) {  // on demand: a minute and several GB
        benchMemoryRun(10000000, 1, dir);
    }

    if (sections.contains("snapshot")) {
        benchSnapshot(fileAfter(sections, "snapshot"), dir);
    }

    if (sections.contains("stages")) {
        benchSnapshotStages(fileAfter(sections, "stages"));
    }

    if (sections.contains("trace")) {
        benchTrace(fileAfter(sections, "trace"));
    }

    if (sections.contains("open")) {
        const QString path = dir.filePath("open-1m.json");
        const RunResult run = syntheticMemoryRun(1000000);
        writeRunFile(run, path.toStdString());
        std::printf(
            "\n## The UI thread while a run with %zu memory events opens (%.1f MB)\n\n"
            "A 2 ms probe timer on the UI thread from the open until the chart is drawn: the\n"
            "longest gap between its ticks is the longest the window did not answer.\n\n"
            "| attempt | tab shown | longest gap ms | probe ticks | open + draw ms |\n"
            "|---:|---|---:|---:|---:|\n",
            run.memory.size(), double(QFileInfo(path).size()) / 1e6);
        for (int attempt = 1; attempt <= 3; ++attempt) {
            for (const char* tab : {"Step timing", "Memory"}) {
                const UiGap gap = measureOpenGap(path, tab);
                std::printf("| %d | %s | %.0f | %zu | %.0f |\n", attempt, tab, gap.maxGapMs,
                            gap.ticks, gap.ms);
                std::fflush(stdout);
            }
        }
    }
    return 0;
}
