// The memory view against memory_viz: per-allocation bands stacked as the
// allocations were made, the detail floor, hover, fit and bounded zoom, the
// sites list, and the operator column from the tracker through the run file.
// The hand-made trace's expected stacks are worked out by hand below.
#include <QtTest/QtTest>

#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QToolTip>
#include <cmath>
#include <memory>
#include <random>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "config/model_dims.h"
#include "controllers/category_rules_control.h"
#include "controllers/file_opener.h"
#include "controllers/run_list.h"
#include "interop/memviz_export.h"
#include "main_window.h"
#include "models/allocation_stack.h"
#include "models/category_rules.h"
#include "models/format.h"
#include "models/memory_index.h"
#include "models/run_document.h"
#include "models/snapshot_document.h"
#include "models/snapshot_recording.h"
#include "pages/config_panel.h"
#include "results/run_file.h"
#include "results/saved_for_backward.h"
#include "views/compare_view.h"
#include "views/kernel_timeline_view.h"
#include "views/memory_view.h"
#include "views/parts/category_stack.h"
#include "views/parts/memory_compare_view.h"
#include "views/parts/saved_view.h"
#include "views/parts/snapshot_stack_panel.h"
#include "views/parts/time_tints.h"
#include "widgets/category_rules_dialog.h"

using namespace stepscope;
using namespace stepscope::ui;
using stepscope::test::cliRun;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// What torch's own memory_viz prints for one of make_memory_snapshots.py's
// stacks (FORWARD, ...): its filtered frames (_frames_fmt), or every frame
// (_frame_fmt each), with full file names, innermost first. The reference
// the app's stacks are held to; an error message starts with "ERROR".
QString memvizStack(const QString& stackName, bool allFrames) {
    const QString script = QString(
                               "import sys\n"
                               "sys.path.insert(0, %1)\n"
                               "import make_memory_snapshots as fixtures\n"
                               "from torch.cuda._memory_viz import _frame_fmt, _frames_fmt\n"
                               "frames = getattr(fixtures, %2)\n"
                               "lines = [_frame_fmt(f, True) for f in frames] if %3 else "
                               "_frames_fmt(frames, True)\n"
                               "sys.stdout.write('\\n'.join(lines))\n")
                               .arg("'" + QStringLiteral(STEPSCOPE_SOURCE_DIR "/tests/data") + "'",
                                    "'" + stackName + "'", allFrames ? "True" : "False");
    QProcess python;
    python.start(QStringLiteral(STEPSCOPE_PYTHON), {"-c", script});
    if (!python.waitForFinished(120000) || python.exitCode() != 0) {
        return "ERROR " + QString::fromUtf8(python.readAllStandardError());
    }
    return QString::fromUtf8(python.readAllStandardOutput());
}

// Paths (module paths, ops, autograd nodes share one table).
enum Path { kAttn, kHead, kMm, kEmpty, kMmBackward };

// Six allocations, µs:
//   A   100 B  parameters  setup            t 0  → end
//   B  1000 B  activations forward step 0   t 10 → 40   layers.0.attn aten::mm
//   C    50 B  temporaries forward step 0   t 20 → 50   layers.0.attn aten::empty
//   D  2000 B  activations forward step 0   t 30 → 70   lm_head       aten::mm
//   E  1000 B  activations forward step 1   t 60 → 80   layers.0.attn aten::mm
//   F    10 B  other       backward step 1  t 90 → end  MmBackward0
RunResult handMadeRun() {
    RunResult run;
    run.config.model.name = "hand";
    MemoryTrace& trace = run.memory;
    trace.device = "cpu";
    trace.paths = {"layers.0.attn", "lm_head", "aten::mm", "aten::empty", "MmBackward0"};
    int64_t total = 0;
    auto push = [&](double time, uint64_t address, int64_t bytes, MemoryCategory category,
                    int phase, int step, int path, int op) {
        trace.timeUs.push_back(time);
        trace.address.push_back(address);
        trace.bytes.push_back(bytes);
        trace.category.push_back(uint8_t(category));
        trace.phase.push_back(uint8_t(phase));
        trace.step.push_back(step);
        trace.path.push_back(path);
        trace.op.push_back(op);
        total += bytes;
        trace.allocated.push_back(total);
        trace.reserved.push_back(0);
    };
    using C = MemoryCategory;
    push(0, 1, 100, C::Parameters, 0, -1, -1, kEmpty);
    push(10, 2, 1000, C::Activations, 1, 0, kAttn, kMm);
    push(20, 3, 50, C::Temporaries, 1, 0, kAttn, kEmpty);
    push(30, 4, 2000, C::Activations, 1, 0, kHead, kMm);
    push(40, 2, -1000, C::Activations, 1, 0, kAttn, -1);
    push(50, 3, -50, C::Temporaries, 1, 0, kAttn, -1);
    push(60, 5, 1000, C::Activations, 1, 1, kAttn, kMm);
    push(70, 4, -2000, C::Activations, 1, 1, kHead, -1);
    push(80, 5, -1000, C::Activations, 1, 1, kAttn, -1);
    push(90, 6, 10, C::Other, 2, 1, kMmBackward, kMmBackward);
    trace.phases = {{1, 0, 5, 55}, {1, 1, 55, 85}, {2, 1, 85, 95}};
    return run;
}

// The allocation made at `address` (A = 1, B = 2, … F = 6), as the view holds it.
const MemoryAllocation& allocation(const MemoryView& view, uint64_t address) {
    const auto& all = view.index()->allocations();
    const auto found = std::find_if(
        all.begin(), all.end(), [&](const MemoryAllocation& a) { return a.address == address; });
    if (found == all.end()) {
        qFatal("no allocation at %llu", qulonglong(address));
    }
    return *found;
}

void compareRange(const MemoryView& view, double from, double to) {
    QCOMPARE(view.timeRange().first, from);
    QCOMPARE(view.timeRange().second, to);
}

struct Extent {
    int64_t bottom = -1;
    int64_t top = -1;
    bool operator==(const Extent&) const = default;
};

Extent extent(const MemoryView& view, const MemoryAllocation& a, double time) {
    Extent e;
    if (!view.bandExtent(a, time, &e.bottom, &e.top)) {
        return {};
    }
    return e;
}

// The row of the sites table whose module and op are these, or -1.
int siteRow(const QStandardItemModel* sites, const QString& path, const QString& op,
            const QString& category) {
    for (int row = 0; row < sites->rowCount(); ++row) {
        if (sites->index(row, 4).data().toString() == path &&
            sites->index(row, 5).data().toString() == op &&
            sites->index(row, 1).data().toString() == category) {
            return row;
        }
    }
    return -1;
}

// A one-step nano run made by the CLI with a memory trace, as the app holds it.
RunDocument tracedRun(const QString& path, int id, const QStringList& flags) {
    RunDocument document;
    document.id = id;
    const QString error = cliRun(path, QStringList{"--memory"} + flags, 1);
    if (!error.isEmpty()) {
        qWarning("%s", qPrintable(error));
        return document;
    }
    document.result = readRunFile(path.toStdString());
    return document;
}

// ---- snapshots with segment events, and the user's category rules ----------

// One event of a hand-written snapshot trace; `frames` is a Python list.
struct SnapshotEvent {
    const char* action;
    uint64_t address;
    int64_t bytes;
    double timeUs;
    const char* frames;
};

constexpr const char* kKvFrames =  // Mosaic: "forward" in a name → activation
    "[f('kv_cache.py', 3, 'grow_cache'), f('model.py', 20, 'forward')]";
constexpr const char* kTrainFrames = "[f('train.py', 5, 'main')]";  // Mosaic: unknown

// Reserved grows by 2 MiB, then 4 MiB, and gives the 4 MiB back (empty_cache)
// at 170 µs, between two frees; 2 MiB are reserved at the end.
const std::vector<SnapshotEvent> kSegmentTrace = {
    {"segment_alloc", 0x200000, 2097152, 100, "[]"},
    {"alloc", 0x200000, 1500000, 110, kKvFrames},
    {"segment_alloc", 0x400000, 4194304, 120, "[]"},
    {"alloc", 0x400000, 3000000, 130, kTrainFrames},
    {"free_completed", 0x200000, 1500000, 140, kKvFrames},
    {"alloc", 0x200000, 500000, 150, kKvFrames},
    {"free_completed", 0x400000, 3000000, 160, kTrainFrames},
    {"segment_free", 0x400000, 4194304, 170, "[]"},
    {"free_completed", 0x200000, 500000, 180, kKvFrames},
};
constexpr int64_t kSegmentsAtEnd = 2097152;

// Writes `events` (device 0) with Python's own pickle, protocol 4; with
// `segmentAtEnd`, one inactive 2 MiB segment in the snapshot's segments.
QString writeSnapshotPickle(const QString& path, const std::vector<SnapshotEvent>& events,
                            bool segmentAtEnd) {
    QString trace;
    for (const SnapshotEvent& e : events) {
        trace += QString(
                     "{'action': '%1', 'addr': %2, 'size': %3, 'stream': 0, 'time_us': %4, "
                     "'frames': %5},\n")
                     .arg(e.action)
                     .arg(e.address)
                     .arg(e.bytes)
                     .arg(e.timeUs)
                     .arg(e.frames);
    }
    const QString segments =
        segmentAtEnd
            ? QString(
                  "[{'device': 0, 'address': 2097152, 'total_size': %1, 'allocated_size': 0, "
                  "'active_size': 0, 'requested_size': 0, 'stream': 0, 'segment_type': "
                  "'large', 'segment_pool_id': (0, 0), 'is_expandable': False, 'frames': [], "
                  "'blocks': [{'address': 2097152, 'size': %1, 'requested_size': 0, "
                  "'state': 'inactive', 'frames': []}]}]")
                  .arg(kSegmentsAtEnd)
            : QString("[]");
    const QString code =
        "import pickle, sys\n"
        "def f(filename, line, name):\n"
        "    return {'filename': filename, 'line': line, 'name': name}\n"
        "snapshot = {'segments': " +
        segments + ", 'device_traces': [[\n" + trace +
        "]]}\n"
        "with open(sys.argv[1], 'wb') as out:\n"
        "    pickle.dump(snapshot, out, protocol=4)\n";
    QProcess python;
    python.start(QStringLiteral(STEPSCOPE_PYTHON), {"-c", code, path});
    if (!python.waitForFinished(60000) || python.exitCode() != 0) {
        return "python: " + python.errorString() + QString::fromUtf8(python.readAllStandardError());
    }
    return {};
}

// The reference, from the event list alone: reserved bytes just after the
// last event at or before `timeUs` (µs from the first event).
int64_t referenceReservedAt(const std::vector<SnapshotEvent>& events, double timeUs) {
    int64_t net = 0;
    for (const SnapshotEvent& e : events) {
        net += std::string(e.action) == "segment_alloc"  ? e.bytes
               : std::string(e.action) == "segment_free" ? -e.bytes
                                                         : 0;
    }
    int64_t reserved = kSegmentsAtEnd - net;  // what was reserved before the trace
    for (const SnapshotEvent& e : events) {
        if (e.timeUs - events.front().timeUs > timeUs) {
            break;
        }
        reserved += std::string(e.action) == "segment_alloc"  ? e.bytes
                    : std::string(e.action) == "segment_free" ? -e.bytes
                                                              : 0;
    }
    return reserved;
}

// The allocated peak (first reached) and what was reserved just then.
std::pair<int64_t, int64_t> referencePeakAndReserved(const std::vector<SnapshotEvent>& events) {
    int64_t allocated = 0;
    int64_t peak = 0;
    double peakAt = 0;
    for (const SnapshotEvent& e : events) {
        allocated += std::string(e.action) == "alloc"            ? e.bytes
                     : std::string(e.action) == "free_completed" ? -e.bytes
                                                                 : 0;
        if (allocated > peak) {
            peak = allocated;
            peakAt = e.timeUs - events.front().timeUs;
        }
    }
    return {peak, referenceReservedAt(events, peakAt)};
}

// The categories of the allocations of `bytes` the memory view holds.
QSet<int> categoriesOf(const MemoryView& view, int64_t bytes) {
    QSet<int> categories;
    for (const MemoryAllocation& a : view.index()->allocations()) {
        if (a.bytes == bytes) {
            categories.insert(int(a.category));
        }
    }
    return categories;
}

