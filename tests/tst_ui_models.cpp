// The models of ui/models on their own, linked without Qt Widgets (as
// hotspot's tests/modeltests): the step table under QAbstractItemModelTester,
// the run labels, the sweep chart's pivot, the memory index and what kind of
// recording a document is.
#include <QtTest/QtTest>

#include <QAbstractItemModelTester>
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <map>
#include <random>
#include <set>
#include <tuple>

#include "config/checkpoint_strategy.h"
#include "config/config_field.h"
#include "engines/runner.h"
#include "interop/memory_snapshot.h"
#include "models/file_filters.h"
#include "models/memory_index.h"
#include "models/memory_run_data.h"
#include "models/missing_records.h"
#include "models/run_document.h"
#include "models/run_label.h"
#include "models/snapshot_document.h"
#include "models/snapshot_recording.h"
#include "models/step_table_model.h"
#include "models/sweep_chart_data.h"
#include "results/statistics.h"

using namespace stepscope;
using namespace stepscope::ui;

namespace {

RunConfig pivotConfig(int warmup, int steps) {
    RunConfig config;
    config.model = *findPreset("nano");
    config.model.vocabSize = 97;
    config.contextLength = 8;
    config.batchSize = 1;
    config.warmupSteps = warmup;
    config.measuredSteps = steps;
    return config;
}

RunConfig labelConfig() {
    RunConfig config = pivotConfig(1, 3);
    config.contextLength = 16;
    config.batchSize = 2;
    return config;
}

// A finished run with these step times (the first `warmup` of them warm-up).
RunResult madeRun(RunConfig config, const std::vector<double>& stepMs) {
    RunResult run;
    run.config = std::move(config);
    std::vector<double> measured;
    for (size_t i = 0; i < stepMs.size(); ++i) {
        StepRecord step;
        step.index = int(i);
        step.warmup = int(i) < run.config.warmupSteps;
        step.totalMs = stepMs[i];
        run.steps.push_back(step);
        if (!step.warmup) {
            measured.push_back(stepMs[i]);
        }
    }
    run.summary.total = summarize(measured);
    return run;
}

// Allocations and frees in random order, at most 3,000 alive.
MemoryTrace randomTrace(int events) {
    MemoryTrace trace;
    trace.device = "cpu";
    std::mt19937 random(7);
    std::vector<std::pair<uint64_t, int64_t>> live;
    uint64_t next = 1;
    for (int i = 0; i < events; ++i) {
        const bool free = !live.empty() && (random() % 2 == 0 || live.size() > 3000);
        trace.timeUs.push_back(double(i));
        if (free) {
            const size_t k = random() % live.size();
            trace.address.push_back(live[k].first);
            trace.bytes.push_back(-live[k].second);
            live.erase(live.begin() + long(k));
        } else {
            const int64_t bytes = 1 + int64_t(random() % 5000);
            trace.address.push_back(next);
            trace.bytes.push_back(bytes);
            live.emplace_back(next++, bytes);
        }
        trace.category.push_back(uint8_t(random() % kMemoryCategories));
        trace.phase.push_back(1);
        trace.step.push_back(0);
        trace.path.push_back(-1);
    }
    return trace;
}

}  // namespace

