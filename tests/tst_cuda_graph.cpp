// --cuda-graph (config.cuda_graph): the combinations a captured step cannot
// have are refused naming both flags, and, until the capture is built, every
// request is refused saying so; the key round-trips through the run file and
// is a sweep axis.
#include <QtTest/QtTest>

#include <QTemporaryDir>

#include <torch/cuda.h>

#include <nlohmann/json.hpp>

#include "attention/attention_registry.h"
#include "config/config_field.h"
#include "engines/runner.h"
#include "experiments/sweep.h"
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

    void refusedEverywhereUntilTheCaptureIsBuilt() {
        // Even the one combination that could be captured: not built yet, and said so.
        RunConfig config = graphConfig();
        const std::vector<ConfigError> errors = validate(config, withCuda());
        QCOMPARE(int(errors.size()), 1);
        QCOMPARE(errors[0].field, std::string("cuda-graph"));
        QVERIFY2(QString::fromStdString(errors[0].message).contains("not built yet"),
                 errors[0].message.c_str());
        // Forward and forward-backward have no optimizer to be capturable or not.
        config.mode = RunMode::Forward;
        config.optimizer = OptimizerKind::AdamW;
        QCOMPARE(int(validate(config, withCuda()).size()), 1);
        // Without it, the config is fine.
        config.cudaGraph = false;
        QCOMPARE(describe(validate(config, withCuda())), std::string());
    }

    void aGpuRunIsRefusedNotFaked() {
        if (!torch::cuda::is_available()) {
            QSKIP(
                "no CUDA device here: on a GPU this checks that --cuda-graph is refused "
                "rather than run eagerly under its name");
        }
        try {
            runBenchmark(graphConfig());
            QFAIL("a --cuda-graph run ran");
        } catch (const InvalidConfigError& error) {
            QVERIFY2(QString(error.what()).contains("not built yet"), error.what());
        }
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
            QVERIFY2(QString(error.what()).contains("not built yet"), error.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestCudaGraph)
#include "tst_cuda_graph.moc"
