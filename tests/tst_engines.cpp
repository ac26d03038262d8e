// The PyTorch engines: the real Python worker (python/stepscope/worker.py)
// driven through runBenchmark, as the CLI and the app drive it. Held against
// independent references: the reference model's loss computed by Python, the
// C++ eval path, a user model's closed-form parameter count, and the LibTorch
// engine's own operator rows.
#include <QtTest/QtTest>

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <atomic>
#include <cstdlib>
#include <map>

#include "engines/runner.h"
#include "model/evaluate.h"
#include "profile/memory_trace.h"
#include "results/run_file.h"
#include "test_support.h"

using namespace stepscope;

// The status, and the run's message when it is not the expected one.
#define QVERIFY_STATUS(run, expected)                                                              \
    QVERIFY2((run).status == (expected),                                                           \
             (toString((run).status) + " (expected " + toString(expected) + "): " + (run).message) \
                 .c_str())

namespace {

RunConfig workerConfig(Engine engine = Engine::PyTorch) {
    RunConfig config = test::tinyCpuConfig();
    config.engine = engine;
    config.python = test::pythonExecutable().toStdString();
    return config;
}

RunConfig userModelConfig(const std::string& callable) {
    RunConfig config = workerConfig();
    config.pyModel = "user_models:" + callable;
    config.pyPath = test::sourcePath("tests/data").toStdString();
    return config;
}

// Cancels the run once it has seen `afterSteps` steps.
class CancelAfter : public RunObserver {
public:
    explicit CancelAfter(int afterSteps) : afterSteps_(afterSteps) {}
    void onStep(const StepRecord&) override {
        if (++seen_ >= afterSteps_) {
            cancel.store(true);
        }
    }
    std::atomic<bool> cancel{false};

private:
    int afterSteps_;
    int seen_ = 0;
};

double measuredPhaseMs(const RunResult& run, const std::string& phase) {
    double total = 0;
    for (const auto& step : run.steps) {
        if (step.warmup) {
            continue;
        }
        const auto& ms = phase == "forward"    ? step.forwardMs
                         : phase == "backward" ? step.backwardMs
                                               : step.optimizerMs;
        total += ms.value_or(0);
    }
    return total;
}

std::map<std::string, double> operatorMsByPhase(const RunResult& run) {
    std::map<std::string, double> total;
    for (const auto& row : run.operators) {
        total[row.phase] += row.totalMs;
    }
    return total;
}

}  // namespace

class TestEngines : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private Q_SLOTS:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void sameCheckpointSameLossThroughEvalAndBothEngines() {
        const QString error = test::runPython({test::sourcePath("tools/make_test_checkpoint.py"),
                                               dir_.path(), "--model", "nano", "--vocab", "97",
                                               "--batch", "2", "--seq", "17", "--seed", "5"});
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QFile expectedFile(dir_.filePath("expected.json"));
        QVERIFY(expectedFile.open(QIODevice::ReadOnly));
        const double reference =
            QJsonDocument::fromJson(expectedFile.readAll()).object()["loss"].toDouble();

        RunConfig config = workerConfig();
        config.weightsPath = dir_.filePath("state_dict.pt").toStdString();
        config.tokensPath = dir_.filePath("tokens.pt").toStdString();
        config.mode = RunMode::Forward;
        config.warmupSteps = 0;
        config.measuredSteps = 2;
        const double evalLoss =
            evaluateCheckpoint(config, config.weightsPath, config.tokensPath).loss;