const MemoryAllocation& allocationOfBytes(const MemoryView& view, int64_t bytes) {
    for (const MemoryAllocation& a : view.index()->allocations()) {
        if (a.bytes == bytes) {
            return a;
        }
    }
    qFatal("no allocation of %lld bytes", qlonglong(bytes));
}

// handMadeRun's trace later and slower: 1000 µs later, and its step 0
// 200 µs longer, so step 1 starts 1255 µs in instead of 55.
RunResult laterRun() {
    RunResult run = handMadeRun();
    const auto moved = [](double t) { return t + 1000 + (t >= 55 ? 200 : 0); };
    for (double& t : run.memory.timeUs) {
        t = moved(t);
    }
    for (MemoryTrace::PhaseRange& range : run.memory.phases) {
        range.startUs = moved(range.startUs);
        range.endUs = moved(range.endUs);
    }
    return run;
}

// Where `graph` first reaches `value` MiB (its key, ms), or NaN.
double firstKeyAt(const QCPGraph* graph, double valueMiB) {
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
        if (std::abs(it->value - valueMiB) < 1e-12) {
            return it->key;
        }
    }
    return std::nan("");
}

// make_memory_snapshots.py's fixtures, written into `dir`; false (with
// Python's error printed) where it fails.
bool makeSnapshotFixtures(const QString& dir) {
    QProcess made;
    made.start(QStringLiteral(STEPSCOPE_PYTHON),
               {QStringLiteral(STEPSCOPE_SOURCE_DIR "/tests/data/make_memory_snapshots.py"), dir});
    if (!made.waitForFinished(120000) || made.exitCode() != 0) {
        qWarning("%s", made.readAllStandardError().constData());
        return false;
    }
    return true;
}

}  // namespace

// kSegmentTrace written as a pickle at `path` and opened, as File → Open
// does, in a shown window; nullptr when either fails.
std::unique_ptr<MainWindow> windowWithSnapshot(const QString& path) {
    if (!writeSnapshotPickle(path, kSegmentTrace, true).isEmpty()) {
        return nullptr;
    }
    auto window = std::make_unique<MainWindow>();
    window->resize(1200, 800);
    window->show();
    return window->openRunFile(path) ? std::move(window) : nullptr;
}

// Applies `rules` as the dialog's Save does and waits until the open
// snapshots show them (off the UI thread, a moment).
void applyRules(MainWindow& window, const std::vector<CategoryRule>& rules) {
    QSignalSpy applied(window.categoryRules(), &CategoryRulesControl::applied);
    window.categoryRules()->apply(rules);
    QVERIFY(applied.count() == 1 || applied.wait(20000));
}

// A plot whose axis rect is the whole widget and whose axes count pixels:
// key k is the left edge of column k, value v the edge v rows above the
// bottom. Nothing but what a test adds is drawn.
std::unique_ptr<QCustomPlot> pixelPlot(int width, int height) {
    auto plot = std::make_unique<QCustomPlot>();
    plot->axisRect()->setAutoMargins(QCP::msNone);
    plot->axisRect()->setMargins(QMargins());
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        axis->setVisible(false);
        axis->grid()->setVisible(false);
    }
    plot->xAxis->setRange(0, width);
    plot->yAxis->setRange(0, height);
    plot->resize(width, height);
    return plot;
}

// Two stacked categories in pixel units (each series the sum of its category
// and those below), and a spike in the upper one 0.3 px wide that covers no
// pixel centre: [30.6, 30.9) up to 80.
const QVector<double> kStackKeys{0, 20, 30.6, 30.9, 40, 60};
const QVector<double> kStackLower{10, 30, 30, 30, 5, 5};
const QVector<double> kStackUpper{25, 50, 80, 50, 20, 20};
const QColor kLowerFill(200, 60, 60);
const QColor kUpperFill(60, 60, 200);

QImage drawnFills(QCustomPlot& plot, bool vector = false) {
    if (!vector) {
        return plot.toPixmap(plot.width(), plot.height())
            .toImage()
            .convertToFormat(QImage::Format_RGB32);
    }
    QImage image(plot.size(), QImage::Format_RGB32);
    image.fill(Qt::white);
    QCPPainter painter(&image);
    painter.setMode(QCPPainter::pmVectorized);
    plot.toPainter(&painter, plot.width(), plot.height());
    painter.end();
    return image;
}

