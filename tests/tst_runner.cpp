// The runner: step counts, phases per mode, statistics against a naive
// recomputation, validation messages, the CPU pre-flight, cancellation.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

#include <ATen/Parallel.h>

#include "engines/environment.h"
#include "engines/runner.h"
#include "estimate/cost_model.h"
#include "estimate/memory_estimate.h"
#include "profile/trace_range.h"
#include "test_support.h"
#include "util/strings.h"

using namespace stepscope;

namespace {

class CancelAfterSteps final : public RunObserver {
public:
    CancelAfterSteps(std::atomic<bool>& flag, int steps) : flag_(flag), steps_(steps) {}
    void onStep(const StepRecord&) override {
        if (++seen_ == steps_) {
            flag_.store(true);
        }
    }
    int seen_ = 0;

private:
    std::atomic<bool>& flag_;
    int steps_;
};

class RecordingObserver final : public RunObserver {
public:
    void onProgress(const RunProgress& progress) override { phases.push_back(progress.phase); }
    void onStep(const StepRecord& step) override { steps.push_back(step.index); }
    std::vector<std::string> phases;
    std::vector<int> steps;
};

// Records trace ranges as "depth:name".
class RangeRecorder final : public RangeListener {
public:
    void onPush(const std::string& name) override {
        pushes << QString("%1:%2").arg(depth++).arg(QString::fromStdString(name));
    }
    void onPop() override { --depth; }
    QStringList pushes;
    int depth = 0;
};

QStringList fields(const std::vector<ConfigError>& errors) {
    QStringList out;
    for (const auto& error : errors) {
        out << QString::fromStdString(error.field);
    }
    return out;
}

// Runs `config` on a thread of its own, as the app runs each run.
RunResult runOnNewThread(const RunConfig& config) {
    RunResult result;
    std::thread([&] { result = runBenchmark(config, RunControl{}); }).join();
    return result;
}

}  // namespace

class TestRunner : public QObject {
    Q_OBJECT

    int freshThreads_ = 0;  // LibTorch's count in this process before any run

private Q_SLOTS:
    void initTestCase() { freshThreads_ = at::get_num_threads(); }

