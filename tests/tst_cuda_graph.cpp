// --cuda-graph (config.cuda_graph): the combinations a captured step cannot
// have are refused naming both flags; the one it can have is accepted; on a GPU
// the replayed steps compute what eager steps compute and launch the captured
// kernels; the key round-trips through the run file and is a sweep axis.
#include <QtTest/QtTest>

#include <QTemporaryDir>

#include <cmath>

#include <torch/cuda.h>

#include <nlohmann/json.hpp>

#include "attention/attention_registry.h"
#include "config/config_field.h"
#include "engines/runner.h"
#include "experiments/sweep.h"
#include "results/report.h"
#include "results/run_file.h"
#include "test_support.h"

using namespace stepscope;

namespace {

// A machine with a CUDA device, as validate() sees it: the combinations are
// checked the same with or without one here.
ValidationContext withCuda() {
    ValidationContext context;
    context.cudaAvailable = true;
    context.attentionBackends = attentionBackendNames();
    return context;
}

RunConfig graphConfig() {
    RunConfig config = test::tinyCpuConfig();
    config.device = DeviceKind::Cuda;
    config.optimizer = OptimizerKind::AdamWFused;
    config.cudaGraph = true;
    return config;
}

}  // namespace

class TestCudaGraph : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void refusedCombinationsNameBothFlags_data() {
        QTest::addColumn<QString>("change");
        QTest::addColumn<QStringList>("named");
        QTest::newRow("cpu") << "cpu" << QStringList{"--cuda-graph", "--device cpu"};
        QTest::newRow("ops") << "ops" << QStringList{"--cuda-graph with --ops"};
        QTest::newRow("adamw") << "adamw"
                               << QStringList{"--cuda-graph with --optimizer adamw",
                                              "allowed: --optimizer adamw-fused"};
        QTest::newRow("adamw-foreach")
            << "adamw-foreach" << QStringList{"--cuda-graph with --optimizer adamw-foreach"};
        QTest::newRow("engine") << "engine"
                                << QStringList{"--cuda-graph", "--engine pytorch-compile"};
        QTest::newRow("memory") << "memory" << QStringList{"--cuda-graph with --memory"};
        QTest::newRow("warmup") << "warmup"
                                << QStringList{"--cuda-graph with --warmup 0",
                                               "allowed: --warmup 1 or more"};
    }
    void refusedCombinationsNameBothFlags() {
        QFETCH(QString, change);
        QFETCH(QStringList, named);
        RunConfig config = graphConfig();
        if (change == "cpu") {
            config.device = DeviceKind::Cpu;
        } else if (change == "ops") {
            config.traceOps = true;
        } else if (change == "engine") {
            config.engine = Engine::PyTorchCompile;
        } else if (change == "memory") {
            config.traceMemory = true;
        } else if (change == "warmup") {
            config.warmupSteps = 0;
        } else {
            config.optimizer = *parseOptimizerKind(change.toStdString());
        }
        const QString errors = QString::fromStdString(describe(validate(config, withCuda())));
        for (const QString& text : named) {
            QVERIFY2(errors.contains(text), qPrintable(errors));
        }
        // The other combinations' messages are not there: each names only its own conflict.
        QCOMPARE(errors.count("cuda-graph: --cuda-graph"), 1);
    }

    void theCapturableCombinationIsAccepted() {
        RunConfig config = graphConfig();
        QCOMPARE(describe(validate(config, withCuda())), std::string());
        // Forward and forward-backward have no optimizer to be capturable or not.
        config.mode = RunMode::Forward;
        config.optimizer = OptimizerKind::AdamW;
        QCOMPARE(describe(validate(config, withCuda())), std::string());
    }

    void replayedStepsComputeWhatEagerStepsCompute_data() {
        QTest::addColumn<QString>("attention");
        QTest::newRow("sdpa") << "sdpa";
        QTest::newRow("cuda-flash") << "cuda-flash";
    }
    void replayedStepsComputeWhatEagerStepsCompute() {
        QFETCH(QString, attention);
        if (!torch::cuda::is_available()) {
            QSKIP("no CUDA device here: on a GPU, 20 replayed steps' losses equal 20 eager ones");
        }
        RunConfig eager = graphConfig();
        eager.attention = attention.toStdString();
        eager.measuredSteps = 20;
        eager.cudaGraph = false;
        RunConfig graph = eager;
        graph.cudaGraph = true;
        const RunResult eagerRun = runBenchmark(eager);
        const RunResult graphRun = runBenchmark(graph);
        QVERIFY2(eagerRun.status == RunStatus::Ok, eagerRun.message.c_str());
        QVERIFY2(graphRun.status == RunStatus::Ok, graphRun.message.c_str());
        QCOMPARE(graphRun.steps.size(), eagerRun.steps.size());
        for (size_t i = 0; i < eagerRun.steps.size(); ++i) {
            // Same seed, same kernels; atomics in the backward may reorder sums.
            QVERIFY2(std::abs(*graphRun.steps[i].loss - *eagerRun.steps[i].loss) < 1e-4,
                     qPrintable(QString("step %1: graph %2, eager %3")
                                    .arg(i)
                                    .arg(*graphRun.steps[i].loss)
                                    .arg(*eagerRun.steps[i].loss)));
        }
        QVERIFY(!eagerRun.cudaGraphKernels.has_value());
        QVERIFY(graphRun.cudaGraphKernels.value_or(0) > 0);
    }

    void eachReplayLaunchesTheCapturedKernels() {
        if (!torch::cuda::is_available()) {
            QSKIP("no CUDA device here: on a GPU, CUPTI sees the graph's kernels once per replay");
        }
        RunConfig config = graphConfig();
        config.traceKernels = true;
        const RunResult run = runBenchmark(config);
        QVERIFY2(run.status == RunStatus::Ok, run.message.c_str());
        // Kernels only: the captured count is of kernel nodes, not memcpy or
        // memset nodes. Every replay's kernels are tied to a phase.
        int64_t launched = 0;
        for (const TimeRow& row : run.kernels) {
            const bool copyOrSet = row.name.rfind("memcpy", 0) == 0 || row.name == "memset";
            launched += copyOrSet ? 0 : row.calls;
        }
        QCOMPARE(launched, run.cudaGraphKernels.value_or(-1) * config.measuredSteps);
    }

    void cliRefusesNamingBothFlags() {
        const test::CliResult cpu = test::runCli({"run", "--cuda-graph"});
        QCOMPARE(cpu.exitCode, 2);
        QVERIFY2(cpu.err.contains("--cuda-graph") && cpu.err.contains("--device"),
                 qPrintable(cpu.err));
        QVERIFY(cpu.out.isEmpty());
        const test::CliResult ops =
            test::runCli({"run", "--cuda-graph", "--ops", "--device", "cuda"});
        QCOMPARE(ops.exitCode, 2);
        QVERIFY2(ops.err.contains("--cuda-graph with --ops"), qPrintable(ops.err));
        const test::CliResult optimizer = test::runCli(
            {"run", "--cuda-graph", "--device", "cuda", "--optimizer", "adamw-foreach"});
        QCOMPARE(optimizer.exitCode, 2);
        QVERIFY2(optimizer.err.contains("--cuda-graph with --optimizer adamw-foreach"),
                 qPrintable(optimizer.err));
        const test::CliResult sweep =
            test::runCli({"sweep", "--cuda-graph", "off,maybe", "--out", "unused"});
        QCOMPARE(sweep.exitCode, 2);
        QVERIFY2(sweep.err.contains("--cuda-graph") && sweep.err.contains("maybe"),
                 qPrintable(sweep.err));
    }

    void runFileKeepsTheChoice() {
        for (const bool graph : {false, true}) {
            RunConfig config = graphConfig();
            config.cudaGraph = graph;
            const std::string json = runConfigToJson(config);
            QCOMPARE(nlohmann::json::parse(json)["cuda_graph"].get<bool>(), graph);
            QCOMPARE(runConfigFromJson(json).cudaGraph, graph);
        }
        // Files from before it ran eagerly.
        nlohmann::json old = nlohmann::json::parse(runConfigToJson(graphConfig()));
        old.erase("cuda_graph");
        QVERIFY(!runConfigFromJson(old.dump()).cudaGraph);
        old["cuda_graph"] = "yes";
        QVERIFY_THROWS_EXCEPTION(RunFileError, runConfigFromJson(old.dump()));
    }

    void theCapturedKernelCountIsKeptAndShown() {
        RunResult result;
        result.config = graphConfig();
        // An eager run's file has no key for it, as files from before the capture.
        QVERIFY(!nlohmann::json::parse(runResultToJson(result)).contains("cuda_graph_kernels"));
        QVERIFY(!runResultFromJson(runResultToJson(result)).cudaGraphKernels);
        result.cudaGraphKernels = 42;
        const RunResult read = runResultFromJson(runResultToJson(result));
        QCOMPARE(read.cudaGraphKernels.value_or(0), int64_t(42));
        QVERIFY(QString::fromStdString(formatRunReport(read)).contains("replays its 42 kernels"));
        QVERIFY(
            QString::fromStdString(formatRunMarkdown(read, {})).contains("replays its 42 kernels"));
        nlohmann::json bad = nlohmann::json::parse(runResultToJson(result));
        bad["cuda_graph_kernels"] = "many";
        QVERIFY_THROWS_EXCEPTION(RunFileError, runResultFromJson(bad.dump()));
    }

    void sweepAxis() {
        RunConfig config;
        setConfigField(config, "cuda-graph", "on");
        QVERIFY(config.cudaGraph);
        QCOMPARE(configFieldText(config, "cuda-graph"), std::string("on"));
        QVERIFY_THROWS_EXCEPTION(InvalidConfigError, setConfigField(config, "cuda-graph", "yes"));
        const auto& axes = sweepAxisFields();
        QVERIFY(std::find(axes.begin(), axes.end(), "cuda-graph") != axes.end());

        SweepSpec spec;
        spec.base = test::tinyCpuConfig();
        spec.models = {spec.base.model};
        spec.contexts = {16};
        spec.modes = {RunMode::Forward};
        spec.precisions = {Precision::Fp32};
        spec.axes = {{"cuda-graph", {"off", "on"}}};
        const std::vector<RunConfig> points = expandSweep(spec);
        QCOMPARE(int(points.size()), 2);
        QVERIFY(!points[0].cudaGraph && points[1].cudaGraph);
        QCOMPARE(sweepPointFileName(points[1], spec.axes),
                 std::string("nano_ctx16_forward_fp32_cuda-graph-on.json"));
        // The points that cannot run are refused before any runs, by name.
        QTemporaryDir dir;
        spec.outDir = dir.path().toStdString();
        try {
            runSweep(spec);
            QFAIL("a sweep with --cuda-graph on ran");
        } catch (const InvalidConfigError& error) {
            QVERIFY2(QString(error.what()).contains("nano_ctx16_forward_fp32_cuda-graph-on.json"),
                     error.what());
            QVERIFY2(QString(error.what()).contains("--device cpu"), error.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestCudaGraph)
#include "tst_cuda_graph.moc"