        std::map<std::string, double> losses{{"eval", evalLoss}};
        for (Engine engine : {Engine::LibTorch, Engine::PyTorch}) {
            config.engine = engine;
            const RunResult run = runBenchmark(config);
            QVERIFY_STATUS(run, RunStatus::Ok);
            QCOMPARE(run.steps.size(), size_t(2));
            losses[toString(engine)] = *run.steps.front().loss;
        }
        for (const auto& [path, loss] : losses) {
            const double relative = std::abs(loss - reference) / reference;
            QVERIFY2(relative < 1e-5, qPrintable(QString("%1: loss %2, the reference model's %3")
                                                     .arg(path.c_str())
                                                     .arg(loss, 0, 'g', 10)
                                                     .arg(reference, 0, 'g', 10)));
        }
    }

    void workerRunIsAnOrdinaryRunFile() {
        RunConfig config = workerConfig();
        config.mode = RunMode::TrainStep;
        const RunResult run = runBenchmark(config);
        QVERIFY_STATUS(run, RunStatus::Ok);
        QCOMPARE(run.steps.size(), size_t(config.warmupSteps + config.measuredSteps));
        for (const auto& step : run.steps) {
            QVERIFY(step.forwardMs && step.backwardMs && step.optimizerMs);
            QVERIFY(step.totalMs >= *step.forwardMs + *step.backwardMs + *step.optimizerMs - 1e-6);
        }
        QCOMPARE(run.parameterCount, parameterCount(config.model));
        QVERIFY(run.summary.total.mean > 0);
        QVERIFY(run.summary.flopsPerStep > 0);
        QVERIFY(!run.environment.pythonTorchVersion.empty());
        QVERIFY(!run.environment.deviceName.empty());

        const RunResult back = runResultFromJson(runResultToJson(run));
        QCOMPARE(toString(back.config.engine), std::string("pytorch"));
        QCOMPARE(back.environment.pythonTorchVersion, run.environment.pythonTorchVersion);
        QCOMPARE(back.environment.python, run.environment.python);
        QCOMPARE(back.steps.size(), run.steps.size());
        QVERIFY(!back.compileMs);
    }

    void compiledRunRecordsCompileTimeOutsideTheSteps() {
        RunConfig config = workerConfig(Engine::PyTorchCompile);
        config.mode = RunMode::Forward;
        config.warmupSteps = 1;
        config.measuredSteps = 2;
        const RunResult run = runBenchmark(config);
        QVERIFY_STATUS(run, RunStatus::Ok);
        QVERIFY(run.compileMs);
        QCOMPARE(run.steps.size(), size_t(3));
        // Compiling takes seconds; a compiled step of nano takes milliseconds.
        QVERIFY2(*run.compileMs > 10 * run.summary.total.mean,
                 qPrintable(QString("compile %1 ms, step %2 ms")
                                .arg(*run.compileMs)
                                .arg(run.summary.total.mean)));
        QCOMPARE(*runResultFromJson(runResultToJson(run)).compileMs, *run.compileMs);
    }

    void userModelFromAFileRunsWithItsOwnParameterCount() {
        RunConfig config = userModelConfig("tied_bag_lm");
        const RunResult run = runBenchmark(config);
        QVERIFY_STATUS(run, RunStatus::Ok);
        const int64_t V = config.model.vocabSize, d = config.model.dModel, f = config.model.dFf,
                      L = config.model.layers;
        QCOMPARE(run.parameterCount, V * d + L * (2 * d * f + f + 2 * d) + 2 * d);
        QVERIFY(run.parameterCount != parameterCount(config.model));
        QCOMPARE(run.steps.size(), size_t(config.warmupSteps + config.measuredSteps));
        QCOMPARE(run.summary.flopsPerStep, 0.0);  // not our model: no FLOP count
    }

    void noPythonIsUnavailableAndSaysWhatWasLookedFor() {
        RunConfig config = workerConfig();
        config.python = dir_.filePath("no-such-python").toStdString();
        const RunResult run = runBenchmark(config);
        QVERIFY_STATUS(run, RunStatus::Unavailable);
        QVERIFY2(run.message.find(config.python) != std::string::npos, run.message.c_str());
        QVERIFY2(run.message.find("--python") != std::string::npos, run.message.c_str());
        QVERIFY(run.steps.empty());
    }

    void brokenUserModelsFailWithPythonsMessage_data() {
        QTest::addColumn<QString>("callable");
        QTest::addColumn<QString>("expected");
        QTest::newRow("import error") << "broken_model:build"
                                      << "no_such_module_anywhere";
        QTest::newRow("missing callable") << "user_models:not_there"
                                          << "not_there";
        QTest::newRow("wrong signature") << "user_models:no_kwargs"
                                         << "no_kwargs";
        QTest::newRow("wrong output") << "user_models:wrong_output"
                                      << "96";
    }
    void brokenUserModelsFailWithPythonsMessage() {
        QFETCH(QString, callable);
        QFETCH(QString, expected);
        RunConfig config = workerConfig();
        config.pyModel = callable.toStdString();
        config.pyPath = test::sourcePath("tests/data").toStdString();
        const RunResult run = runBenchmark(config);
        QVERIFY_STATUS(run, RunStatus::Failed);
        QVERIFY2(run.message.find(expected.toStdString()) != std::string::npos,
                 run.message.c_str());
        QVERIFY(run.steps.empty());
    }

    void workerThatDiesKeepsItsStepsAndStderr() {
        RunConfig config = userModelConfig("dies_on_third_forward");
        config.warmupSteps = 0;
        config.measuredSteps = 5;
        const RunResult run = runBenchmark(config);
        QVERIFY_STATUS(run, RunStatus::Failed);
        QVERIFY2(run.message.find("signal 9") != std::string::npos, run.message.c_str());
        QVERIFY2(run.message.find("about to die") != std::string::npos, run.message.c_str());
        QVERIFY2(!run.steps.empty() && run.steps.size() < 5, run.message.c_str());
        QCOMPARE(run.steps.back().index, int(run.steps.size()) - 1);
    }

    void cancelStopsTheWorkerAndKeepsTheSteps() {
        RunConfig config = workerConfig();
        config.warmupSteps = 0;
        config.measuredSteps = 50;
        CancelAfter observer(2);
        RunControl control;
        control.observer = &observer;
        control.cancel = &observer.cancel;
        const RunResult run = runBenchmark(config, control);
        QVERIFY_STATUS(run, RunStatus::Cancelled);
        QVERIFY2(run.steps.size() >= 2 && run.steps.size() < 50, run.message.c_str());
        QVERIFY(run.summary.total.mean > 0);
    }

    void aWorkerThatIgnoresSigtermIsKilledAfterTheGracePeriod() {
        RunConfig config = userModelConfig("ignores_sigterm");
        config.warmupSteps = 0;
        config.measuredSteps = 50;
        CancelAfter observer(1);
        RunControl control;
        control.observer = &observer;
        control.cancel = &observer.cancel;
        control.stopGracePeriod = std::chrono::milliseconds(300);
        QElapsedTimer clock;
        clock.start();
        const RunResult run = runBenchmark(config, control);
        QVERIFY_STATUS(run, RunStatus::Cancelled);
        QVERIFY2(run.message.find("signal 9") != std::string::npos, run.message.c_str());
        QVERIFY(!run.steps.empty() && run.steps.size() < 50);
        QVERIFY2(clock.elapsed() < 30000, qPrintable(QString::number(clock.elapsed())));
    }

    void operatorRowsAddUpLikeTheEngines() {
        RunConfig config = workerConfig();
        config.traceOps = true;
        config.warmupSteps = 1;
        config.measuredSteps = 2;
        for (Engine engine : {Engine::LibTorch, Engine::PyTorch}) {
            config.engine = engine;
            const RunResult run = runBenchmark(config);
            QVERIFY_STATUS(run, RunStatus::Ok);
            QVERIFY(!run.operators.empty());
            // Top-level operators only: per phase they add up to no more than
            // the phase's measured time, and to most of it.
            const auto byPhase = operatorMsByPhase(run);
            for (const std::string phase : {"forward", "backward", "optimizer"}) {
                const double measured = measuredPhaseMs(run, phase);
                const double traced = byPhase.count(phase) ? byPhase.at(phase) : 0;
                const QString what = QString("%1 %2: operators %3 ms, phase %4 ms")
                                         .arg(toString(engine).c_str(), phase.c_str())
                                         .arg(traced)
                                         .arg(measured);
                QVERIFY2(traced <= measured * 1.02 + 0.05, qPrintable(what));
                QVERIFY2(traced > 0, qPrintable(what));
                // How much of the phase the operators cover depends on the
                // machine's load (CI ran 0.26 with a Python worker beside it),
                // so it is printed, not asserted: a wrong phase shows below.
                qInfo("%s, covered %.0f%%", qPrintable(what), 100 * traced / measured);
            }
            // Each phase holds its own kind of operator: the matrix products
            // of the forward, autograd's nodes for them in the backward, and
            // AdamW's in-place updates in the optimizer.
            QVERIFY(test::operatorCalls(run, "aten::matmul", "forward") > 0);
            QVERIFY(test::operatorCalls(run, "MmBackward0", "backward") > 0);
            QVERIFY(test::operatorCalls(run, "aten::addcdiv_", "optimizer") +
                        test::operatorCalls(run, "aten::lerp_", "optimizer") >
                    0);
            for (const auto& row : run.operators) {
                QVERIFY2(!row.category.empty(), row.name.c_str());
                QVERIFY2(row.phase != "forward" || row.name.find("Backward") == std::string::npos,
                         row.name.c_str());
            }
        }
        // The reference model multiplies with `@`: per forward, 7 projections
        // per layer, 2 attention products per layer and the LM head.
        config.engine = Engine::PyTorch;
        const RunResult run = runBenchmark(config);
        QCOMPARE(test::operatorCalls(run, "aten::matmul", "forward"),
                 int64_t(config.measuredSteps) * (9 * config.model.layers + 1));
    }

    void workerMemoryTraceHoldsTheParameters() {
        RunConfig config = workerConfig();
        config.traceMemory = true;
        config.warmupSteps = 0;
        config.measuredSteps = 2;
        const RunResult run = runBenchmark(config);
        QVERIFY_STATUS(run, RunStatus::Ok);
        QVERIFY(!run.memory.empty());
        const MemorySummary summary = summarizeMemory(run.memory);
        const auto category = [&](MemoryCategory c) { return summary.maxByCategory[size_t(c)]; };
        QCOMPARE(category(MemoryCategory::Parameters), 4 * parameterCount(config.model));
        QCOMPARE(category(MemoryCategory::Gradients), 4 * parameterCount(config.model));
        // exp_avg and exp_avg_sq, and PyTorch's one-element step counter per tensor.
        const int64_t moments = 2 * 4 * parameterCount(config.model);
        QVERIFY(category(MemoryCategory::OptimizerState) >= moments);
        QVERIFY(category(MemoryCategory::OptimizerState) <= moments + 64 * 32);
        QVERIFY(category(MemoryCategory::Activations) > 0);
        QVERIFY(summary.peakBytes >= 4 * 4 * parameterCount(config.model));
        QVERIFY(summary.peakByPhase[1] > 0 && summary.peakByPhase[2] > 0);
    }

    void configsTheWorkerCannotServeAreNamed() {
        RunConfig config = workerConfig();
        config.attention = "tiled";
        auto errors = validate(config, ValidationContext{false, {"naive", "tiled", "sdpa"}});
        QCOMPARE(errors.size(), size_t(1));
        QCOMPARE(errors.front().field, std::string("attention"));
        QVERIFY(errors.front().message.find("naive, sdpa") != std::string::npos);

        config = workerConfig();
        config.compileMode = "max-autotune";
        errors = validate(config, ValidationContext{false, {"naive"}});
        QCOMPARE(errors.size(), size_t(1));
        QCOMPARE(errors.front().field, std::string("compile-mode"));

        config = test::tinyCpuConfig();
        config.pyModel = "user_models:tied_bag_lm";
        errors = validate(config, ValidationContext{false, {"naive"}});
        QCOMPARE(errors.size(), size_t(1));
        QCOMPARE(errors.front().field, std::string("py-model"));

        for (const char* target : {"no_colon", "my-model:build", "pkg.:build", "m:", ":build",
                                   "m:1build", "pkg..m:build"}) {
            config = workerConfig();
            config.pyModel = target;
            errors = validate(config, ValidationContext{false, {"naive"}});
            QCOMPARE(errors.size(), size_t(1));
            QCOMPARE(errors.front().field, std::string("py-model"));
        }
        for (const char* target : {"my_model:build", "pkg.sub_2.m:Build_LM"}) {
            config = workerConfig();
            config.pyModel = target;
            QVERIFY2(validate(config, ValidationContext{false, {"naive"}}).empty(), target);
        }
    }
};

QTEST_GUILESS_MAIN(TestEngines)
#include "tst_engines.moc"