class TestMemoryView : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    RunDocument document_;

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        // The settings the windows here keep (category rules, recent files)
        // go to this test's folder, never the user's.
        QStandardPaths::setTestModeEnabled(true);
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope,
                           dir_.filePath("settings"));
        QCoreApplication::setOrganizationName("StepScopeMemoryViewTest");
        QCoreApplication::setApplicationName("StepScopeMemoryViewTest");
        document_.id = 1;
        document_.result = handMadeRun();
    }

    void categoryModeStacksByCategoryThenAge() {
        MemoryView view;
        view.showRun(&document_);
        QCOMPARE(view.mode(), MemoryView::Mode::Categories);
        QCOMPARE(view.plot()->graphCount(), int(kMemoryCategories));
        // t = 35: parameters A [0,100); activations B [100,1100), D [1100,3100);
        // temporaries C [3100,3150).
        QCOMPARE(extent(view, allocation(view, 1), 35), (Extent{0, 100}));
        QCOMPARE(extent(view, allocation(view, 2), 35), (Extent{100, 1100}));
        QCOMPARE(extent(view, allocation(view, 4), 35), (Extent{1100, 3100}));
        QCOMPARE(extent(view, allocation(view, 3), 35), (Extent{3100, 3150}));
        QCOMPARE(view.allocationAt(35, 3120)->bytes, int64_t(50));
        QVERIFY(!view.allocationAt(35, 3150));
    }

    void peakMarkerPointsAtThePeakInsideTheChart() {
        MemoryView view;
        view.resize(900, 600);
        view.show();
        view.showRun(&document_);
        // By hand: 3150 B alive at t = 30 µs is the most of the trace.
        const double peakMs = 30 / 1e3;
        const double peakMiB = 3150 / (1024.0 * 1024.0);
        auto marker = [&] {
            QCPItemLine* arrow = nullptr;
            QCPItemText* label = nullptr;
            for (int i = 0; i < view.plot()->itemCount(); ++i) {
                if (auto* line = qobject_cast<QCPItemLine*>(view.plot()->item(i));
                    line && line->head().style() == QCPLineEnding::esSpikeArrow) {
                    arrow = line;
                }
                if (auto* text = qobject_cast<QCPItemText*>(view.plot()->item(i));
                    text && text->text().startsWith("peak ")) {
                    label = text;
                }
            }
            return std::make_pair(arrow, label);
        };
        // The peak at the left edge, the middle and the right edge of the view.
        for (const auto& [from, to] :
             {std::pair{0.03, 0.2}, std::pair{0.0, 0.09}, std::pair{-0.1, 0.0301}}) {
            view.setTimeRange(from * 1e3, to * 1e3);
            view.plot()->replot();
            const auto [arrow, label] = marker();
            QVERIFY(arrow && label && arrow->visible());
            QCOMPARE(arrow->end->coords().x(), peakMs);
            QCOMPARE(arrow->end->coords().y(), peakMiB);
            const QRect area = view.plot()->axisRect()->rect();
            const QRectF box(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition());
            QVERIFY2(area.contains(box.toAlignedRect()),
                     qPrintable(QString("label %1,%2 %3×%4 outside the chart")
                                    .arg(box.x())
                                    .arg(box.y())
                                    .arg(box.width())
                                    .arg(box.height())));
        }
    }

    // Issue 31: on the first switch to each allocation the y axis reached
    // about twice the peak: the room for the peak's label, in pixels, was
    // taken from a chart a few pixels tall.
    void valueAxisStaysCloseToThePeakInEitherMode() {
        const auto& allocated = document_.result.memory.allocated;
        const double peakMiB = double(*std::max_element(allocated.begin(), allocated.end())) / kMiB;
        MemoryView view;
        view.resize(900, 300);  // a small window: the chart gets little height
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.showRun(&document_);
        for (const auto mode : {MemoryView::Mode::Allocations, MemoryView::Mode::Categories,
                                MemoryView::Mode::Allocations}) {
            view.setMode(mode);
            view.plot()->replot();
            const double upper = view.plot()->yAxis->range().upper;
            QVERIFY2(upper >= peakMiB && upper <= peakMiB / 0.75 * 1.001,
                     qPrintable(QString("axis to %1 for a peak of %2").arg(upper).arg(peakMiB)));
            QVERIFY(view.plot()->height() >= MemoryView::kMinimumChartHeight);
        }
    }

    void eachAllocationIsABandThatShiftsDownWhenOneBelowIsFreed() {
        MemoryView view;
        view.showRun(&document_);
        view.setMode(MemoryView::Mode::Allocations);
        QCOMPARE(view.drawnBandCount(), size_t(6));
        QCOMPARE(view.hiddenAllocationCount(), size_t(0));
        const MemoryAllocation& c = allocation(view, 3);
        const MemoryAllocation& d = allocation(view, 4);
        const MemoryAllocation& e = allocation(view, 5);
        // In the order they were made: A, B, C, D at t = 35.
        QCOMPARE(extent(view, allocation(view, 1), 35), (Extent{0, 100}));
        QCOMPARE(extent(view, allocation(view, 2), 35), (Extent{100, 1100}));
        QCOMPARE(extent(view, c, 35), (Extent{1100, 1150}));
        QCOMPARE(extent(view, d, 35), (Extent{1150, 3150}));
        // B freed at 40: C and D move down by 1000.
        QCOMPARE(extent(view, c, 45), (Extent{100, 150}));
        QCOMPARE(extent(view, d, 45), (Extent{150, 2150}));
        // C freed at 50: D sits on A.
        QCOMPARE(extent(view, d, 55), (Extent{100, 2100}));
        // E made at 60 goes on top; D freed at 70 lets it down.
        QCOMPARE(extent(view, e, 65), (Extent{2100, 3100}));
        QCOMPARE(extent(view, e, 75), (Extent{100, 1100}));
        QCOMPARE(extent(view, d, 75), Extent{});  // freed: not drawn
        // Hit-testing agrees with the drawing.
        QCOMPARE(view.allocationAt(45, 120), &c);
        QCOMPARE(view.allocationAt(65, 2500), &e);
    }

    void detailFloorHidesExactlyTheSmallerOnesAndKeepsTheTotal() {
        MemoryView view;
        view.showRun(&document_);
        view.setMode(MemoryView::Mode::Allocations);
        view.setSizeFloor(100);
        QCOMPARE(view.sizeFloor(), int64_t(100));
        QCOMPARE(view.drawnBandCount(), size_t(4));         // A, B, D, E
        QCOMPARE(view.hiddenAllocationCount(), size_t(2));  // C (50 B), F (10 B)
        QCOMPARE(extent(view, allocation(view, 3), 35), Extent{});
        // t = 35 without C: A, B, D; the grey band holds C's 50 bytes on top.
        QCOMPARE(extent(view, allocation(view, 4), 35), (Extent{1100, 3100}));
        int64_t bottom = 0;
        int64_t top = 0;
        QVERIFY(view.smallerBandExtent(35, &bottom, &top));
        QCOMPARE(bottom, int64_t(3100));
        QCOMPARE(top, int64_t(3150));  // the total alive, as without the floor
        QVERIFY(view.smallerBandExtent(95, &bottom, &top));
        QCOMPARE(bottom, int64_t(100));
        QCOMPARE(top, int64_t(110));
        QVERIFY(!view.allocationAt(35, 3120));  // in the grey band: no single allocation
        // The chart's grey band reaches the peak total (3150 at t = 30).
        double greyTop = 0;
        for (int g = 0; g < view.plot()->graphCount(); ++g) {
            if (view.plot()->graph(g)->name() == "smaller allocations") {
                const auto* data = view.plot()->graph(g)->data().data();
                for (auto it = data->constBegin(); it != data->constEnd(); ++it) {
                    greyTop = std::max(greyTop, it->value);
                }
            }
        }
        QCOMPARE(qint64(std::llround(greyTop * kMiB)), qint64(3150));
        // Zoomed in, the grey band is sampled for the range in view: from 42
        // to 48 A and D are drawn (2100 B) and C's 50 B sit on top.
        view.setTimeRange(42, 48);
        for (int g = 0; g < view.plot()->graphCount(); ++g) {
            const QString name = view.plot()->graph(g)->name();
            const int64_t expected = name == "smaller allocations"           ? 2150
                                     : name == "smaller allocations, bottom" ? 2100
                                                                             : -1;
            if (expected < 0) {
                continue;
            }
            const auto* data = view.plot()->graph(g)->data().data();
            QVERIFY(data->size() >= 2);
            for (auto it = data->constBegin(); it != data->constEnd(); ++it) {
                QCOMPARE(qint64(std::llround(it->value * kMiB)), qint64(expected));
            }
        }
    }

    void hoverHighlightsTheAllocationAndNamesItsModuleAndOp() {
        MemoryView view;
        view.resize(1000, 700);
        view.show();
        view.showRun(&document_);
        view.setMode(MemoryView::Mode::Allocations);
        view.plot()->replot();
        const MemoryAllocation* d = view.allocationAt(35, 2000);
        QVERIFY(d);
        QCOMPARE(d->bytes, int64_t(2000));
        const QString text = view.describe(*d);
        QVERIFY2(text.contains("lm_head"), qPrintable(text));
        QVERIFY2(text.contains("aten::mm"), qPrintable(text));
        QVERIFY2(text.contains("activations"), qPrintable(text));
        // Through the chart's pixels, as the mouse does.
        const QPointF pixel(view.plot()->xAxis->coordToPixel(35 / 1e3),
                            view.plot()->yAxis->coordToPixel(2000 / kMiB));
        // The outline shows at once, drawn on its own layer: the chart under
        // it (thousands of bands in a real run) is not drawn again.
        const QImage before = view.plot()->grab().toImage();
        QSignalSpy redrawn(view.plot(), &QCustomPlot::beforeReplot);
        view.hoverAt(pixel);
        QCOMPARE(view.hovered(), d);
        QCOMPARE(redrawn.count(), 0);
        QVERIFY(view.plot()->grab().toImage() != before);
        view.hoverAt(QPointF(pixel.x(), view.plot()->yAxis->coordToPixel(50 / kMiB)));
        QCOMPARE(view.hovered()->address, uint64_t(1));  // A, the parameter, at the bottom
        // A real mouse move over the chart goes the same way.
        QMouseEvent move(QEvent::MouseMove, pixel, view.plot()->mapToGlobal(pixel), Qt::NoButton,
                         Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(view.plot(), &move);
        QCOMPARE(view.hovered(), d);
        QEvent leave(QEvent::Leave);
        QApplication::sendEvent(view.plot(), &leave);
        QVERIFY(!view.hovered());
    }

    // Issue 31: the row of controls (each-allocation mode's count of bands,
    // the slider) and the hover line widened the window past a laptop's
    // screen. Their labels elide instead: the view asks for no more width
    // whatever they say.
    void longLabelsNeverWidenTheView() {
        RunDocument document = document_;
        const std::string deep = "blocks.0.attention.heads.multi_head_projection.inner_module";
        document.result.memory.paths[kHead] = deep + deep + deep + deep + deep;
        MemoryView view;
        view.resize(900, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.showRun(&document);
        const int before = view.minimumSizeHint().width();
        QVERIFY2(before <= 900, qPrintable(QString::number(before)));
        view.setMode(MemoryView::Mode::Allocations);
        for (const int64_t floor : {int64_t(0), int64_t(60), int64_t(1500)}) {
            view.setSizeFloor(floor);
            QCOMPARE(view.minimumSizeHint().width(), before);
        }
        view.setSizeFloor(0);
        view.plot()->replot();
        view.hoverAt(QPointF(view.plot()->xAxis->coordToPixel(35 / 1e3),
                             view.plot()->yAxis->coordToPixel(2000 / kMiB)));
        QCOMPARE(view.hovered()->bytes, int64_t(2000));
        QVERIFY(view.detailsText().contains(QString::fromStdString(deep)));
        QCOMPARE(view.minimumSizeHint().width(), before);
        QCOMPARE(view.width(), 900);
    }

    // memory_viz: a click on a band selects it and its site, and its details
    // stay under the chart as the mouse moves on; a click on no band lets go.
    void clickingABandSelectsItsSiteAndPinsItsDetails() {
        MemoryView view;
        view.resize(1000, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.showRun(&document_);
        view.setMode(MemoryView::Mode::Allocations);
        view.plot()->replot();
        const auto pixel = [&](double us, double bytes) {
            return QPoint(int(view.plot()->xAxis->coordToPixel(us / 1e3)),
                          int(view.plot()->yAxis->coordToPixel(bytes / kMiB)));
        };
        const MemoryAllocation& d = allocation(view, 4);  // lm_head aten::mm, 2000 B
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, pixel(35, 2000));
        QCOMPARE(view.pinned(), &d);
        // Its site's row is selected, as a click on the row would.
        const QModelIndexList rows = view.sitesTable()->selectionModel()->selectedRows();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].row(), siteRow(view.sitesModel(), "lm_head", "aten::mm", "activations"));
        QCOMPARE(view.highlighted(), std::vector<const MemoryAllocation*>{&d});
        QVERIFY2(view.detailsText().contains("lm_head") && view.detailsText().contains("aten::mm"),
                 qPrintable(view.detailsText()));
        // The mouse moves on, over A: A is hovered, D's details stay.
        const QPointF overA = pixel(35, 50);
        QMouseEvent move(QEvent::MouseMove, overA, view.plot()->mapToGlobal(overA), Qt::NoButton,
                         Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(view.plot(), &move);
        QCOMPARE(view.hovered(), &allocation(view, 1));
        QVERIFY2(view.detailsText().contains("lm_head"), qPrintable(view.detailsText()));
        QEvent leave(QEvent::Leave);
        QApplication::sendEvent(view.plot(), &leave);
        QVERIFY(view.detailsText().contains("lm_head"));
        // A drag pans; it selects nothing.
        QTest::mousePress(view.plot(), Qt::LeftButton, {}, pixel(35, 50));
        QTest::mouseRelease(view.plot(), Qt::LeftButton, {}, pixel(35, 50) + QPoint(40, 0));
        QCOMPARE(view.pinned(), &d);
        // A click above every band lets go.
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, pixel(35, 3140) - QPoint(0, 8));
        QVERIFY(!view.pinned());
        QVERIFY(view.highlighted().empty());
        QVERIFY(view.sitesTable()->selectionModel()->selectedRows().isEmpty());
        QVERIFY(!view.detailsText().contains("lm_head"));
    }

    // Hover and pinned details show where an allocation was made as one
    // stack, outermost first: autograd node, modules, op.
    void detailsShowTheStackOutermostFirst() {
        const auto frames = [](const std::string& path, const std::string& op) {
            QStringList out;
            for (const StackFrame& frame : allocationStack(path, op)) {
                out << frameKindName(frame.kind) + " " + frame.name;
            }
            return out;
        };
        QCOMPARE(frames("layers.0.attn.qkv", "aten::addmm"),
                 QStringList({"module layers.0", "module layers.0.attn", "module layers.0.attn.qkv",
                              "op aten::addmm"}));
        QCOMPARE(frames("lm_head", "aten::mm"), QStringList({"module lm_head", "op aten::mm"}));
        // Backward: the node is where and what allocated; it is named once.
        QCOMPARE(frames("MmBackward0", "MmBackward0"), QStringList({"autograd node MmBackward0"}));
        // A checkpoint's recomputed forward: its node, then the modules and op it runs.
        QCOMPARE(frames("layers.1.mlp", "aten::gelu"),
                 QStringList({"module layers.1", "module layers.1.mlp", "op aten::gelu"}));
        QCOMPARE(frames("layers.1.mlp", "CheckpointFunctionBackward"),
                 QStringList({"autograd node CheckpointFunctionBackward", "module layers.1",
                              "module layers.1.mlp"}));
        // A PyTorch snapshot's site is one frame, not split at its dots.
        QCOMPARE(frames("train.py:41 forward", ""), QStringList({"site train.py:41 forward"}));
        QCOMPARE(frames("", ""), QStringList());
        // In the view: the tooltip a frame a line in that order, the line under
        // the chart the same frames in one line.
        MemoryView view;
        view.showRun(&document_);
        const QStringList lines = view.describe(allocation(view, 2)).split('\n');
        QCOMPARE(lines.mid(lines.size() - 3),
                 QStringList({"  module layers.0", "  module layers.0.attn", "  op aten::mm"}));
        QVERIFY(view.describe(allocation(view, 6)).endsWith("\n  autograd node MmBackward0"));
    }

    // A site picked in the table marks its allocations' lifetimes along the
    // chart's top edge, where the docs say they are.
    void siteLifetimesRunAlongTheTopEdge() {
        MemoryView view;
        view.resize(1000, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.showRun(&document_);
        view.selectSite(siteRow(view.sitesModel(), "layers.0.attn", "aten::mm", "activations"));
        view.plot()->replot();
        const QList<QRectF> marks = view.lifetimeMarks();
        QCOMPARE(marks.size(), 2);  // B and E
        const QRect area = view.plot()->axisRect()->rect();
        for (int i = 0; i < 2; ++i) {
            const MemoryAllocation& a = allocation(view, i == 0 ? 2 : 5);
            QVERIFY2(marks[i].top() >= area.top() - 1 && marks[i].bottom() <= area.top() + 8,
                     qPrintable(QString("%1..%2 in %3..%4")
                                    .arg(marks[i].top())
                                    .arg(marks[i].bottom())
                                    .arg(area.top())
                                    .arg(area.bottom())));
            QCOMPARE(marks[i].left(), view.plot()->xAxis->coordToPixel(a.startUs / 1e3));
            QCOMPARE(marks[i].right(), view.plot()->xAxis->coordToPixel(a.endUs / 1e3));
        }
        QFile docs(QStringLiteral(QT_TESTCASE_SOURCEDIR "/../docs/memory-view.md"));
        QVERIFY(docs.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(docs.readAll())
                    .simplified()
                    .contains("their lifetimes marked along the top edge"));
    }

    void fitAndZoomStayWithinTheRun() {
        MemoryView view;
        view.showRun(&document_);
        compareRange(view, 0, 90);
        view.setTimeRange(20, 40);
        compareRange(view, 20, 40);
        view.fit();
        compareRange(view, 0, 90);
        view.setTimeRange(20, 40);
        QTest::mouseDClick(view.plot(), Qt::LeftButton);  // double-click: the whole run
        compareRange(view, 0, 90);
        // Zooming out past the run shows the run.
        view.setTimeRange(-100, 500);
        compareRange(view, 0, 90);
        // Panning past an end keeps the width and stops at the end.
        view.setTimeRange(20, 40);
        view.plot()->xAxis->setRange(QCPRange(80 / 1e3, 100 / 1e3));
        compareRange(view, 70, 90);
        view.plot()->xAxis->setRange(QCPRange(-15 / 1e3, 5 / 1e3));
        compareRange(view, 0, 20);
        // y fits the peak in view: 1150 B before t = 20, 3150 B at t = 30,
        // 1100 B after 75.
        QVERIFY(view.plot()->yAxis->range().upper * kMiB >= 1150);
        QVERIFY(view.plot()->yAxis->range().upper * kMiB < 1500);
        view.fit();
        QVERIFY(view.plot()->yAxis->range().upper * kMiB >= 3150);
        view.setTimeRange(75, 90);
        QVERIFY(view.plot()->yAxis->range().upper * kMiB < 1500);
        QVERIFY(view.plot()->yAxis->range().upper * kMiB >= 1100);
    }

    // A PyTorch memory snapshot (its JSON form, written here) opens into the
    // Memory tab as a recording of its own: the peak in the caption, hover
    // names the site, a site click highlights its allocations; a pickle that
    // asks to run a command is the app's own error dialog.
    void aPyTorchSnapshotOpensIntoTheMemoryTab() {
        const QString path = dir_.filePath("snapshot.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"segments": [], "device_traces": [[
            {"action": "alloc", "addr": 256, "size": 3000000, "stream": 0, "time_us": 1000,
             "frames": [{"filename": "/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py",
                         "line": 10, "name": "forward"},
                        {"filename": "model.py", "line": 20, "name": "forward"}]},
            {"action": "alloc", "addr": 512, "size": 1000000, "stream": 0, "time_us": 1010,
             "frames": [{"filename": "train.py", "line": 5, "name": "main"}]},
            {"action": "free_completed", "addr": 256, "size": 3000000, "stream": 0,
             "time_us": 1020, "frames": []},
            {"action": "alloc", "addr": 768, "size": 500000, "stream": 0, "time_us": 1030,
             "frames": [{"filename": "model.py", "line": 20, "name": "forward"}]}]]})");
        file.close();
        MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(window.openRunFile(path));
        QCOMPARE(window.currentTab(), static_cast<QWidget*>(window.memoryView()));
        QVERIFY(
            window.documents().back().title.contains("snapshot.json · PyTorch memory snapshot"));
        // No configuration to show or run again: the panel says so instead of a form of zeros.
        QVERIFY2(window.configPanel()->viewingText().contains("recorded by PyTorch"),
                 qPrintable(window.configPanel()->viewingText()));
        QVERIFY(window.configPanel()->runAgainButton()->isHidden());
        MemoryView* view = window.memoryView();
        // The peak: 3,000,000 + 1,000,000 bytes, 10 µs after the first event.
        QVERIFY2(view->caption().contains("peak 3.81 MiB at 0.010 ms"),
                 qPrintable(view->caption()));
        // Measured by PyTorch, estimated by nothing: no estimate column (it
        // held a default config's estimate), no residual-stream row.
        QStandardItemModel* table = view->estimateModel();
        QCOMPARE(table->columnCount(), 3);
        QCOMPARE(table->horizontalHeaderItem(2)->text(), QString("max"));
        QVERIFY(table->findItems("residual-stream tensor").isEmpty());
        QCOMPARE(table->findItems("peak").size(), 1);
        const MemoryAllocation* hit = view->allocationAt(15, 100);
        QVERIFY(hit);
        QCOMPARE(hit->bytes, int64_t(3'000'000));
        QVERIFY2(view->describe(*hit).contains("model.py:20 forward"),
                 qPrintable(view->describe(*hit)));
        QVERIFY(view->describe(*hit).contains("activations"));
        // The site groups the first and the last allocation; a click marks both.
        QStandardItemModel* sites = view->sitesModel();
        int row = -1;
        for (int r = 0; r < sites->rowCount(); ++r) {
            if (sites->index(r, 4).data().toString() == "model.py:20 forward") {
                row = r;
            }
        }
        QVERIFY(row >= 0);
        QCOMPARE(sites->index(row, 6).data(Qt::UserRole).toLongLong(), 2LL);
        view->selectSite(row);
        QCOMPARE(view->highlighted().size(), size_t(2));
        // Save never writes over the snapshot: the document has no path of
        // its own (Save asks for one); the same file opened again is the
        // entry already open, not a second one.
        QVERIFY(window.documents().back().path.isEmpty());
        QVERIFY(window.openRunFile(path));
        QCOMPARE(int(window.documents().size()), 1);

        const QString hostile = dir_.filePath("hostile.pickle");
        QFile pickle(hostile);
        QVERIFY(pickle.open(QIODevice::WriteOnly));
        pickle.write(
            QByteArray("\x80\x02"
                       "cposix\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03.",
                       36));
        pickle.close();
        QVERIFY(!window.openRunFile(hostile));
        QVERIFY(window.lastErrorDialog() && window.lastErrorDialog()->isVisible());
        QVERIFY2(window.lastErrorDialog()->text().contains("asks to call posix.system"),
                 qPrintable(window.lastErrorDialog()->text()));
    }

    // Compare memory: two snapshots ticked, both on one axis from their first
    // event, both peaks, and the sites alive at each peak, largest change first.
    void aSnapshotBesideARunIsNamedByItsTitle() {
        // A snapshot's default config must not make every field of the run "differ".
        RunDocument run;
        run.id = 1;
        run.result.config.model = *findPreset("nano");
        RunDocument snapshot;
        snapshot.id = 2;
        snapshot.title = "#2 x.pickle · PyTorch memory snapshot · device 0";
        snapshot.kind = SnapshotDevice{std::make_shared<SnapshotRecording>()};
        QVERIFY(!snapshot.comparesByConfig() && run.comparesByConfig());
        const QStringList labels = RunList::compareLabels({&run, &snapshot});
        QCOMPARE(labels, QStringList({"#1", "#2 x.pickle · PyTorch memory snapshot · device 0"}));
        RunDocument other = run;
        other.id = 3;
        other.result.config.contextLength = 2 * run.result.config.contextLength;
        const QStringList three = RunList::compareLabels({&run, &snapshot, &other});
        QVERIFY2(three[0].contains("ctx") && !three[0].contains("custom"), qPrintable(three[0]));
        QCOMPARE(three[1], labels[1]);
    }

    void twoSnapshotsCompareOnOneAxis() {
        const auto write = [&](const char* name, const QJsonArray& events) {
            QFile file(dir_.filePath(name));
            if (!file.open(QIODevice::WriteOnly)) {
                return QString();
            }
            QJsonObject snapshot;
            snapshot["segments"] = QJsonArray();
            snapshot["device_traces"] = QJsonArray{events};
            file.write(QJsonDocument(snapshot).toJson());
            return file.fileName();
        };
        const auto frame = [](const char* file, int line, const char* function) {
            return QJsonArray{QJsonObject{{"filename", file}, {"line", line}, {"name", function}}};
        };
        const auto event = [](const char* action, int addr, int size, int time,
                              const QJsonArray& frames) {
            return QJsonObject{{"action", action}, {"addr", addr},    {"size", size},
                               {"stream", 0},      {"time_us", time}, {"frames", frames}};
        };
        const QJsonArray forward20 = frame("model.py", 20, "forward");
        const QJsonArray forward30 = frame("model.py", 30, "forward");
        // A: 3,000,000 at model.py:20 and 1,000,000 at train.py:5 (peak 4,000,000 at 10 us).
        const QString a = write("compare_a.json",
                                {event("alloc", 256, 3000000, 100, forward20),
                                 event("alloc", 512, 1000000, 110, frame("train.py", 5, "main")),
                                 event("free_completed", 512, 1000000, 120, {})});
        // B: 3,000,000 at model.py:20 and 2,000,000 at model.py:30 (peak 5,000,000 at 30 us).
        const QString b =
            write("compare_b.json", {event("alloc", 256, 3000000, 5000, forward20),
                                     event("alloc", 768, 2000000, 5030, forward30),
                                     event("free_completed", 768, 2000000, 5040, {})});
        QVERIFY(!a.isEmpty() && !b.isEmpty());
        MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(window.openRunFile(a));
        QVERIFY(window.openRunFile(b));
        window.setCompared({window.documents()[0].id, window.documents()[1].id});
        CompareView* compare = window.compareView();
        MemoryCompareView* memory = compare->memoryCompare();
        QCOMPARE(compare->pages()->currentWidget(), static_cast<QWidget*>(memory));
        QCOMPARE(memory->plot()->graphCount(), 2);
        // Aligned at the first event: B's peak at 0.030 ms, not 4.93 ms after A's start.
        double peakB = 0;
        double peakBAt = -1;
        const auto* data = memory->plot()->graph(1)->data().data();
        for (auto it = data->constBegin(); it != data->constEnd(); ++it) {
            if (it->value > peakB) {
                peakB = it->value;
                peakBAt = it->key;
            }
        }
        QCOMPARE(qint64(std::llround(peakB * 1024 * 1024)), qint64(5'000'000));
        QCOMPARE(peakBAt, 0.030);
        QVERIFY2(memory->caption().contains("B − A at the peak: +976.56 KiB"),
                 qPrintable(memory->caption()));
        QTableWidget* table = memory->table();
        QCOMPARE(table->rowCount(), 3);
        QCOMPARE(table->item(0, MemoryCompareView::Site)->text(), QString("model.py:30 forward"));
        QCOMPARE(table->item(0, MemoryCompareView::Delta)->data(Qt::UserRole).toLongLong(),
                 2'000'000LL);
        QCOMPARE(table->item(1, MemoryCompareView::Site)->text(), QString("train.py:5 main"));
        QCOMPARE(table->item(1, MemoryCompareView::Delta)->data(Qt::UserRole).toLongLong(),
                 -1'000'000LL);
        QCOMPARE(table->item(2, MemoryCompareView::Delta)->data(Qt::UserRole).toLongLong(), 0LL);
    }

    // Issue 40: a real GPU snapshot's largest sites were the caching
    // allocator's malloc and intrusive_ptr's reset, and random_p4.pickle was
    // "2947 events (1750 allocations)" in the caption, "3310 events" in the
    // device box and "3310 events: 1379 allocations" in the CLI. The sites
    // table and hover give the user's frame or the autograd node, as the CLI
    // does; the caption, the device box and the CLI give memory_viz's count.
    void aGpuSnapshotsSitesAndOneCountEverywhere() {
        QVERIFY(makeSnapshotFixtures(dir_.path()));
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(window.openRunFile(dir_.filePath("gpu_like.pickle")));
        MemoryView* view = window.memoryView();
        const auto cli = [](const QString& path) {
            QProcess process;
            process.start(QStringLiteral(STEPSCOPE_CLI), {"memory", path, "--json"});
            process.waitForFinished(120000);
            return nlohmann::json::parse(process.readAllStandardOutput().toStdString());
        };
        const nlohmann::json gpu = cli(dir_.filePath("gpu_like.pickle"));
        QStringList sites;
        for (int r = 0; r < view->sitesModel()->rowCount(); ++r) {
            sites << view->sitesModel()->index(r, 4).data().toString();
        }
        for (const nlohmann::json& site : gpu["top_sites_at_peak"]) {
            QVERIFY2(sites.contains(QString::fromStdString(site["site"].get<std::string>())),
                     qPrintable(sites.join(" | ")));
        }
        QVERIFY2(sites.contains("ToCopyBackward0 · aten::_to_copy"), qPrintable(sites.join(" | ")));
        for (const QString& site : sites) {
            QVERIFY2(!site.contains("CachingAllocator") && !site.contains("intrusive_ptr"),
                     qPrintable(site));
        }
        // Hover over one of _to_copy's 4 MiB blocks names the node and op.
        const MemoryAllocation* toCopy = nullptr;
        for (const MemoryAllocation& a : view->index()->allocations()) {
            toCopy = a.bytes == 4 << 20 ? &a : toCopy;
        }
        QVERIFY(toCopy);
        QVERIFY2(view->describe(*toCopy).contains("site ToCopyBackward0 · aten::_to_copy"),
                 qPrintable(view->describe(*toCopy)));
        QVERIFY2(view->caption().startsWith(QString("%1 events (%2 allocations)")
                                                .arg(gpu["events"].get<int>())
                                                .arg(gpu["allocations"].get<int>())),
                 qPrintable(view->caption()));
        QVERIFY(view->caption().startsWith("17 events (13 allocations)"));

        QVERIFY(window.openRunFile(dir_.filePath("random_p4.pickle")));
        const nlohmann::json random = cli(dir_.filePath("random_p4.pickle"));
        const QString count = QString("%1 events").arg(random["events"].get<int>());
        QVERIFY2(view->caption().startsWith(
                     count + QString(" (%1 allocations)").arg(random["allocations"].get<int>())),
                 qPrintable(view->caption()));
        QCOMPARE(view->deviceBox()->currentText(), QString("device 0 (%1)").arg(count));
        QCOMPARE(count, QString("3143 events"));
    }

    // A snapshot's allocations carry their stacks: hover shows the stack as
    // memory_viz prints it (PyTorch's internal frames left out), a click the
    // whole of it one tick away; record_function ranges are strips along the
    // top at their times; a snapshot with two devices opens on the busier and
    // the device box shows the other one's timeline. The fixture is
    // make_memory_snapshots.py's hand-written basic snapshot, pickled by
    // Python; the stacks are held to torch's own memory_viz functions.
    void aSnapshotsStacksRangesAndDevices() {
        QVERIFY(makeSnapshotFixtures(dir_.path()));
        const QString filtered = memvizStack("FORWARD", false);
        const QString all = memvizStack("FORWARD", true);
        QVERIFY2(!filtered.startsWith("ERROR"), qPrintable(filtered));
        QVERIFY2(!all.startsWith("ERROR"), qPrintable(all));
        // memory_viz leaves out the interpreter's frame: 4 of FORWARD's 5.
        QCOMPARE(filtered.split('\n').size(), 4);
        QVERIFY(!filtered.contains("_PyEval_EvalFrameDefault"));
        QVERIFY(all.contains("Python/ceval.c:0:_PyEval_EvalFrameDefault"));

        MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openRunFile(dir_.filePath("basic_p5.pickle")));
        QCOMPARE(window.documents().size(), size_t(1));
        MemoryView* view = window.memoryView();
        QCustomPlot* plot = view->plot();
        // Device 0 has 11 events (12 entries, a free_requested and its
        // free_completed one "free", as memory_viz counts), device 1 three:
        // it opens on device 0, whose
        // peak (counted by hand in make_memory_snapshots.py's basic_snapshot):
        // 1,000,000 + 700,000 alive before the trace, + 3,000,000 at 1010 µs,
        // + 524,288 at 1020 µs = 5,224,288 bytes, 20 µs after its first event.
        QVERIFY2(view->caption().contains(QString("peak %1 at 0.020 ms").arg(bytesText(5'224'288))),
                 qPrintable(view->caption()));
        QVERIFY(view->deviceBox()->isVisible());
        QCOMPARE(view->deviceBox()->count(), 2);
        QCOMPARE(view->deviceBox()->currentText(), QString("device 0 (11 events)"));
        QCOMPARE(view->deviceBox()->itemText(1), QString("device 1 (3 events)"));

        // Hover over the 3,000,000-byte block made with FORWARD's stack (alive
        // 10 µs to 31 µs after the first event): the mouse over its band.
        const MemoryAllocation* forward = nullptr;
        for (const MemoryAllocation& a : view->index()->allocations()) {
            if (a.bytes == 3'000'000) {
                forward = &a;
            }
        }
        QVERIFY(forward);
        int64_t bottom = 0;
        int64_t top = 0;
        QVERIFY(view->bandExtent(*forward, 20, &bottom, &top));
        const QPoint over(int(plot->xAxis->coordToPixel(0.020)),
                          int(plot->yAxis->coordToPixel(double(bottom + top) / 2 / kMiB)));
        QMouseEvent move(QEvent::MouseMove, over, plot->mapToGlobal(over), Qt::NoButton,
                         Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(plot, &move);
        QCOMPARE(view->hovered(), forward);
        // What the tooltip says.
        const QString hover = QToolTip::text();
        QCOMPARE(hover, view->describe(*forward));
        QVERIFY2(hover.contains("made at 0.010 ms, freed at 0.031 ms, alive 0.021 ms"),
                 qPrintable(hover));
        QVERIFY2(hover.contains("activations"), qPrintable(hover));
        QVERIFY2(hover.contains("site model.py:20 forward"), qPrintable(hover));
        QVERIFY2(hover.contains("4 of 5 frames"), qPrintable(hover));
        for (const QString& line : filtered.split('\n')) {
            QVERIFY2(hover.contains("\n  " + line), qPrintable(line));
        }
        QVERIFY2(!hover.contains("_PyEval_EvalFrameDefault"), qPrintable(hover));
        QVERIFY2(!hover.contains("ceval.c"), qPrintable(hover));

        // A click keeps it: the Stack tab shows the filtered stack, and the
        // toggle every frame.
        for (const QEvent::Type type : {QEvent::MouseButtonPress, QEvent::MouseButtonRelease}) {
            QMouseEvent click(type, over, plot->mapToGlobal(over), Qt::LeftButton, Qt::LeftButton,
                              Qt::NoModifier);
            QApplication::sendEvent(plot, &click);
        }
        QCOMPARE(view->pinned(), forward);
        SnapshotStackPanel* stack = view->stackPanel();
        QCOMPARE(view->lowerTabs()->currentWidget(), static_cast<QWidget*>(stack));
        QCOMPARE(stack->text(), filtered);
        QCOMPARE(stack->allFramesBox()->text(), QString("Show all 5 frames"));
        QVERIFY(stack->allFramesBox()->isEnabled());
        QTest::mouseClick(stack->allFramesBox(), Qt::LeftButton);
        QVERIFY(stack->allFrames());
        QCOMPARE(stack->text(), all);
        stack->setAllFrames(false);
        QCOMPARE(stack->text(), filtered);

        // record_function ranges of device 0: "fwd" 1005–1035 µs; "opt" opened
        // at 1045 µs with no END runs to the last event (1100 µs); a stray END
        // draws nothing. Times from the first event (1000 µs).
        const QList<QPair<QString, QRectF>> strips = view->annotationStrips();
        QCOMPARE(strips.size(), 2);
        QCOMPARE(strips[0].first, QString("fwd"));
        QCOMPARE(strips[1].first, QString("opt"));
        QCOMPARE(strips[0].second.left(), plot->xAxis->coordToPixel(0.005));
        QCOMPARE(strips[0].second.right(), plot->xAxis->coordToPixel(0.035));
        QCOMPARE(strips[1].second.left(), plot->xAxis->coordToPixel(0.045));
        // The chart ends with the last allocation event (1090 µs): "opt" runs on past it.
        QVERIFY(plot->xAxis->coordToPixel(0.100) > QRectF(plot->axisRect()->rect()).right());
        QCOMPARE(strips[1].second.right(), QRectF(plot->axisRect()->rect()).right());
        QCOMPARE(strips[0].second.top(), double(plot->axisRect()->top()));
        // Drawn: the strip's middle is not the chart's white.
        const QImage image = plot->grab().toImage();
        const QPoint middle = strips[0].second.center().toPoint();
        QVERIFY(image.pixelColor(middle) != QColor(Qt::white));

        // Device 1: a 2,000,000-byte block (its requested size) alive before
        // the trace, + 1,000 at 10 µs, + 3,000 at 11 µs = 2,004,000 bytes, 1 µs
        // after its first event. Picked in the box, built off the UI thread,
        // shown in place of device 0 (the same entry of the run list).
        view->deviceBox()->setFocus();
        QTest::keyClick(view->deviceBox(), Qt::Key_Down);
        QTRY_VERIFY2(
            view->caption().contains(QString("peak %1 at 0.001 ms").arg(bytesText(2'004'000))),
            qPrintable(view->caption()));
        QCOMPARE(window.documents().size(), size_t(1));
        QVERIFY(window.documents().back().title.contains("device 1"));
        QCOMPARE(view->deviceBox()->currentText(), QString("device 1 (3 events)"));
        // Its one range ("other", 5–6 µs) ended before its trace began.
        QVERIFY(view->annotationStrips().isEmpty());
        QVERIFY(!view->pinned());
        const MemoryAllocation* small = nullptr;
        for (const MemoryAllocation& a : view->index()->allocations()) {
            if (a.bytes == 1'000) {
                small = &a;
            }
        }
        QVERIFY(small);
        QVERIFY2(view->describe(*small).contains(filtered.section('\n', 0, 0)),
                 qPrintable(view->describe(*small)));
        // And back: device 0's peak again.
        QTest::keyClick(view->deviceBox(), Qt::Key_Up);
        QTRY_VERIFY2(view->caption().contains(QString("peak %1").arg(bytesText(5'224'288))),
                     qPrintable(view->caption()));
    }

    void followingTheTimelineCanBeSwitchedOff() {
        const QString path = dir_.filePath("timeline.json");
        const QString error = cliRun(path, {"--memory", "--ops", "--mode", "train-step"}, 2);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const RunResult run = readRunFile(path.toStdString());
        MainWindow window;
        QVERIFY(window.openRunFile(path));
        MemoryView* view = window.memoryView();
        QVERIFY(view->followsTimeline());  // on by default
        const double shift = run.timeline.clockOriginUs - run.memory.clockOriginUs;
        window.timelineView()->setVisibleRange(100, 900);
        QCOMPARE(view->timeRange().first, 100 + shift);
        QCOMPARE(view->timeRange().second, 900 + shift);
        // Unlinked: the Timeline's zoom leaves this chart where it is.
        view->setFollowsTimeline(false);
        window.timelineView()->setVisibleRange(300, 600);
        QCOMPARE(view->timeRange().first, 100 + shift);
        QCOMPARE(view->timeRange().second, 900 + shift);
        view->setFollowsTimeline(true);
        window.timelineView()->setVisibleRange(300, 700);
        QCOMPARE(view->timeRange().first, 300 + shift);
    }

    void sitesGroupTheSameSiteAcrossStepsAndAClickHighlightsThem() {
        MemoryView view;
        view.resize(1000, 700);
        view.show();
        view.showRun(&document_);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QAbstractItemModelTester tester(view.sitesModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QStandardItemModel* sites = view.sitesModel();
        // B (step 0) and E (step 1): one row.
        const int row = siteRow(sites, "layers.0.attn", "aten::mm", "activations");
        QVERIFY(row >= 0);
        QCOMPARE(sites->index(row, 6).data(Qt::UserRole).toLongLong(), 2LL);     // count
        QCOMPARE(sites->index(row, 7).data(Qt::UserRole).toLongLong(), 2000LL);  // total
        QCOMPARE(sites->index(row, 0).data(Qt::UserRole).toLongLong(), 1000LL);  // largest
        QCOMPARE(sites->index(row, 3).data().toString(), QString("0–1"));        // steps
        QCOMPARE(sites->rowCount(), 5);                                          // A, B+E, C, D, F
        // The largest first.
        QCOMPARE(sites->index(0, 0).data(Qt::UserRole).toLongLong(), 2000LL);
        // A click on the row highlights B and E.
        QTableView* table = view.sitesTable();
        const QRect cell = table->visualRect(sites->index(row, 1));
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
        const std::vector<const MemoryAllocation*> marked = view.highlighted();
        QCOMPARE(marked.size(), size_t(2));
        QCOMPARE(marked[0]->address, uint64_t(2));
        QCOMPARE(marked[1]->address, uint64_t(5));
        // Narrowed to 62–68 (step 1 only), the row counts E alone.
        view.setTimeRange(62, 68);
        const int narrowed = siteRow(sites, "layers.0.attn", "aten::mm", "activations");
        QVERIFY(narrowed >= 0);
        QCOMPARE(sites->index(narrowed, 6).data(Qt::UserRole).toLongLong(), 1LL);
        QCOMPARE(sites->index(narrowed, 3).data().toString(), QString("1"));
        QCOMPARE(view.highlighted().size(), size_t(2));  // regrouping keeps the highlight
        // Deselecting the row takes the highlight off.
        table->selectRow(narrowed);
        table->clearSelection();
        QVERIFY(view.highlighted().empty());
    }

    void opColumnRoundTripsAndOldFilesLoad() {
        const QString path = dir_.filePath("op.json");
        writeRunFile(document_.result, path.toStdString());
        const RunResult back = readRunFile(path.toStdString());
        QCOMPARE(back.memory.op, document_.result.memory.op);
        QCOMPARE(back.memory.name(memoryAllocations(back.memory)[3].op), std::string("aten::mm"));
        QCOMPARE(runResultFromJson(runResultToJson(document_.result)).memory.op,
                 document_.result.memory.op);

        // A file written before the op column: loads, without ops.
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
        file.close();
        QJsonObject memory = root["memory"].toObject();
        memory.remove("op");
        root["memory"] = memory;
        const QString old = dir_.filePath("old.json");
        QFile out(old);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QJsonDocument(root).toJson());
        out.close();
        const RunResult oldRun = readRunFile(old.toStdString());
        QCOMPARE(oldRun.memory.size(), document_.result.memory.size());
        QCOMPARE(oldRun.memory.bytes, document_.result.memory.bytes);
        QVERIFY(oldRun.memory.op.empty());
        QCOMPARE(memoryAllocations(oldRun.memory)[1].op, -1);

        // An op column of the wrong length names the field.
        QJsonArray shorter = root["memory"].toObject()["bytes"].toArray();
        shorter.removeLast();
        memory["op"] = shorter;
        root["memory"] = memory;
        try {
            runResultFromJson(QJsonDocument(root).toJson().toStdString());
            QFAIL("a short op column was accepted");
        } catch (const RunFileError& error) {
            QVERIFY2(QString(error.what()).contains("memory.op"), error.what());
        }
        // A category that only fits a byte after wrapping is refused, not read as 1.
        QJsonObject wrapped = memory;
        wrapped.remove("op");
        QJsonArray categories = wrapped["category"].toArray();
        categories[0] = 257;
        wrapped["category"] = categories;
        root["memory"] = wrapped;
        try {
            runResultFromJson(QJsonDocument(root).toJson().toStdString());
            QFAIL("category 257 was accepted");
        } catch (const RunFileError& error) {
            QVERIFY2(QString(error.what())
                         .contains("memory.category[0]: 257 is out of range; allowed: 0.."),
                     error.what());
        }
        // And a wrong length in an older column too, on the fast path.
        memory.remove("op");
        memory["time_us"] = shorter;
        root["memory"] = memory;
        try {
            runResultFromJson(QJsonDocument(root).toJson().toStdString());
            QFAIL("a short address column was accepted");
        } catch (const RunFileError& error) {
            QVERIFY2(QString(error.what()).contains("memory.address"), error.what());
        }
    }

    void aRealRunRecordsTheOpThatAllocated() {
        const QString path = dir_.filePath("real.json");
        const QString error = cliRun(path, {"--memory", "--mode", "train-step"}, 2);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const RunResult run = readRunFile(path.toStdString());
        QCOMPARE(run.memory.op.size(), run.memory.size());
        size_t forward = 0;
        size_t withAtenOp = 0;
        size_t backward = 0;
        size_t backwardNamed = 0;
        for (const MemoryAllocation& a : memoryAllocations(run.memory)) {
            if (a.phase == 1) {
                ++forward;
                withAtenOp += run.memory.name(a.op).rfind("aten::", 0) == 0;
            } else if (a.phase == 2) {
                ++backward;
                const std::string& op = run.memory.name(a.op);
                backwardNamed += !op.empty() && op == run.memory.name(a.path);  // the autograd node
            }
        }
        QVERIFY(forward > 20);
        QVERIFY2(withAtenOp * 10 >= forward * 9,
                 qPrintable(QString("%1 of %2 forward allocations name an aten op")
                                .arg(withAtenOp)
                                .arg(forward)));
        QVERIFY(backward > 0);
        QVERIFY2(backwardNamed * 10 >= backward * 9,
                 qPrintable(QString("%1 of %2").arg(backwardNamed).arg(backward)));
    }

    void savedViewHasABarPerBlockAndAClickListsItsTensors() {
        // Checkpointing every block keeps only each block's output: one
        // batch × ctx × d_model fp32 tensor a block, known from the dims alone.
        const RunDocument document =
            tracedRun(dir_.filePath("saved-k1.json"), 7,
                      {"--mode", "train-step", "--activation-checkpoint", "1"});
        QVERIFY(!document.result.memory.empty());
        const ModelDims& dims = document.result.config.model;
        const int64_t output = document.result.config.batchSize *
                               document.result.config.contextLength * dims.dModel * 4;

        MemoryView view;
        view.resize(1200, 800);
        view.show();
        view.showRun(&document);
        SavedView* saved = view.savedView();
        view.lowerTabs()->setCurrentWidget(saved);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        saved->plot()->replot();
        QCOMPARE(int(saved->saved().blocks.size()), int(dims.layers));
        QCOMPARE(saved->savedBars()->dataCount(), int(dims.layers));
        QCOMPARE(saved->blocksModel()->rowCount(), int(dims.layers));
        for (int b = 0; b < int(dims.layers); ++b) {
            QCOMPARE(saved->saved().blocks[size_t(b)].bytes, output);
            QCOMPARE(saved->savedBars()->data()->at(b)->value, double(output) / kMiB);
            QCOMPARE(saved->blocksModel()->item(b, 0)->text(), QString("layers.%1").arg(b));
        }

        // A click on block 1's bar: its tensors listed and outlined on the timeline.
        const QCPBarsDataContainer::const_iterator bar = saved->savedBars()->data()->at(1);
        // The saved bar is the left one of the pair around the block's key.
        const QPointF centre(saved->plot()->xAxis->coordToPixel(bar->key - 0.2),
                             saved->plot()->yAxis->coordToPixel(bar->value / 2));
        QCOMPARE(saved->blockAt(centre), 1);
        QCOMPARE(saved->plot()->plottableAt(centre), saved->savedBars());
        QTest::mouseClick(saved->plot(), Qt::LeftButton, {}, centre.toPoint());
        QCOMPARE(saved->selectedBlock(), 1);
        QCOMPARE(saved->tensorsModel()->rowCount(), 1);
        QCOMPARE(saved->tensorsModel()->item(0, 0)->data(Qt::UserRole).toLongLong(), output);
        QVERIFY(saved->savedBars()->selected());
        const std::vector<const MemoryAllocation*> outlined = view.highlighted();
        QCOMPARE(int(outlined.size()), 1);
        QCOMPARE(outlined[0]->bytes, output);
        QVERIFY(QString::fromStdString(view.index()->trace()->name(outlined[0]->path))
                    .startsWith("layers.1"));
        QCOMPARE(outlined[0]->step, saved->saved().step);
        saved->selectBlock(-1);
        QVERIFY(view.highlighted().empty());
        QCOMPARE(saved->tensorsModel()->rowCount(), 0);
        QVERIFY(!saved->savedBars()->selected());

        // Without checkpointing every block keeps the same, far more; the
        // tensors listed (the view's own pairing of the trace's events) add
        // up to the block's figure (the core's).
        const RunDocument plain =
            tracedRun(dir_.filePath("saved-off.json"), 8, {"--mode", "train-step"});
        view.showRun(&plain);
        const SavedForBackward expected = savedForBackward(plain.result);
        QCOMPARE(int(saved->saved().blocks.size()), int(dims.layers));
        for (int b = 0; b < int(dims.layers); ++b) {
            const BlockSaved& block = expected.blocks[size_t(b)];
            QCOMPARE(block.bytes, expected.blocks[0].bytes);
            QVERIFY2(block.bytes > 4 * output, qPrintable(QString::number(block.bytes)));
            saved->selectBlock(b);
            qlonglong listed = 0;
            for (int row = 0; row < saved->tensorsModel()->rowCount(); ++row) {
                listed += saved->tensorsModel()->item(row, 0)->data(Qt::UserRole).toLongLong();
            }
            QCOMPARE(listed, qlonglong(block.bytes));
            QCOMPARE(saved->tensorsModel()->rowCount(), int(block.tensors));
            QCOMPARE(int(view.highlighted().size()), int(block.tensors));
        }
        const QStringList exports = [&] {
            QStringList names;
            for (const ExportTarget& target : view.exportTargets()) {
                names << target.name;
            }
            return names;
        }();
        QVERIFY(exports.contains("memory-saved-for-backward"));
        QVERIFY(exports.contains("memory-saved-per-block"));

        // A run without a backward says why, with no other run's bars.
        const RunDocument inference =
            tracedRun(dir_.filePath("saved-inference.json"), 9, {"--mode", "inference"});
        QVERIFY(!inference.result.memory.empty());
        view.showRun(&inference);
        QVERIFY2(saved->caption().contains("no backward"), qPrintable(saved->caption()));
        QCOMPARE(saved->savedBars()->dataCount(), 0);
        QCOMPARE(saved->tensorsModel()->rowCount(), 0);
        view.showRun(nullptr);
        QVERIFY(saved->caption().contains("memory trace"));
    }
    // Reserved memory beside allocated: a snapshot's segment events make a
    // dashed step line, exact at each segment event (the segment_free at
    // 170 µs shows at 170, not at the next free), and the caption states the
    // gap at the allocated peak. A snapshot without them shows none and says so.
    void reservedFollowsSegmentEventsAndTheGapAtThePeakIsStated() {
        const QString path = dir_.filePath("segments.pickle");
        const QString error = writeSnapshotPickle(path, kSegmentTrace, true);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(window.openRunFile(path));
        MemoryView* view = window.memoryView();
        QVERIFY(view->reservedGraph());
        for (const double t : {0.0, 5.0, 15.0, 25.0, 45.0, 65.0, 69.0, 70.0, 75.0, 80.0}) {
            QVERIFY2(view->reservedAt(t).has_value(), qPrintable(QString::number(t)));
            QCOMPARE(*view->reservedAt(t), referenceReservedAt(kSegmentTrace, t));
        }
        QCOMPARE(*view->reservedAt(75), int64_t(2097152));  // given back before the last free
        // The line as drawn: 6 MiB from 20 µs to 70 µs.
        const auto* data = view->reservedGraph()->data().data();
        const auto at = [&](double ms) { return (data->findEnd(ms, false) - 1)->value; };
        QCOMPARE(at(0.025), 6.0);
        QCOMPARE(at(0.075), 2.0);
        const auto [peak, reservedAtPeak] = referencePeakAndReserved(kSegmentTrace);
        QCOMPARE(peak, int64_t(4'500'000));
        QCOMPARE(view->reservedAtPeak(), std::optional<int64_t>(reservedAtPeak));
        const QString gap = bytesText(reservedAtPeak - peak);  // 1,791,456 B
        QVERIFY2(view->caption().contains(
                     QString("At the allocated peak, %1 reserved: %2 more than allocated")
                         .arg(bytesText(reservedAtPeak), gap)),
                 qPrintable(view->caption()));
        const QString share =
            QString::number(100.0 * double(reservedAtPeak - peak) / double(reservedAtPeak), 'f', 1);
        QVERIFY2(view->caption().contains("(fragmentation, " + share + "% of reserved)"),
                 qPrintable(view->caption()));
        // The value axis makes room for the reserved line above the peak.
        QVERIFY(view->plot()->yAxis->range().upper >= 6.0);

        const QString plain = dir_.filePath("no-segments.pickle");
        std::vector<SnapshotEvent> noSegments;
        for (const SnapshotEvent& e : kSegmentTrace) {
            if (!std::string(e.action).starts_with("segment")) {
                noSegments.push_back(e);
            }
        }
        QVERIFY(writeSnapshotPickle(plain, noSegments, false).isEmpty());
        QVERIFY(window.openRunFile(plain));
        QVERIFY(!view->reservedGraph());
        QVERIFY(!view->reservedAtPeak());
        QVERIFY2(view->caption().contains("no segment events"), qPrintable(view->caption()));
    }

    // The user's rules: a bad regex is refused beside its row (Save off); a
    // file rule and a name rule search only their own field; the first that
    // matches names the category, before Mosaic's ("forward" → activations);
    // Save applies them to the open snapshot, and a new window reads them
    // back from the settings and applies them to a snapshot it opens.
    // A device that holds segments but no events keeps the way back; a
    // snapshot read with rules saved since is categorised by the new ones;
    // once saved as a run file, neither that file nor the snapshot opens twice.
    void aSnapshotKeepsItsWayBackItsRulesAndItsSavedFile() {
        const QString path = dir_.filePath("idle-device.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"device_traces": [[
            {"action": "alloc", "addr": 256, "size": 3000000, "stream": 0, "time_us": 1,
             "frames": [{"filename": "model.py", "line": 20, "name": "forward"}]},
            {"action": "free_completed", "addr": 256, "size": 3000000, "stream": 0,
             "time_us": 5, "frames": []}], []],
            "segments": [{"device": 1, "address": 4096, "total_size": 2097152,
             "allocated_size": 0, "active_size": 0, "requested_size": 0, "stream": 0,
             "segment_type": "large", "is_expandable": false, "frames": [],
             "blocks": [{"address": 4096, "size": 2097152, "requested_size": 0,
                         "state": "inactive", "frames": []}]}]})");
        file.close();
        MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(window.openRunFile(path));
        MemoryView* view = window.memoryView();
        QCOMPARE(view->deviceBox()->count(), 2);
        QCOMPARE(view->deviceBox()->itemText(1), QString("device 1 (0 events)"));
        view->deviceBox()->setFocus();
        QTest::keyClick(view->deviceBox(), Qt::Key_Down);
        QTRY_VERIFY2(view->caption().contains("Device 1 of this snapshot has no events"),
                     qPrintable(view->caption()));
        QVERIFY(view->deviceBox()->isVisibleTo(view));
        QTest::keyClick(view->deviceBox(), Qt::Key_Up);
        QTRY_VERIFY2(view->caption().contains("peak 2.86 MiB"), qPrintable(view->caption()));

        // Read before the rules were saved (an open or a device under way):
        // delivered categorised by the rules as they are now.
        const RunDocument& shown = window.documents().back();
        const std::shared_ptr<RunDocument> early = snapshotDocument(
            shown.snapshot()->snapshot, shown.snapshot()->path, shown.snapshot()->device, {});
        QCOMPARE(early->result.memory.category.front(), uint8_t(MemoryCategory::Activations));
        const std::vector<CategoryRule> rules{{"inputs", "^model\\.py$", RuleTarget::File}};
        applyRules(window, rules);
        const std::shared_ptr<RunDocument> late = window.categoryRules()->withCurrentRules(early);
        QVERIFY(late->snapshot()->rules == rules);
        QCOMPARE(late->result.memory.category.front(), uint8_t(MemoryCategory::Inputs));
        applyRules(window, {});

        const QString saved = dir_.filePath("idle-device-run.json");
        QVERIFY(window.saveDocument(window.documents().back().id, saved));
        QVERIFY(window.openRunFile(saved));
        QVERIFY(window.openRunFile(path));
        QCOMPARE(int(window.documents().size()), 1);
        // Opened in a window of its own, the saved file is still what PyTorch
        // recorded (its opener says so): no configuration to show.
        MainWindow fresh;
        fresh.show();
        QVERIFY(fresh.openRunFile(saved));
        QVERIFY(!fresh.documents().back().canShowConfig());
        QVERIFY(!fresh.documents().back().snapshot());
        QVERIFY2(fresh.configPanel()->viewingText().contains("recorded by PyTorch"),
                 qPrintable(fresh.configPanel()->viewingText()));
    }

    // A snapshot carries no model: no default model's blocks and gradients
    // are drawn as if they were its own, and the view says why.
    void aSnapshotHasNoBlocksToSaveFor() {
        const std::unique_ptr<MainWindow> shown =
            windowWithSnapshot(dir_.filePath("saved-for-backward.pickle"));
        QVERIFY(shown);
        const SavedView* saved = shown->memoryView()->savedView();
        QVERIFY(saved->saved().blocks.empty());
        QCOMPARE(saved->savedBars()->data()->size(), 0);
        QVERIFY2(saved->caption().contains("names no Transformer blocks"),
                 qPrintable(saved->caption()));
    }

    void userCategoryRulesMoveAllocationsAndSurviveANewWindow() {
        const QString path = dir_.filePath("rules.pickle");
        using C = MemoryCategory;
        {
            const std::unique_ptr<MainWindow> shown = windowWithSnapshot(path);
            QVERIFY(shown);
            MainWindow& window = *shown;
            MemoryView* view = window.memoryView();
            QVERIFY(view->categoryRulesButton()->isVisibleTo(view));
            QCOMPARE(categoriesOf(*view, 1'500'000), QSet<int>{int(C::Activations)});
            QCOMPARE(categoriesOf(*view, 3'000'000), QSet<int>{int(C::Other)});

            QTest::mouseClick(view->categoryRulesButton(), Qt::LeftButton);
            CategoryRulesDialog* dialog = window.categoryRules()->dialog();
            QVERIFY(dialog && dialog->isVisible());
            QCOMPARE(dialog->rowCount(), 0);
            dialog->addRule({"temporaries", "(", RuleTarget::Name});
            QVERIFY2(dialog->errorText(0).contains("not a regular expression"),
                     qPrintable(dialog->errorText(0)));
            QVERIFY(!dialog->saveButton()->isEnabled());
            // Only the file is kv_cache.py: a name rule for it matches nothing.
            dialog->patternEdit(0)->setText("kv_cache");
            QCOMPARE(dialog->errorText(0), QString());
            QVERIFY(dialog->saveButton()->isEnabled());
            dialog->addRule({"activations", "", RuleTarget::Name});
            QVERIFY(!dialog->saveButton()->isEnabled());  // an empty regex matches every frame
            QCOMPARE(dialog->targetBox(1)->count(), 3);   // function name, file, name or file
            dialog->targetBox(1)->setCurrentIndex(1);     // file
            dialog->patternEdit(1)->setText(R"(kv_cache\.py$)");
            dialog->categoryBox(1)->setCurrentText("inputs");
            dialog->addRule({"optimizer_state", "grow_cache", RuleTarget::Name});
            QVERIFY(dialog->saveButton()->isEnabled());
            QTest::mouseClick(dialog->saveButton(), Qt::LeftButton);
            // The file rule comes before the name rule that matches too.
            QTRY_COMPARE(categoriesOf(*view, 1'500'000), QSet<int>{int(C::Inputs)});
            QCOMPARE(categoriesOf(*view, 500'000), QSet<int>{int(C::Inputs)});
            QCOMPARE(categoriesOf(*view, 3'000'000), QSet<int>{int(C::Other)});
            QVERIFY(view->describe(allocationOfBytes(*view, 1'500'000)).contains("inputs"));
        }
        MainWindow next;
        const std::vector<CategoryRule>& kept = next.categoryRules()->rules();
        QCOMPARE(kept.size(), size_t(3));
        QCOMPARE(kept[1].pattern, std::string(R"(kv_cache\.py$)"));
        QCOMPARE(kept[1].category, std::string("inputs"));
        QVERIFY(kept[1].target == RuleTarget::File);
        QVERIFY(kept[0].target == RuleTarget::Name && kept[2].target == RuleTarget::Name);
        QVERIFY(next.openRunFile(path));
        QCOMPARE(categoriesOf(*next.memoryView(), 1'500'000), QSet<int>{int(C::Inputs)});
        // Moving the name rule first makes it win; no rules at all, Mosaic's again.
        CategoryRulesDialog* dialog = next.categoryRules()->edit();
        QCOMPARE(dialog->rowCount(), 3);
        dialog->moveRule(2, -1);
        dialog->moveRule(1, -1);
        QCOMPARE(dialog->patternEdit(0)->text(), QString("grow_cache"));
        QTest::mouseClick(dialog->saveButton(), Qt::LeftButton);
        QTRY_COMPARE(categoriesOf(*next.memoryView(), 1'500'000),
                     QSet<int>{int(C::OptimizerState)});
        applyRules(next, {});
        QCOMPARE(categoriesOf(*next.memoryView(), 1'500'000), QSet<int>{int(C::Activations)});
    }

    // Rules are applied off the UI thread: the status says so and offers
    // Cancel, which keeps the rules as they were (in the settings too) and
    // the snapshot as it is shown. An open can be cancelled the same way.
    void applyingRulesCanBeCancelledAndSoCanAnOpen() {
        using C = MemoryCategory;
        const std::unique_ptr<MainWindow> shown =
            windowWithSnapshot(dir_.filePath("cancel-rules.pickle"));
        QVERIFY(shown);
        MainWindow& window = *shown;
        MemoryView* view = window.memoryView();
        auto* cancel = window.findChild<QToolButton*>("cancelWork");
        QVERIFY(cancel && !cancel->isVisible());
        auto statusSays = [&](const QString& text) {
            for (const QLabel* label : window.statusBar()->findChildren<QLabel*>()) {
                if (label->text().startsWith(text)) {
                    return true;
                }
            }
            return false;
        };
        QCOMPARE(categoriesOf(*view, 1'500'000), QSet<int>{int(C::Activations)});

        const std::vector<CategoryRule> rules{{"inputs", "^model\\.py$", RuleTarget::File}};
        QSignalSpy applied(window.categoryRules(), &CategoryRulesControl::applied);
        QCOMPARE(window.categoryRules()->apply(rules), 1);
        QVERIFY(window.categoryRules()->applying());
        QVERIFY(statusSays("Applying the category rules to the open snapshot…"));
        QVERIFY(cancel->isVisible());
        QCOMPARE(categoriesOf(*view, 1'500'000), QSet<int>{int(C::Activations)});  // not yet
        QTest::mouseClick(cancel, Qt::LeftButton);
        QVERIFY(!window.categoryRules()->applying());
        QVERIFY(window.categoryRules()->rules().empty());
        QVERIFY(loadCategoryRules().empty());
        QVERIFY(statusSays("Category rules not applied: cancelled"));
        QVERIFY(!cancel->isVisible());
        QTest::qWait(300);  // the work ends meanwhile; what it made is dropped
        QCOMPARE(applied.count(), 0);
        QCOMPARE(categoriesOf(*view, 1'500'000), QSet<int>{int(C::Activations)});

        applyRules(window, rules);
        QCOMPARE(categoriesOf(*view, 1'500'000), QSet<int>{int(C::Inputs)});
        QVERIFY(!cancel->isVisible());
        applyRules(window, {});

        // An open cancelled: nothing of it is listed.
        const QString other = dir_.filePath("cancel-open.pickle");
        QVERIFY(writeSnapshotPickle(other, kSegmentTrace, true).isEmpty());
        QSignalSpy dropped(window.findChild<FileOpener*>(), &FileOpener::dropped);
        window.openFiles({other});
        QVERIFY(statusSays("Opening"));
        QVERIFY(cancel->isVisible());
        QTest::mouseClick(cancel, Qt::LeftButton);
        QVERIFY(statusSays("Opening cancelled"));
        QVERIFY(!cancel->isVisible());
        QVERIFY(dropped.wait(20000));
        QCOMPARE(int(window.documents().size()), 1);
    }

    // A large snapshot's open says how far it is, in the status beside its
    // Cancel (which stops the read there: tst_memory_snapshot's
    // aLargeReadTellsHowFarItIsAndStops).
    // A snapshot large enough to say how far its open and a rules' apply are:
    // 200,000 allocations and their frees (over 3 MiB).
    QString writeLargeSnapshot() {
        MemoryTrace trace;
        trace.device = "cuda:0";
        trace.paths = {"layers.0.mlp.fc1"};
        for (int i = 0; i < 400000; ++i) {  // an alloc and its free
            trace.timeUs.push_back(double(i));
            trace.address.push_back(uint64_t(i / 2 + 1) * 512);
            trace.bytes.push_back(i % 2 == 0 ? 512 : -512);
            trace.category.push_back(uint8_t(MemoryCategory::Activations));
            trace.phase.push_back(1);
            trace.step.push_back(0);
            trace.path.push_back(0);
        }
        const QString path = dir_.filePath("large.pickle");
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly)) {
            return {};
        }
        const std::string bytes = memvizPickle(trace);
        file.write(bytes.data(), qint64(bytes.size()));
        return path;
    }
    // The status bar's text that starts with `start`, if any.
    static QString statusSaying(MainWindow& window, const QString& start) {
        for (const QLabel* label : window.statusBar()->findChildren<QLabel*>()) {
            if (label->text().startsWith(start)) {
                return label->text();
            }
        }
        return {};
    }

    // The open counts its percent from the read (to 55) through the
    // document's stages (to 100), each said in the status bar.
    void openingALargeSnapshotSaysHowFarItIs() {
        const QString path = writeLargeSnapshot();
        QVERIFY(QFileInfo(path).size() > 3 << 20);
        MainWindow window;
        window.show();
        std::vector<int> percents;
        QStringList said;
        connect(window.fileOpener(), &FileOpener::progress, &window, [&](int, int percent) {
            percents.push_back(percent);
            said << statusSaying(window, "Opening");
        });
        QSignalSpy finished(window.fileOpener(), &FileOpener::finished);
        window.openFiles({path});
        QVERIFY(finished.wait(30000));
        QCOMPARE(int(window.documents().size()), 1);
        QVERIFY2(percents.size() >= 3, qPrintable(QString::number(percents.size())));
        QVERIFY(std::is_sorted(percents.begin(), percents.end()));
        QCOMPARE(percents.front(), 0);
        // The read ends at 55% (file_opener's kSnapshotReadShare), the document the rest.
        QVERIFY(std::find(percents.begin(), percents.end(), 55) != percents.end());  // read
        QVERIFY2(std::any_of(percents.begin(), percents.end(),
                             [](int percent) { return percent > 55 && percent < 99; }),
                 "no percent while the document is built");
        QVERIFY2(percents.back() >= 99, qPrintable(QString::number(percents.back())));
        QCOMPARE(said.size(), int(percents.size()));
        QCOMPARE(said.back(), QString("Opening %1… %2%").arg(path).arg(percents.back()));
    }

    // Applying category rules to a large snapshot counts its percent in the
    // status bar as the document is built again; Cancel still ends it.
    void applyingRulesToALargeSnapshotSaysHowFarItIs() {
        const QString path = writeLargeSnapshot();
        MainWindow window;
        window.show();
        QVERIFY(window.openRunFile(path));
        std::vector<int> percents;
        QStringList said;
        connect(window.categoryRules(), &CategoryRulesControl::progress, &window, [&](int percent) {
            percents.push_back(percent);
            said << statusSaying(window, "Applying");
        });
        applyRules(window, {{"inputs", "fc1", RuleTarget::Name}});
        QVERIFY2(percents.size() >= 3, qPrintable(QString::number(percents.size())));
        QVERIFY(std::is_sorted(percents.begin(), percents.end()));
        QVERIFY(percents.front() > 0 && percents.front() < 50);
        QVERIFY2(percents.back() >= 99, qPrintable(QString::number(percents.back())));
        QCOMPARE(
            said.back(),
            QString("Applying the category rules to the open snapshot… %1%").arg(percents.back()));
        QCOMPARE(window.documents().back().result.memory.category.front(),
                 uint8_t(MemoryCategory::Inputs));

        // The stages as the document is built: in order, to 1; a false
        // before the last stage stops it there, with no document.
        const SnapshotRecording& recording = *window.documents().back().snapshot();
        std::vector<double> stages;
        QVERIFY(
            snapshotDocument(recording.snapshot, path, recording.device, {}, [&](double fraction) {
                stages.push_back(fraction);
                return true;
            }));
        QVERIFY(stages.size() >= 4 && std::is_sorted(stages.begin(), stages.end()));
        QCOMPARE(stages.back(), 1.0);
        int asked = 0;
        QVERIFY(!snapshotDocument(recording.snapshot, path, recording.device, {},
                                  [&](double) { return ++asked < 2; }));
        QCOMPARE(asked, 2);

        // Cancelled as it counts: the rules are as they were, the snapshot too.
        QSignalSpy cancelled(window.categoryRules(), &CategoryRulesControl::cancelled);
        bool clicked = false;
        connect(window.categoryRules(), &CategoryRulesControl::progress, &window, [&] {
            if (!clicked) {
                clicked = true;
                window.categoryRules()->cancel();
            }
        });
        window.categoryRules()->apply({});
        QVERIFY(cancelled.count() == 1 || cancelled.wait(20000));
        QVERIFY(!window.categoryRules()->applying());
        QCOMPARE(window.categoryRules()->rules().size(), size_t(1));
        QCOMPARE(window.documents().back().result.memory.category.front(),
                 uint8_t(MemoryCategory::Inputs));
        QVERIFY(statusSaying(window, "Category rules not applied").contains("cancelled"));
    }

    // A rule edited into the settings by hand that the dialog would refuse
    // is left out when they are read: the others still apply.
    void aBadRuleInTheSettingsIsLeftOut() {
        {
            QSettings settings;
            settings.beginWriteArray("memory/categoryRules", 3);
            const char* rows[][3] = {{"file", "kv_cache[", "inputs"},
                                     {"name", "grow_cache", "no_such_category"},
                                     {"name", "grow_cache", "temporaries"}};
            for (int i = 0; i < 3; ++i) {
                settings.setArrayIndex(i);
                settings.setValue("target", rows[i][0]);
                settings.setValue("pattern", rows[i][1]);
                settings.setValue("category", rows[i][2]);
            }
            settings.endArray();
        }
        MainWindow window;
        const std::vector<CategoryRule>& rules = window.categoryRules()->rules();
        QCOMPARE(rules.size(), size_t(1));
        QCOMPARE(rules[0].category, std::string("temporaries"));
        const QString path = dir_.filePath("hand-edited.pickle");
        QVERIFY(writeSnapshotPickle(path, kSegmentTrace, true).isEmpty());
        QVERIFY(window.openRunFile(path));
        QCOMPARE(categoriesOf(*window.memoryView(), 1'500'000),
                 QSet<int>{int(MemoryCategory::Temporaries)});
        applyRules(window, {});  // the next tests start with none
    }

    // Compare memory by step: two of our runs aligned at the start of step 1
    // put both runs' step-1 allocations at the same time; at their first
    // event, the later run's are 200 µs further on. A recording without
    // steps (a snapshot's trace) offers no step alignment.
    // The categories are filled in one image; the reference is what they
    // replaced: each area a step polygon filled down to zero by Qt, the
    // topmost first and the lower one over it.
    void categoryFillsMatchEachAreaFilledToZero() {
        auto stacked = pixelPlot(100, 100);
        auto* stack = new CategoryStack(stacked->xAxis, stacked->yAxis);
        std::vector<QCPGraph*> graphs;
        for (const auto& [values, fill] :
             {std::pair{kStackLower, kLowerFill}, std::pair{kStackUpper, kUpperFill}}) {
            auto* graph = new CategoryGraph(stacked->xAxis, stacked->yAxis);
            graph->setLineStyle(QCPGraph::lsStepLeft);
            graph->setPen(Qt::NoPen);
            graph->setBrush(fill);
            graph->setData(kStackKeys, values, true);
            graphs.push_back(graph);
        }
        stack->setGraphs(graphs);
        const QImage ours = drawnFills(*stacked);

        auto reference = pixelPlot(100, 100);
        for (const auto& [values, fill] :
             {std::pair{kStackUpper, kUpperFill}, std::pair{kStackLower, kLowerFill}}) {
            QCPGraph* graph = reference->addGraph();
            graph->setLineStyle(QCPGraph::lsStepLeft);
            graph->setPen(Qt::NoPen);
            graph->setBrush(fill);
            graph->setAntialiasedFill(false);
            graph->setData(kStackKeys, values, true);
        }
        const QImage theirs = drawnFills(*reference);

        // By hand: QCustomPlot puts value 0 on the last row's centre line
        // (its axis rect's bottom()), so value v fills rows [99 - v, 99).
        auto at = [&](int x, int y) { return QColor(ours.pixel(x, y)); };
        QCOMPARE(at(10, 98), kLowerFill);  // lower: 10 over [0, 20)
        QCOMPARE(at(10, 89), kLowerFill);
        QCOMPARE(at(10, 88), kUpperFill);  // upper: 25
        QCOMPARE(at(10, 74), kUpperFill);
        QCOMPARE(at(10, 73), QColor(Qt::white));
        QCOMPARE(at(10, 99), QColor(Qt::white));
        QCOMPARE(at(59, 94), kLowerFill);  // [40, 60): 5 and 20
        QCOMPARE(at(59, 79), kUpperFill);
        QCOMPARE(at(59, 78), QColor(Qt::white));
        QCOMPARE(at(60, 98), QColor(Qt::white));  // the last point starts nothing
        // The spike narrower than a pixel still shows, in the column it lies in.
        QCOMPARE(at(30, 19), kUpperFill);
        QCOMPARE(at(30, 18), QColor(Qt::white));
        QCOMPARE(at(31, 49), kUpperFill);
        QCOMPARE(at(31, 48), QColor(Qt::white));

        int differing = 0;
        for (int y = 0; y < 100; ++y) {
            for (int x = 0; x < 100; ++x) {
                if (ours.pixel(x, y) != theirs.pixel(x, y)) {
                    QVERIFY2(x == 30 && y >= 19 && y < 49,
                             qPrintable(QString("(%1, %2) differs from Qt's fill").arg(x).arg(y)));
                    ++differing;
                }
            }
        }
        QCOMPARE(differing, 30);  // the spike's column alone, which Qt's fill missed

        // PDF export draws a polygon a category: the same pixels.
        QCOMPARE(drawnFills(*stacked, /*vector=*/true), ours);
        // Hidden, a category is not filled, and the one above fills down to zero.
        graphs[0]->setVisible(false);
        const QImage upperOnly = drawnFills(*stacked);
        QCOMPARE(QColor(upperOnly.pixel(10, 98)), kUpperFill);
        // Values no axis can place (a hostile file's sums) fill to the edge or not at all.
        graphs[1]->setData({0, 10, 20, 30}, {1e300, std::nan(""), -1e300, 5}, true);
        const QImage extreme = drawnFills(*stacked);
        QCOMPARE(QColor(extreme.pixel(5, 0)), kUpperFill);
        QCOMPARE(QColor(extreme.pixel(15, 98)), QColor(Qt::white));
        QCOMPARE(QColor(extreme.pixel(25, 98)), QColor(Qt::white));
    }

    // Phases tint the chart's height in one image: a column each takes the
    // last tint over its centre, a tint narrower than a pixel keeps one
    // column, and twice the pixels at twice the scale.
    void phaseTintsCoverTheirColumnsOnce() {
        auto plot = pixelPlot(100, 40);
        auto* tints = new TimeTintBands(plot->xAxis, plot->yAxis);
        const QColor blue(0, 0, 255, 51);
        const QColor red(255, 0, 0, 51);
        // Keys are ms, ranges µs: column k is [1000 k, 1000 (k + 1)) µs.
        tints->setRanges({{30000, 30200, red},  // 0.2 px
                          {0, 10000, blue},     // given out of order
                          {10000, 20000, red}});
        auto blended = [](const QColor& tint) {  // over white, as Qt blends
            const double a = tint.alphaF();
            return QColor(qRound(tint.red() * a + 255 * (1 - a)),
                          qRound(tint.green() * a + 255 * (1 - a)),
                          qRound(tint.blue() * a + 255 * (1 - a)));
        };
        const QImage image = drawnFills(*plot);
        auto near = [](QColor a, QColor b) {
            return std::abs(a.red() - b.red()) <= 1 && std::abs(a.green() - b.green()) <= 1 &&
                   std::abs(a.blue() - b.blue()) <= 1;
        };
        // Every row but the last, which QCustomPlot clips from what it plots.
        for (int y : {0, 20, 38}) {
            QVERIFY(near(QColor(image.pixel(0, y)), blended(blue)));
            QVERIFY(near(QColor(image.pixel(9, y)), blended(blue)));
            QVERIFY(near(QColor(image.pixel(10, y)), blended(red)));
            QVERIFY(near(QColor(image.pixel(19, y)), blended(red)));
            QCOMPARE(QColor(image.pixel(20, y)), QColor(Qt::white));
            QVERIFY(near(QColor(image.pixel(30, y)), blended(red)));
            QCOMPARE(QColor(image.pixel(31, y)), QColor(Qt::white));
        }
        const QImage twice = plot->toPixmap(100, 40, 2.0).toImage();
        QCOMPARE(twice.width(), 200);
        QVERIFY(near(QColor(twice.pixel(39, 50)), blended(red)));  // column 19, twice
        QCOMPARE(QColor(twice.pixel(40, 50)), QColor(Qt::white));
        // PDF export: a rectangle a tint, the same picture.
        QCOMPARE(drawnFills(*plot, /*vector=*/true), image);
    }

    void ourRunsAlignByStep() {
        RunDocument a;
        a.id = 11;
        a.result = handMadeRun();
        RunDocument b;
        b.id = 12;
        b.result = laterRun();
        MemoryCompareView view;
        view.showRuns({&a, &b}, {"A run", "B run"});
        QVERIFY(view.stepAlignmentOffered());
        QCOMPARE(view.alignment(), MemoryCompareView::Align::FirstEvent);
        QCOMPARE(view.alignStep(), 1);  // offered at step 1 first: step 0 is often a warm-up
        // E (1000 B at 60 µs in A) makes A, D and E 3100 B alive, a
        // total each curve holds only from then to 70 µs (handMadeRun's table).
        const double eBytes = 3100.0 / kMiB;
        const double aFirst = firstKeyAt(view.plot()->graph(0), eBytes);
        const double bFirst = firstKeyAt(view.plot()->graph(1), eBytes);
        QCOMPARE(aFirst, (60.0 - 0.0) / 1e3);
        QCOMPARE(bFirst, (1260.0 - 1000.0) / 1e3);
        view.setAlignment(MemoryCompareView::Align::StepStart, 1);
        QCOMPARE(view.alignStep(), 1);
        const double aStep = firstKeyAt(view.plot()->graph(0), eBytes);
        const double bStep = firstKeyAt(view.plot()->graph(1), eBytes);
        QCOMPARE(aStep, (60.0 - 55.0) / 1e3);  // step 1 starts at 55 µs in A
        QCOMPARE(bStep, aStep);                // and at 1255 µs in B
        QVERIFY2(view.caption().contains("Times from the start of step 1"),
                 qPrintable(view.caption()));
        QVERIFY(view.plot()->xAxis->label().contains("step 1"));
        // Step 0 starts at 5 µs in A and 1005 µs in B.
        view.setAlignment(MemoryCompareView::Align::StepStart, 0);
        QCOMPARE(firstKeyAt(view.plot()->graph(1), eBytes), (1260.0 - 1005.0) / 1e3);

        RunDocument snapshotLike;
        snapshotLike.id = 13;
        snapshotLike.result = handMadeRun();
        snapshotLike.result.memory.phases.clear();
        view.showRuns({&a, &snapshotLike}, {"A run", "snapshot"});
        QVERIFY(!view.stepAlignmentOffered());
        QCOMPARE(view.alignment(), MemoryCompareView::Align::FirstEvent);
        QVERIFY(view.caption().contains("each one's first event"));
    }
};

QTEST_MAIN(TestMemoryView)
#include "tst_memory_view.moc"