class TestUiModels final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void stepTableModelIsAWellBehavedModel() {
        StepTableModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        std::vector<StepRecord> steps(3);
        for (int i = 0; i < 3; ++i) {
            steps[i].index = i;
            steps[i].totalMs = 10 + i;
        }
        model.setSteps(1, steps);
        QCOMPARE(model.rowCount(), 3);
        steps.resize(5);
        steps[3].index = 3;
        steps[4].index = 4;
        model.setSteps(1, steps);  // a live run grows
        QCOMPARE(model.rowCount(), 5);
        // Another run with the same step indices replaces every row.
        std::vector<StepRecord> other = steps;
        for (auto& step : other) {
            step.totalMs = 900 + step.index;
        }
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setSteps(2, other);
        QCOMPARE(reset.size(), 1);
        QCOMPARE(model.index(0, 2).data().toString(), QString("900.000"));
        model.setSteps(-1, {});
        QCOMPARE(model.rowCount(), 0);
        // A distributed run's steps wait for communication: a column more,
        // the others in their places.
        QCOMPARE(model.columnCount(), 7);
        other[1].communicationWaitMs = 2.5;
        model.setSteps(3, other);
        QCOMPARE(model.columnCount(), 8);
        QCOMPARE(model.headerData(7, Qt::Horizontal, Qt::DisplayRole).toString(),
                 QString("comm wait ms"));
        QCOMPARE(model.index(1, 7).data().toString(), QString("2.500"));
        QCOMPARE(model.index(1, 2).data().toString(), QString("901.000"));
    }

    // Only what differs, field by field.
    void labelsNameWhatDiffers() {
        RunConfig base = labelConfig();
        RunConfig bigger = base;
        bigger.batchSize = 8;
        RunConfig half = base;
        half.precision = Precision::Bf16;
        QCOMPARE(differingFields({base, bigger, half}),
                 QStringList({"batch 2 · fp32", "batch 8 · fp32", "batch 2 · bf16"}));
        QCOMPARE(differingFields({base, base}), QStringList({"", ""}));
        // What they share, for a chart's second line: neither batch nor precision.
        const QString shared = sharedFields({base, bigger, half}).join(" · ");
        QVERIFY2(shared.contains("ctx 16") && !shared.contains("batch") && !shared.contains("fp32"),
                 qPrintable(shared));
        QVERIFY(configSummary(base).contains("attention naive"));
        // A memory lever in use is in the label; one not in use only beside one that is.
        RunConfig nested = base;
        nested.activationCheckpoint = *parseCheckpointStrategy("nested");
        RunConfig chunked = base;
        chunked.loss = LossKind::Chunked;
        chunked.lossChunkTokens = 256;
        QCOMPARE(differingFields({base, nested, chunked}),
                 QStringList({"checkpoint off · loss full", "checkpoint nested · loss full",
                              "checkpoint off · loss chunked 256"}));
        QVERIFY(configSummary(base).contains("checkpoint off · loss full"));
        QVERIFY(configSummary(chunked).contains("loss chunked 256"));
        QVERIFY(!listLabels({base})[0].contains("checkpoint"));
        QVERIFY(listLabels({nested})[0].contains("checkpoint nested"));
        // Runs on ranks say how many and the strategy; the bucket tells two
        // bucketed runs apart; a one-process run says nothing of ranks.
        RunConfig overlap = base;
        overlap.engine = Engine::PyTorch;
        overlap.ranks = 2;
        overlap.parallel = "overlap";
        RunConfig bucketed = overlap;
        bucketed.parallel = "bucketed";
        RunConfig small = bucketed;
        small.bucketMb = 0.5;
        QCOMPARE(differingFields({overlap, bucketed, small}),
                 QStringList({"2 ranks overlap · bucket 25 MB", "2 ranks bucketed · bucket 25 MB",
                              "2 ranks bucketed · bucket 0.5 MB"}));
        QVERIFY(listLabels({overlap})[0].contains("2 ranks overlap"));
        QVERIFY(!configSummary(base).contains("rank"));
        QVERIFY(!configSummary(base).contains("bucket"));
    }

    // Issue 31: a list of varied runs puts many differing fields in every
    // label; runs alike but for one field start with that field.
    void listLabelsStartWithWhatTellsARunFromItsLikes() {
        RunConfig base = labelConfig();
        RunConfig other = base;
        other.batchSize = 8;
        other.attention = "sdpa";
        other.contextLength = 64;
        other.seed = 3;
        RunConfig warm = base;
        warm.warmupSteps = base.warmupSteps + 2;
        const QStringList labels = listLabels({other, base, warm});
        QVERIFY2(labels[1].startsWith(QString("warm-up %1 · ").arg(base.warmupSteps)),
                 qPrintable(labels[1]));
        QVERIFY2(labels[2].startsWith(QString("warm-up %1 · ").arg(warm.warmupSteps)),
                 qPrintable(labels[2]));
        QVERIFY2(labels[1].contains("batch 2") && labels[1].contains("attention naive"),
                 qPrintable(labels[1]));  // the other differing fields follow
        const QList<LabelParts> parts = listLabelParts({other, base, warm});
        QCOMPARE(parts[2].distinct, QString("warm-up %1").arg(warm.warmupSteps));
        QCOMPARE(parts[2].joined(), labels[2]);
        QCOMPARE(parts[0].distinct, QString());  // nothing alike but for one field
        // A comparison keeps one order of fields for all its runs.
        QVERIFY(!differingFields({other, base, warm})[1].startsWith("warm-up"));
    }

    void pivotPutsAnyFieldOnXAndTheRestInLines() {
        std::vector<RunResult> runs;
        double ms = 10;
        for (const char* attention : {"naive", "sdpa"}) {
            for (const char* batch : {"1", "2"}) {
                RunConfig config = pivotConfig(1, 2);
                setConfigField(config, "attention", attention);
                setConfigField(config, "batch", batch);
                runs.push_back(madeRun(config, {99, ms, ms + 2}));  // mean ms + 1
                ms += 10;
            }
        }
        RunConfig failedConfig = pivotConfig(1, 2);
        setConfigField(failedConfig, "batch", "4");
        RunResult failed = madeRun(failedConfig, {});
        failed.status = RunStatus::Failed;
        runs.push_back(failed);
        std::vector<const RunResult*> points;
        for (const auto& run : runs) {
            points.push_back(&run);
        }
        QCOMPARE(varyingFields({runs[0].config, runs[3].config}),
                 (std::vector<std::string>{"batch", "attention"}));

        // x = batch: a line per backend, the failed point left out.
        SweepChartData chart = sweepChartData(points, "batch", {});
        QVERIFY(chart.numericX);
        QVERIFY(!chart.logX);  // 1 … 2 spans less than 4×
        QCOMPARE(int(chart.series.size()), 2);
        QCOMPARE(chart.series[0].name, std::string("naive"));
        QCOMPARE(chart.series[0].points,
                 (std::vector<std::pair<double, double>>{{1, 11}, {2, 21}}));
        QCOMPARE(chart.series[1].name, std::string("sdpa"));
        QCOMPARE(chart.series[1].points,
                 (std::vector<std::pair<double, double>>{{1, 31}, {2, 41}}));

        // Held at sdpa: one line.
        chart = sweepChartData(points, "batch", {{"attention", "sdpa"}});
        QCOMPARE(int(chart.series.size()), 1);
        QCOMPARE(chart.series[0].name, std::string("all points"));
        QCOMPARE(chart.series[0].points,
                 (std::vector<std::pair<double, double>>{{1, 31}, {2, 41}}));

        // x = attention: categories in the sweep's order, a line per batch.
        chart = sweepChartData(points, "attention", {});
        QVERIFY(!chart.numericX);
        QCOMPARE(chart.categories, (std::vector<std::string>{"naive", "sdpa"}));
        QCOMPARE(int(chart.series.size()), 2);  // batch 1 and 2: the failed batch 4 has no line
        QCOMPARE(chart.series[0].name, std::string("batch 1"));
        QCOMPARE(chart.series[0].points,
                 (std::vector<std::pair<double, double>>{{0, 11}, {1, 31}}));

        // x = the measured step: a line per point, warm-up left out.
        chart = sweepChartData(points, kMeasuredStepAxis, {{"attention", "naive"}});
        QCOMPARE(int(chart.series.size()), 2);
        QCOMPARE(chart.series[1].name, std::string("batch 2"));
        QCOMPARE(chart.series[1].points,
                 (std::vector<std::pair<double, double>>{{1, 20}, {2, 22}}));
    }

    void pivotDrawsContextOnALogAxis() {
        std::vector<RunResult> runs;
        for (int64_t ctx : {8, 16, 64}) {
            RunConfig config = pivotConfig(0, 1);
            config.contextLength = ctx;
            runs.push_back(madeRun(config, {double(ctx)}));
        }
        const SweepChartData chart = sweepChartData({&runs[0], &runs[1], &runs[2]}, "ctx", {});
        QVERIFY(chart.numericX && chart.logX);
        QCOMPARE(chart.series[0].points,
                 (std::vector<std::pair<double, double>>{{8, 8}, {16, 16}, {64, 64}}));
    }

    void indexAnswersAsALinearScanDoes() {
        // A longer random trace: the checkpointed index against a plain scan.
        const MemoryTrace trace = randomTrace(20000);
        const MemoryIndex index(trace);
        const std::vector<MemoryAllocation> all = memoryAllocations(trace);
        QCOMPARE(index.size(), all.size());
        for (const double t : {0.0, 999.5, 4096.0, 12345.0, 19999.0}) {
            std::vector<uint32_t> expected;
            for (size_t a = 0; a < all.size(); ++a) {
                if (all[a].startUs <= t && (all[a].endUs < 0 || all[a].endUs > t)) {
                    expected.push_back(uint32_t(a));
                }
            }
            QCOMPARE(index.aliveAt(t), expected);
        }
    }

    // A long-lived allocation's outline for a window: sampled from the
    // blocks' sums where a pixel spans many events, walked where it does
    // not; either way its bottom at each vertex is the stack's there.
    void aBandForAWindowIsTheStackWhereItHasVertices() {
        MemoryTrace trace;
        trace.device = "cpu";
        std::mt19937 random(11);
        std::vector<std::tuple<uint64_t, int64_t, uint8_t>> live;  // address, bytes, category
        const auto push = [&](uint64_t address, int64_t bytes, uint8_t category) {
            trace.timeUs.push_back(double(trace.timeUs.size()));
            trace.address.push_back(address);
            trace.bytes.push_back(bytes);
            trace.category.push_back(category);
            trace.phase.push_back(1);
            trace.step.push_back(0);
            trace.path.push_back(-1);
        };
        const auto activations = uint8_t(MemoryCategory::Activations);
        uint64_t next = 1;
        for (int i = 0; i < 200000; ++i) {
            if (i == 500) {  // the one outlined: never freed, above older activations
                push(1u << 30, 777, activations);
                continue;
            }
            if (!live.empty() && (random() % 2 == 0 || live.size() > 3000)) {
                const size_t k = random() % live.size();
                const auto [address, bytes, category] = live[k];
                push(address, -bytes, category);
                live.erase(live.begin() + long(k));
            } else {
                const int64_t bytes = 1 + int64_t(random() % 5000);
                const auto category = uint8_t(random() % kMemoryCategories);
                push(next, bytes, category);
                live.emplace_back(next++, bytes, category);
            }
        }
        const MemoryIndex index(trace);
        size_t self = 0;
        while (index.allocations()[self].address != 1u << 30) {
            ++self;
        }
        const auto stackBottom = [&](double timeUs) {
            for (const MemoryIndex::Placed& placed :
                 index.stackAt(timeUs, StackOrder::ByCategory, 0)) {
                if (placed.allocation == self) {
                    return placed.bottom;
                }
            }
            return int64_t(-1);
        };
        const auto whole = index.bandOf(self, StackOrder::ByCategory, 0);
        QVERIFY(whole.size() > 50000);  // a vertex wherever what is below it changes
        // The whole run on 300 pixels: a block is a fraction of one, so sampled.
        const auto wide =
            index.bandOf(self, StackOrder::ByCategory, 0, 0, trace.timeUs.back(), 300);
        QVERIFY2(wide.size() <= 200000 / 256 + 2, qPrintable(QString::number(wide.size())));
        QVERIFY(wide.size() > 700);
        QCOMPARE(wide.front().timeUs, 500.0);
        QVERIFY(wide.back().timeUs > 199000);
        for (size_t v = 0; v < wide.size(); v += 7) {
            QCOMPARE(wide[v].bottom, stackBottom(wide[v].timeUs));
        }
        // 2,000 events on 300 pixels: walked, the same vertices as the whole band's.
        const auto narrow = index.bandOf(self, StackOrder::ByCategory, 0, 100000.5, 102000.5, 300);
        QCOMPARE(narrow.front().timeUs, 100000.0);
        QCOMPARE(narrow.front().bottom, stackBottom(100000.5));
        const auto first = std::find_if(whole.begin(), whole.end(),
                                        [](const BandVertex& v) { return v.timeUs > 100000; });
        const auto last = std::find_if(first, whole.end(),  // up to the first event after it
                                       [](const BandVertex& v) { return v.timeUs > 102001; });
        QCOMPARE(long(narrow.size()) - 1, long(last - first));
        for (size_t v = 1; v < narrow.size(); ++v) {
            QCOMPARE(narrow[v].timeUs, first[long(v) - 1].timeUs);
            QCOMPARE(narrow[v].bottom, first[long(v) - 1].bottom);
        }
    }

    // Sites against a grouping done here from the core's own pairing: each
    // (path, op, category, phase) once, its sizes, steps, largest, total and
    // mean lifetime, over a trace whose allocations come back to the same
    // places in many steps.
    void sitesAreAllocationsGroupedByWhereTheyWereMade() {
        MemoryTrace trace = randomTrace(20000);
        trace.paths = {"layers.0.attn", "layers.1.attn", "lm_head", "aten::mm", "aten::add"};
        std::mt19937 random(11);
        trace.op.resize(trace.size());
        for (size_t i = 0; i < trace.size(); ++i) {
            trace.category[i] = uint8_t(random() % 3);
            trace.phase[i] = uint8_t(1 + random() % 2);
            trace.step[i] = int32_t(i / 1000) - 1;      // -1: set-up
            trace.path[i] = int32_t(random() % 4) - 1;  // -1: outside modules
            trace.op[i] = random() % 3 == 0 ? -1 : 3 + int32_t(random() % 2);
        }
        using Key = std::tuple<std::string, std::string, int, int>;
        struct Expected {
            int64_t largest = 0;
            int64_t total = 0;
            std::set<int64_t> sizes;
            std::set<int> steps;
            size_t count = 0;
            double lifetimeUs = 0;
        };
        std::map<Key, Expected> expected;
        for (const MemoryAllocation& a : memoryAllocations(trace)) {
            Expected& site =
                expected[{trace.name(a.path), trace.name(a.op), int(a.category), a.phase}];
            site.largest = std::max(site.largest, a.bytes);
            site.total += a.bytes;
            site.sizes.insert(a.bytes);
            site.steps.insert(a.step);
            ++site.count;
            site.lifetimeUs += (a.endUs >= 0 ? a.endUs : trace.timeUs.back()) - a.startUs;
        }
        const MemoryIndex index(trace);
        const std::vector<AllocationSite> sites =
            groupSites(index, index.aliveBetween(index.startUs(), index.endUs()));
        QCOMPARE(sites.size(), expected.size());
        QVERIFY(sites.size() > 50);
        for (size_t s = 0; s < sites.size(); ++s) {
            const AllocationSite& site = sites[s];
            const auto found = expected.find({site.path, site.op, int(site.category), site.phase});
            QVERIFY(found != expected.end());
            const Expected& want = found->second;
            QCOMPARE(site.largest, want.largest);
            QCOMPARE(site.totalBytes, want.total);
            QCOMPARE(site.sizes, want.sizes.size());
            QCOMPARE(site.steps, std::vector<int>(want.steps.begin(), want.steps.end()));
            QCOMPARE(site.allocations.size(), want.count);
            QCOMPARE(site.meanLifetimeUs, want.lifetimeUs / double(want.count));
            if (s > 0) {  // largest first, then by total
                const AllocationSite& before = sites[s - 1];
                QVERIFY(before.largest > site.largest ||
                        (before.largest == site.largest && before.totalBytes >= site.totalBytes));
            }
        }
    }

    // What the memory views draw, prepared with a run where its file is read
    // (off the UI thread), is what they work out themselves, and it follows
    // the run when the run moves into its document.
    void memoryRunDataIsWhatTheViewsWorkOut() {
        RunResult run;
        run.memory = randomTrace(5000);
        const std::shared_ptr<MemoryRunData> data = prepareMemoryRunData(run);
        QVERIFY(data);
        QVERIFY(data->isFor(run));
        const MemoryIndex index(run.memory);
        QCOMPARE(data->index.size(), index.size());
        QCOMPARE(data->summary.peakBytes, summarizeMemory(run.memory, 0).peakBytes);
        const std::vector<AllocationSite> sites =
            groupSites(index, index.aliveBetween(index.startUs(), index.endUs()));
        QCOMPARE(data->sites.size(), sites.size());
        for (size_t s = 0; s < sites.size(); ++s) {
            QCOMPARE(data->sites[s].allocations, sites[s].allocations);
            QCOMPARE(data->sites[s].totalBytes, sites[s].totalBytes);
        }
        const SavedBlocks saved = savedBlocks(run, index);
        QCOMPARE(data->saved.error, saved.error);
        QCOMPARE(data->saved.saved.blocks.size(), saved.saved.blocks.size());
        QCOMPARE(data->saved.members, saved.members);

        const std::vector<uint32_t> alive = index.aliveAt(2500.5);
        QVERIFY(!alive.empty());
        const RunResult moved = std::move(run);
        QVERIFY(!data->isFor(moved));
        data->follow(moved);
        QVERIFY(data->isFor(moved));
        QCOMPARE(data->index.aliveAt(2500.5), alive);
        const RunResult untraced;
        QVERIFY(!prepareMemoryRunData(untraced));  // no trace, nothing to prepare
    }

    // What a document can show follows from its kind, which its maker sets:
    // a run of ours has a configuration to show, estimate and compare by,
    // even a hand-made one whose config names no model; a run file holding
    // what PyTorch recorded has none, nor a recording of its own.
    void aDocumentCanShowWhatItsKindHolds() {
        RunDocument ours;
        ours.result = madeRun(labelConfig(), {10, 11, 12});
        QVERIFY(ours.canShowConfig() && ours.canEstimate() && ours.comparesByConfig());
        QVERIFY(ours.hasSteps() && !ours.hasMemory());
        QVERIFY(!ours.snapshot() && !ours.sharedSnapshot() && !ours.trace());
        QVERIFY(ours.ownTitle().isEmpty() && ours.recordingFile().isEmpty());
        ours.result.config.model = ModelDims{};  // no width: still a run of ours
        QVERIFY(ours.canShowConfig() && ours.comparesByConfig());

        RunDocument foreign = ours;
        foreign.kind = ForeignRun{};
        foreign.result.origin = kOriginProfilerTrace;
        foreign.path = "/runs/saved-trace.json";
        QVERIFY(!foreign.canShowConfig() && !foreign.canEstimate() && !foreign.comparesByConfig());
        QVERIFY(!foreign.snapshot() && !foreign.trace());
        // Named by what recorded it, never by the config it does not have.
        QCOMPARE(foreign.ownTitle(), QString("saved-trace.json · PyTorch profiler trace"));

        // A run file's kind is what the file says recorded it, and nothing else.
        RunResult saved = ours.result;
        QVERIFY(std::holds_alternative<OurRun>(kindOfRunFile(saved)));
        for (const char* origin : {kOriginMemorySnapshot, kOriginProfilerTrace, kOriginPyTorch}) {
            saved.origin = origin;
            QVERIFY2(std::holds_alternative<ForeignRun>(kindOfRunFile(saved)), origin);
        }
    }

    // One device of a snapshot: its recording, kept whole and shared; a
    // title of its own; the file it came from, which is not its path.
    void aSnapshotDocumentIsOneDeviceOfItsRecording() {
        QTemporaryDir dir;
        const QString path = dir.filePath("two.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"segments": [], "device_traces": [[
            {"action": "alloc", "addr": 256, "size": 4096, "stream": 0, "time_us": 10,
             "frames": [{"filename": "model.py", "line": 20, "name": "forward"}]}], [
            {"action": "alloc", "addr": 512, "size": 8192, "stream": 0, "time_us": 10,
             "frames": []},
            {"action": "free_completed", "addr": 512, "size": 8192, "stream": 0,
             "time_us": 30, "frames": []}]]})");
        file.close();
        const auto snapshot =
            std::make_shared<const MemorySnapshot>(readMemorySnapshot(path.toStdString()));
        const std::shared_ptr<RunDocument> device1 = snapshotDocument(snapshot, path, 1, {});
        QVERIFY(device1->snapshot());
        QCOMPARE(device1->snapshot()->device, 1);
        QCOMPARE(device1->snapshot()->devices.size(), size_t(2));
        QCOMPARE(device1->sharedSnapshot().get(), device1->snapshot());
        QCOMPARE(device1->sharedSnapshot()->snapshot.get(), snapshot.get());
        QCOMPARE(device1->ownTitle(), QString("two.json · PyTorch memory snapshot · device 1"));
        QCOMPARE(device1->recordingFile(), path);
        QVERIFY(device1->path.isEmpty());  // Save asks where: never over the snapshot
        QVERIFY(device1->hasMemory() && !device1->hasSteps());
        QCOMPARE(device1->result.memory.size(), size_t(2));
        QVERIFY(!device1->canShowConfig() && !device1->canEstimate());
        QVERIFY(!device1->comparesByConfig() && !device1->trace());
        QVERIFY(device1->memoryData && device1->memoryData->isFor(device1->result));
    }

    // One rank of a profiler trace: the recording's ranks shared, this one
    // found among them; a rank the analyses lack shows none.
    void aTraceRankFindsItselfAmongItsRecordingsRanks() {
        std::vector<RankAnalysis> analyses(2);
        analyses[0].rank = 0;
        analyses[1].rank = 1;
        analyses[1].file = "rank1.json";
        const auto ranks = std::make_shared<const std::vector<RankAnalysis>>(analyses);
        RunDocument rank1;
        rank1.kind = TraceRank{ranks, 1};
        QVERIFY(rank1.trace());
        QCOMPARE(rank1.trace()->rankCount(), size_t(2));
        QVERIFY(rank1.trace()->shown());
        QCOMPARE(rank1.trace()->shown()->file, std::string("rank1.json"));
        QVERIFY(!rank1.canShowConfig() && !rank1.comparesByConfig() && !rank1.snapshot());
        QCOMPARE(rank1.ownTitle(), QString("rank1.json · PyTorch profiler trace · rank 1 of 2"));
        RunDocument missing;
        missing.kind = TraceRank{ranks, 7};
        QVERIFY(!missing.trace()->shown());
        missing.kind = TraceRank{};
        QCOMPARE(missing.trace()->rankCount(), size_t(0));
        QVERIFY(!missing.trace()->shown());
    }

    // Issue 40, item 4: a trace or a snapshot read "ctx 128 · train-step ·
    // fp32 · attention naive · cpu · steps 5", the defaults of a config it
    // does not have. Its title, summary and facts say what it is and holds
    // (source, file, rank, device, steps found) and no field of a config.
    void aRecordingOfPyTorchsCarriesNoInventedConfiguration() {
        std::vector<RankAnalysis> analyses(2);
        analyses[0].rank = 0;
        analyses[0].file = "/traces/host_0.pt.trace.json.gz";
        analyses[1].rank = 1;
        RunDocument rank0;
        rank0.kind = TraceRank{std::make_shared<const std::vector<RankAnalysis>>(analyses), 0};
        rank0.result.origin = kOriginProfilerTrace;
        rank0.result.environment.deviceName = "NVIDIA H200";
        rank0.result.steps.resize(5);
        rank0.result.kernels.resize(3);
        const RunConfig defaults;
        const QStringList invented = configFields(defaults);  // "ctx 128", "train-step", …
        QVERIFY(invented.contains("ctx 128") && invented.contains("steps 5"));
        QMap<QString, QString> facts;
        for (const auto& [name, value] : rank0.recordingFacts()) {
            facts[name] = value;
        }
        QCOMPARE(facts.value("Source"), QString("PyTorch profiler trace (torch.profiler)"));
        QCOMPARE(facts.value("File"), QString("host_0.pt.trace.json.gz"));
        QCOMPARE(facts.value("Rank"), QString("0 of 2 (a run per rank in the list)"));
        QCOMPARE(facts.value("Device"), QString("NVIDIA H200"));
        QCOMPARE(facts.value("Steps found"), QString("5 profiler steps"));
        QCOMPARE(facts.value("Holds"), QString("kernels"));
        const QString title = rank0.ownTitle();
        QCOMPARE(title, QString("host_0.pt.trace.json.gz · PyTorch profiler trace · rank 0 of 2"));
        for (const QString& field : invented) {
            for (const QString& said : {title, rank0.summary()}) {
                QVERIFY2(!said.contains(field), qPrintable(field + " in " + said));
            }
        }
        RunDocument saved;
        saved.kind = ForeignRun{};
        saved.result = rank0.result;
        saved.path = "/runs/rank0.json";
        QCOMPARE(saved.ownTitle(), QString("rank0.json · PyTorch profiler trace"));
        QVERIFY(saved.summary().contains("5 profiler steps"));
        QVERIFY(!saved.summary().contains("ctx"));
        // A run of ours is summed up by its config, as before.
        RunDocument ours;
        ours.result = madeRun(labelConfig(), {10, 11});
        QCOMPARE(ours.summary(), configSummary(ours.result.config));
        QVERIFY(ours.recordingFacts().isEmpty());
    }

    // Issue 40, item 5: an empty view's advice matches the run's state. A
    // run under way with “Trace operators” ticked gets its operators at the
    // end (not "tick it"); a finished run without it is told to tick it; a
    // recording of PyTorch's is told what it holds instead.
    void anEmptyViewSaysWhyForTheStateItIsIn() {
        RunDocument live;
        live.result.config = labelConfig();
        live.result.config.traceOps = true;
        live.live = true;
        const QString arriving = missingRecordsText(&live, Records::Operators);
        QVERIFY2(arriving.contains("arrive") && arriving.contains("when it ends"),
                 qPrintable(arriving));
        QVERIFY2(!arriving.contains("Tick"), qPrintable(arriving));
        QCOMPARE(missingRecordsNote(&live, Records::Operators),
                 QString("The operator and kernel records arrive when the run ends"));
        QVERIFY(missingRecordsText(&live, Records::Memory).contains("tick it for the next run"));

        RunDocument untraced;
        untraced.result.config = labelConfig();
        QVERIFY(
            missingRecordsText(&untraced, Records::Operators).contains("Tick “Trace operators”"));
        QVERIFY(missingRecordsText(&untraced, Records::Memory).contains("Tick “Trace memory”"));
        RunDocument cancelled = untraced;
        cancelled.result.config.traceMemory = true;
        cancelled.result.status = RunStatus::Cancelled;
        QCOMPARE(missingRecordsText(&cancelled, Records::Memory),
                 QString("“Trace memory” was on, but the run recorded no memory trace (it ended "
                         "cancelled)."));

        RunDocument trace;
        trace.kind = TraceRank{};
        const QString memory = missingRecordsText(&trace, Records::Memory);
        QVERIFY2(memory.contains("profiler trace") && !memory.contains("Tick"), qPrintable(memory));
        RunDocument snapshot;
        snapshot.kind = ForeignRun{};
        snapshot.result.origin = kOriginMemorySnapshot;
        QVERIFY(missingRecordsText(&snapshot, Records::Operators).contains("memory snapshot"));
        QCOMPARE(missingRecordsNote(&snapshot, Records::Steps), QString("A snapshot has no steps"));
        QCOMPARE(missingRecordsNote(nullptr, Records::Steps), QString("No run selected"));
    }

    // Issue 40, item 7: the Open dialog's filters come from core/files'
    // table: a filter per kind with the table's name and patterns, one for
    // all of them (snapshots' *.pickle, traces' *.pt.trace.json.gz, the
    // files that stand for a folder) first, all files last.
    void openDialogFiltersComeFromTheTableOfKinds() {
        const std::vector<FileKind> kinds = {FileKind::RunFile, FileKind::MemorySnapshot,
                                             FileKind::ProfilerTrace, FileKind::SweepFolder,
                                             FileKind::TraceFolder};
        const QStringList filters = openFileFilters(kinds);
        QVERIFY(filters.contains("Run file (*.json)"));
        QVERIFY(filters.contains("PyTorch memory snapshot (*.pickle *.pkl *.json)"));
        QVERIFY(filters.contains("PyTorch profiler trace (*.pt.trace.json.gz *.json.gz *.json)"));
        QCOMPARE(filters.back(), QString("All files (*)"));
        QVERIFY(filters.front().startsWith("Everything StepScope opens ("));
        const QString everything =
            filters.front().section('(', 1).chopped(1);  // the patterns between the brackets
        for (const char* name :
             {"x.pickle", "host_0.pt.trace.json.gz", "run.json", "sweep.csv", "attention.csv"}) {
            QVERIFY2(QDir::match(everything.split(' '), name), name);
        }
        QVERIFY(!QDir::match(everything.split(' '), "model.pt"));  // a run loads it, not the app
        for (const FileKindInfo& info : fileKinds()) {
            const bool asked = std::find(kinds.begin(), kinds.end(), info.kind) != kinds.end();
            const QString name = QString::fromUtf8(info.name.data(), qsizetype(info.name.size()));
            const bool offered = std::any_of(filters.begin(), filters.end(), [&](const QString& f) {
                return f.startsWith(name, Qt::CaseInsensitive);
            });
            QCOMPARE(offered, asked && !info.folder);
        }
        QCOMPARE(openFolderCaption(kinds),
                 QString("Open a sweep folder or folder of profiler traces"));
    }
};

QTEST_GUILESS_MAIN(TestUiModels)
#include "tst_ui_models.moc"