    void phasesPresentPerMode_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<bool>("backward");
        QTest::addColumn<bool>("optimizer");
        QTest::newRow("inference") << int(RunMode::Inference) << false << false;
        QTest::newRow("forward") << int(RunMode::Forward) << false << false;
        QTest::newRow("forward-backward") << int(RunMode::ForwardBackward) << true << false;
        QTest::newRow("train-step") << int(RunMode::TrainStep) << true << true;
    }

    void phasesPresentPerMode() {
        QFETCH(int, mode);
        QFETCH(bool, backward);
        QFETCH(bool, optimizer);
        RunConfig config = test::tinyCpuConfig();
        config.mode = RunMode(mode);
        config.warmupSteps = 2;
        config.measuredSteps = 3;
        RecordingObserver observer;
        RunControl control;
        control.observer = &observer;
        const RunResult result = runBenchmark(config, control);
        QCOMPARE(toString(result.status), std::string("ok"));
        QCOMPARE(int(result.steps.size()), 5);
        QCOMPARE(observer.steps, (std::vector<int>{0, 1, 2, 3, 4}));
        for (const auto& step : result.steps) {
            QCOMPARE(step.warmup, step.index < 2);
            QVERIFY(step.forwardMs.has_value() && *step.forwardMs > 0);
            QCOMPARE(step.backwardMs.has_value(), backward);
            QCOMPARE(step.optimizerMs.has_value(), optimizer);
            const double phases =
                *step.forwardMs + step.backwardMs.value_or(0) + step.optimizerMs.value_or(0);
            QVERIFY(phases <= step.totalMs * 1.0001);
            QVERIFY(step.loss.has_value() && std::isfinite(*step.loss));
        }
        QCOMPARE(result.summary.backward.has_value(), backward);
        QCOMPARE(result.summary.optimizer.has_value(), optimizer);
        QVERIFY(std::count(observer.phases.begin(), observer.phases.end(), "backward") ==
                (backward ? 5 : 0));
        QCOMPARE(result.parameterCount, parameterCount(config.model));
    }

    void statisticsAgreeWithStepRecords() {
        RunConfig config = test::tinyCpuConfig();
        config.warmupSteps = 1;
        config.measuredSteps = 6;
        const RunResult result = runBenchmark(config);
        std::vector<double> totals;
        for (const auto& step : result.steps) {
            if (!step.warmup) {
                totals.push_back(step.totalMs);
            }
        }
        QCOMPARE(int(totals.size()), 6);
        const double mean = std::accumulate(totals.begin(), totals.end(), 0.0) / 6;
        double squares = 0;
        for (double t : totals) {
            squares += (t - mean) * (t - mean);
        }
        std::vector<double> sorted = totals;
        std::sort(sorted.begin(), sorted.end());
        const Stats& s = result.summary.total;
        QCOMPARE(s.count, 6);
        QVERIFY(qFuzzyCompare(s.mean, mean));
        QVERIFY(qFuzzyCompare(s.std, std::sqrt(squares / 5)));
        QVERIFY(qFuzzyCompare(s.median, (sorted[2] + sorted[3]) / 2));
        QCOMPARE(s.min, sorted.front());
        QCOMPARE(s.max, sorted.back());
        QVERIFY(qFuzzyCompare(s.cv, s.std / s.mean));
        const double tokens = double(config.batchSize * config.contextLength);
        QVERIFY(qFuzzyCompare(result.summary.tokensPerSecond, tokens / (mean / 1000)));
        QVERIFY(qFuzzyCompare(result.summary.achievedFlopsPerSecond,
                              modelFlopsPerStep(config) / (mean / 1000)));
        QVERIFY(!result.summary.mfu.has_value());  // no known peak for a CPU
    }

    void stepStructureIsMarkedWithRanges() {
        RunConfig config = test::tinyCpuConfig();  // nano: 2 layers
        config.warmupSteps = 0;
        config.measuredSteps = 1;
        RangeRecorder recorder;
        {
            const RangeListenerScope scope(&recorder);
            QCOMPARE(toString(runBenchmark(config).status), std::string("ok"));
        }
        QCOMPARE(recorder.depth, 0);  // every push popped
        QStringList expected = {"0:step 0", "1:forward"};
        for (const QString layer : {"layers.0", "layers.1"}) {
            expected << "2:" + layer << "3:" + layer + ".attn"
                     << "4:attention q·kᵀ"
                     << "4:attention softmax"
                     << "4:attention ·v"
                     << "3:" + layer + ".ffn";
        }
        expected << "2:lm_head"
                 << "1:backward"
                 << "1:optimizer"
                 << "1:bookkeeping";
        QCOMPARE(recorder.pushes, expected);
    }

    void statisticsOfKnownSeries() {
        const Stats s = summarize({4, 1, 3, 2});
        QCOMPARE(s.mean, 2.5);
        QCOMPARE(s.median, 2.5);
        QVERIFY(qFuzzyCompare(s.std, std::sqrt(5.0 / 3.0)));
        QCOMPARE(summarize({7}).std, 0.0);
        QCOMPARE(summarize({}).count, 0);
    }

    void trainStepsLowerTheLossOnAFixedBatch() {
        RunConfig config = test::tinyCpuConfig();
        config.warmupSteps = 0;
        config.measuredSteps = 8;
        const RunResult result = runBenchmark(config);
        QVERIFY(*result.steps.back().loss < *result.steps.front().loss - 0.05);
        // The first loss is near ln(vocab) for a fresh model.
        QVERIFY(std::abs(*result.steps.front().loss - std::log(97.0)) < 1.5);
    }

    void bf16AutocastRunsOnCpu() {
        RunConfig config = test::tinyCpuConfig();
        config.precision = Precision::Bf16;
        const RunResult result = runBenchmark(config);
        QCOMPARE(toString(result.status), std::string("ok"));
        QVERIFY(std::isfinite(*result.steps.back().loss));
    }

    void seedMakesRunsRepeatable() {
        RunConfig config = test::tinyCpuConfig();
        config.seed = 42;
        const RunResult a = runBenchmark(config);
        const RunResult b = runBenchmark(config);
        QCOMPARE(*a.steps.back().loss, *b.steps.back().loss);
        config.seed = 43;
        QVERIFY(*runBenchmark(config).steps.back().loss != *a.steps.back().loss);
    }

    void badConfigsNameTheirField() {
        ValidationContext context = validationContext();
        RunConfig config = test::tinyCpuConfig();
        config.model.heads = 5;  // 64 not divisible by 5
        auto errors = validate(config, context);
        QCOMPARE(fields(errors), QStringList{"heads"});
        QVERIFY(errors[0].message.find("not divisible") != std::string::npos);

        config = test::tinyCpuConfig();
        config.contextLength = 4096;
        config.model.maxContext = 2048;
        errors = validate(config, context);
        QCOMPARE(fields(errors), QStringList{"ctx"});
        QVERIFY(errors[0].message.find("1..2048") != std::string::npos);

        config = test::tinyCpuConfig();
        config.batchSize = 0;
        config.measuredSteps = 0;
        config.warmupSteps = -1;
        config.attention = "magic";
        errors = validate(config, context);
        QCOMPARE(fields(errors), (QStringList{"batch", "warmup", "steps", "attention"}));
        QVERIFY(errors[3].message.find("allowed: naive") != std::string::npos);

        config = test::tinyCpuConfig();
        config.device = DeviceKind::Cuda;
        context.cudaAvailable = false;
        errors = validate(config, context);
        QCOMPARE(fields(errors), QStringList{"device"});
        config.device = DeviceKind::Cpu;
        config.tf32 = true;
        QCOMPARE(fields(validate(config, context)), QStringList{"tf32"});
    }

    void runnerRefusesInvalidConfig() {
        RunConfig config = test::tinyCpuConfig();
        config.model.dModel = 0;
        QVERIFY_THROWS_EXCEPTION(InvalidConfigError, runBenchmark(config));
    }

    void cpuPreflightRefusesWhatCannotFit() {
        RunConfig config = test::tinyCpuConfig();
        RunControl control;
        control.availableMemoryBytes = 1024 * 1024;  // 1 MiB
        const int64_t needed = preflightBytes(config);
        QVERIFY(needed > 1024 * 1024);
        const RunResult refused = runBenchmark(config, control);
        QCOMPARE(toString(refused.status), std::string("refused"));
        QVERIFY(refused.steps.empty());
        const QString message = QString::fromStdString(refused.message);
        QVERIFY2(message.contains(QString::fromStdString(formatBytes(double(needed)))),
                 qPrintable(message));
        QVERIFY2(message.contains("1.00 MiB"), qPrintable(message));
        // The engine speaks to the CLI and the app alike: no command-line flags.
        QVERIFY2(message.contains("shrink") && !message.contains("--force"), qPrintable(message));

        config.force = true;
        QCOMPARE(toString(runBenchmark(config, control).status), std::string("ok"));
    }

    void memoryEstimateByMode() {
        RunConfig config = test::tinyCpuConfig();
        const int64_t params = parameterCount(config.model);
        config.mode = RunMode::Inference;
        MemoryEstimate e = estimateMemory(config);
        QCOMPARE(e.parameters, 4 * params);
        QCOMPARE(e.gradients, int64_t{0});
        QCOMPARE(e.optimizerState, int64_t{0});
        config.mode = RunMode::TrainStep;
        e = estimateMemory(config);
        QCOMPARE(e.gradients, 4 * params);
        QCOMPARE(e.optimizerState, 8 * params);
        QVERIFY(e.activations > estimateMemory([&] {
                                    RunConfig inference = config;
                                    inference.mode = RunMode::Inference;
                                    return inference;
                                }())
                                    .activations);
    }

    void cancellationStopsBetweenStepsAndKeepsMeasured() {
        RunConfig config = test::tinyCpuConfig();
        config.warmupSteps = 1;
        config.measuredSteps = 20;
        std::atomic<bool> cancel{false};
        CancelAfterSteps observer(cancel, 3);
        RunControl control;
        control.observer = &observer;
        control.cancel = &cancel;
        const RunResult result = runBenchmark(config, control);
        QCOMPARE(toString(result.status), std::string("cancelled"));
        QCOMPARE(int(result.steps.size()), 3);
        QCOMPARE(result.summary.total.count, 2);  // the two measured steps of the three
    }

    // Issue 31: "threads default" after a run with another count must be
    // LibTorch's own default again, and each run file must say what it used.
    void defaultThreadsComeBackAfterARunThatSetOthers() {
        QVERIFY(freshThreads_ > 0);
        const int other = freshThreads_ > 1 ? 1 : 2;
        RunConfig config = test::tinyCpuConfig();
        config.warmupSteps = 0;
        config.measuredSteps = 1;
        RunConfig pinned = config;
        pinned.threads = other;
        for (const RunConfig& asked : {config, pinned, config, pinned, config}) {
            const RunResult result = runOnNewThread(asked);
            QCOMPARE(toString(result.status), std::string("ok"));
            QCOMPARE(result.config.threads, asked.threads);
            QCOMPARE(result.environment.cpuThreads, asked.threads ? other : freshThreads_);
        }
        // On this thread too: a run here asks for the default as well.
        QCOMPARE(runBenchmark(config, RunControl{}).environment.cpuThreads, freshThreads_);
    }

    void modelFlopsClosedForm() {
        RunConfig config = test::tinyCpuConfig();  // nano: d 64, ff 256, 2 layers, vocab 97
        config.mode = RunMode::Forward;
        const double tokens = 2 * 16;
        const double matmul = 2 * (4 * 64 * 64 + 3 * 64 * 256) + 97 * 64;
        const double attention = 4.0 * 2 * 16 * 16 * 64 * 2;
        QCOMPARE(modelFlopsPerStep(config), 2 * tokens * matmul + attention);
        config.mode = RunMode::TrainStep;
        QCOMPARE(modelFlopsPerStep(config), 3 * (2 * tokens * matmul + attention));
    }

    void devicePeaksAreLookedUpByName() {
        QVERIFY(devicePeakFlopsPerSecond("NVIDIA H100 80GB HBM3", Precision::Bf16, false) ==
                989e12);
        QVERIFY(devicePeakFlopsPerSecond("NVIDIA H100 80GB HBM3", Precision::Fp32, true) == 494e12);
        QVERIFY(!devicePeakFlopsPerSecond("AMD EPYC", Precision::Fp32, false).has_value());
    }
};

QTEST_GUILESS_MAIN(TestRunner)
#include "tst_runner.moc"
