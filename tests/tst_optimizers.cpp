// The three AdamW implementations (model/optimizers.h): each against a
// closed-form AdamW written here in double precision, through the runner
// (the same losses, the same FLOPs, the memory they use as the tracker and
// the estimate see it), in the run file, in a sweep and on the command line.
#include <QtTest/QtTest>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <ATen/ops/tensor.h>
#include <c10/core/GradMode.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "config/config_field.h"
#include "engines/environment.h"
#include "engines/runner.h"
#include "estimate/memory_estimate.h"
#include "experiments/sweep.h"
#include "model/optimizers.h"
#include "profile/memory_trace.h"
#include "results/run_file.h"
#include "test_support.h"

using namespace stepscope;

namespace {

// AdamW as the papers write it (Loshchilov & Hutter, decoupled weight decay),
// one element at a time in double precision.
struct ClosedFormAdamW {
    AdamWHyperParameters h;
    std::vector<double> p, m, v;
    int t = 0;
    void step(const std::vector<double>& g) {
        ++t;
        for (size_t i = 0; i < p.size(); ++i) {
            p[i] *= 1.0 - h.lr * h.weightDecay;
            m[i] = h.beta1 * m[i] + (1.0 - h.beta1) * g[i];
            v[i] = h.beta2 * v[i] + (1.0 - h.beta2) * g[i] * g[i];
            const double mHat = m[i] / (1.0 - std::pow(h.beta1, t));
            const double vHat = v[i] / (1.0 - std::pow(h.beta2, t));
            p[i] -= h.lr * mHat / (std::sqrt(vHat) + h.eps);
        }
    }
};

// Parameter k's element i: away from zero (so that a relative comparison
// means something), both signs.
double initialValue(size_t k, size_t i) {
    return (0.5 + double((i * 7 + k * 3) % 11) / 11.0) * ((i + k) % 3 == 0 ? -1.0 : 1.0);
}
// Its gradient at step t: a different scale per parameter (the second moment
// then spans six orders of magnitude), zero for some elements.
double gradient(size_t k, size_t i, int t) {
    const double scales[] = {1.0, 1e-3, 10.0};
    if ((i + size_t(t)) % 5 == 0) {
        return 0.0;
    }
    return scales[k % 3] * std::sin(0.37 * double(i) + 1.3 * double(t) + double(k));
}

at::Tensor fp32(const std::vector<double>& values, at::IntArrayRef shape) {
    std::vector<float> floats(values.begin(), values.end());
    return at::tensor(floats, at::TensorOptions().dtype(at::kFloat)).reshape(shape).clone();
}

std::vector<double> values(const at::Tensor& tensor) {
    const at::Tensor flat = tensor.detach().to(at::kDouble).contiguous().view(-1);
    return std::vector<double>(flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel());
}

RunConfig trainStep(OptimizerKind optimizer) {
    RunConfig config = test::tinyCpuConfig();
    config.mode = RunMode::TrainStep;
    config.warmupSteps = 1;
    config.measuredSteps = 4;
    config.optimizer = optimizer;
    return config;
}

constexpr OptimizerKind kKinds[] = {OptimizerKind::AdamW, OptimizerKind::AdamWForeach,
                                    OptimizerKind::AdamWFused};

}  // namespace

class TestOptimizers : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void eachMatchesTheClosedForm_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<double>("lr");
        QTest::addColumn<double>("weightDecay");
        for (const OptimizerKind kind : kKinds) {
            // The runner's hyper-parameters, and a learning rate large enough
            // that the updates, not the starting values, dominate the result.
            QTest::addRow("%s lr 1e-3", toString(kind).c_str()) << int(kind) << 1e-3 << 0.01;
            QTest::addRow("%s lr 0.1", toString(kind).c_str()) << int(kind) << 0.1 << 0.1;
        }
    }
    void eachMatchesTheClosedForm() {
        QFETCH(int, kind);
        QFETCH(double, lr);
        QFETCH(double, weightDecay);
        AdamWHyperParameters hyper;
        hyper.lr = lr;
        hyper.weightDecay = weightDecay;
        const OptimizerKind optimizerKind = OptimizerKind(kind);
        if (const auto reason = optimizerUnavailableReason(optimizerKind, at::kCPU)) {
            QSKIP(reason->c_str());
        }
        // Three parameters of odd shapes that get gradients, and one that never
        // does (AdamW leaves it alone).
        const std::vector<std::vector<int64_t>> shapes = {{3, 5}, {7}, {2, 3, 4}, {4}};
        std::vector<at::Tensor> parameters;
        std::vector<ClosedFormAdamW> reference;
        for (size_t k = 0; k < shapes.size(); ++k) {
            int64_t numel = 1;
            for (const int64_t size : shapes[k]) {
                numel *= size;
            }
            std::vector<double> initial;
            for (size_t i = 0; i < size_t(numel); ++i) {
                // Through fp32 first, so that both start from the same values.
                initial.push_back(double(float(initialValue(k, i))));
            }
            parameters.push_back(fp32(initial, shapes[k]).requires_grad_(true));
            reference.push_back({hyper, initial, std::vector<double>(initial.size(), 0.0),
                                 std::vector<double>(initial.size(), 0.0)});
        }
        const auto optimizer = makeOptimizer(optimizerKind, parameters, hyper);
        QCOMPARE(toString(optimizer->kind()), toString(optimizerKind));
        constexpr int kSteps = 6;
        for (int t = 1; t <= kSteps; ++t) {
            for (size_t k = 0; k + 1 < parameters.size(); ++k) {
                std::vector<double> g;
                for (size_t i = 0; i < reference[k].p.size(); ++i) {
                    g.push_back(double(float(gradient(k, i, t))));
                }
                parameters[k].mutable_grad() = fp32(g, shapes[k]);
                reference[k].step(g);
            }
            optimizer->step();
        }
        double largestMove = 0;
        for (size_t k = 0; k < parameters.size(); ++k) {
            const std::vector<double> got = values(parameters[k]);
            for (size_t i = 0; i < got.size(); ++i) {
                const double expected = reference[k].p[i];
                QVERIFY2(std::abs(got[i] - expected) <= 1e-6 * std::abs(expected),
                         qPrintable(QString("parameter %1 element %2: %3, closed form %4")
                                        .arg(k)
                                        .arg(i)
                                        .arg(got[i], 0, 'g', 10)
                                        .arg(expected, 0, 'g', 10)));
                largestMove =
                    std::max(largestMove, std::abs(expected - double(float(initialValue(k, i)))));
            }
        }
        QVERIFY(largestMove > 2 * lr);  // the steps moved the parameters
        // The state: both moments of each parameter that had a gradient (and
        // the fused kernel's step counters), nothing for the one without.
        int64_t momentElements = 0, counters = 0;
        for (const at::Tensor& tensor : optimizer->state()) {
            (tensor.dim() == 0 ? counters : momentElements) += tensor.numel();
        }
        QCOMPARE(momentElements, int64_t(2 * (15 + 7 + 24)));
        QCOMPARE(counters, optimizerKind == OptimizerKind::AdamWFused ? int64_t(3) : int64_t(0));
    }

    void runnerGivesTheSameLossesAndFlopsWithEach() {
        const RunResult loop = runBenchmark(trainStep(OptimizerKind::AdamW));
        QCOMPARE(toString(loop.status), std::string("ok"));
        QCOMPARE(int(loop.steps.size()), 5);
        // The optimizer steps: the loss moves from the first step to the last.
        QVERIFY(std::abs(*loop.steps.back().loss - *loop.steps.front().loss) > 1e-3);
        for (const OptimizerKind kind : {OptimizerKind::AdamWForeach, OptimizerKind::AdamWFused}) {
            const RunResult other = runBenchmark(trainStep(kind));
            QVERIFY2(toString(other.status) == "ok", other.message.c_str());
            QCOMPARE(other.steps.size(), loop.steps.size());
            for (size_t i = 0; i < loop.steps.size(); ++i) {
                // The same update in fp32, rounded in a different order: 1e-5 relative.
                const double a = *loop.steps[i].loss, b = *other.steps[i].loss;
                QVERIFY2(std::abs(a - b) <= 1e-5 * std::abs(a),
                         qPrintable(QString("%1 step %2: loss %3, adamw's %4")
                                        .arg(QString::fromStdString(toString(kind)))
                                        .arg(i)
                                        .arg(b, 0, 'g', 10)
                                        .arg(a, 0, 'g', 10)));
            }
            QVERIFY(other.steps.back().optimizerMs.has_value());
            // The model's FLOPs do not depend on how AdamW is stepped.
            QCOMPARE(other.summary.flopsPerStep, loop.summary.flopsPerStep);
            QCOMPARE(toString(other.config.optimizer), toString(kind));
        }
    }

    void trackerSeesEachOnesStateAndTemporaries() {
        // The moments are optimizer state; what the foreach step makes for
        // every parameter at once is a temporary of the optimizer phase.
        const int64_t parameterBytes = parameterCount(trainStep(OptimizerKind::AdamW).model) * 4;
        for (const OptimizerKind kind : kKinds) {
            RunConfig config = trainStep(kind);
            config.measuredSteps = 2;
            config.traceMemory = true;
            const RunResult result = runBenchmark(config);
            QVERIFY2(toString(result.status) == "ok", result.message.c_str());
            const QString name = QString::fromStdString(toString(kind));
            const MemorySummary memory = summarizeMemory(result.memory, 0);
            // Both moments of every parameter (and the fused kernel's 4-byte step counters).
            const int64_t state = memory.maxByCategory[size_t(MemoryCategory::OptimizerState)];
            QVERIFY2(state >= 2 * parameterBytes && double(state) < 2.01 * double(parameterBytes),
                     qPrintable(QString("%1: optimizer state %2, parameters %3")
                                    .arg(name)
                                    .arg(state)
                                    .arg(parameterBytes)));
            // The temporaries alive at once in the optimizer phase.
            const MemoryTrace& trace = result.memory;
            const std::vector<CategoryBytes> active = activeBytesByCategory(trace);
            int64_t optimizerTemporaries = 0;
            for (size_t e = 0; e < trace.size(); ++e) {
                if (trace.phase[e] == 3) {
                    optimizerTemporaries = std::max(optimizerTemporaries,
                                                    active[e][size_t(MemoryCategory::Temporaries)]);
                }
            }
            // What the last step's sqrt(v) allocated (on the CPU the foreach op
            // runs aten::sqrt per tensor): one parameter-sized result per
            // parameter in the loop and the foreach form, nothing in the fused kernel.
            int64_t sqrtBytes = 0;
            for (const MemoryAllocation& allocation : memoryAllocations(trace)) {
                if (allocation.phase == 3 && allocation.step == result.steps.back().index &&
                    trace.name(allocation.op) == "aten::sqrt") {
                    QCOMPARE(toString(allocation.category), toString(MemoryCategory::Temporaries));
                    sqrtBytes += allocation.bytes;
                }
            }
            qInfo(
                "%s: optimizer state %lld, optimizer-phase temporaries at once %lld, sqrt(v) "
                "%lld, parameters %lld",
                qPrintable(name), static_cast<long long>(state),
                static_cast<long long>(optimizerTemporaries), static_cast<long long>(sqrtBytes),
                static_cast<long long>(parameterBytes));
            QCOMPARE(sqrtBytes, kind == OptimizerKind::AdamWFused ? int64_t(0) : parameterBytes);
            if (kind == OptimizerKind::AdamWForeach) {
                // All of them alive at once.
                QVERIFY(optimizerTemporaries >= parameterBytes);
            } else {
                // A parameter's worth at a time at most (nano's largest is under a quarter).
                QVERIFY(optimizerTemporaries < parameterBytes / 2);
            }
        }
    }

    void estimateFollowsTheTrackerForEach_data() {
        QTest::addColumn<int>("kind");
        for (const OptimizerKind kind : kKinds) {
            QTest::addRow("%s", toString(kind).c_str()) << int(kind);
        }
    }
    void estimateFollowsTheTrackerForEach() {
        // tiny on the CPU, as tst_estimate checks the rest: the peak, the
        // optimizer phase's peak and each category within 10% (1 MiB absolute
        // for categories under 1 MiB), and the phase of the peak.
        QFETCH(int, kind);
        RunConfig config;
        config.model = *findPreset("tiny");
        config.contextLength = 64;
        config.batchSize = 2;
        config.warmupSteps = 1;
        config.measuredSteps = 1;
        config.traceMemory = true;
        config.force = true;
        config.optimizer = OptimizerKind(kind);
        const RunResult result = runBenchmark(config);
        QVERIFY2(toString(result.status) == "ok", result.message.c_str());
        const MemorySummary measured = summarizeMemory(result.memory, 0);
        const MemoryPrediction predicted = predictMemory(config);
        auto check = [](const char* what, int64_t prediction, int64_t measurement) {
            const bool ok =
                measurement < (1 << 20)
                    ? std::llabs(prediction - measurement) < (1 << 20)
                    : std::abs(double(prediction - measurement)) <= 0.10 * double(measurement);
            QVERIFY2(ok, qPrintable(QString("%1: predicted %2, measured %3")
                                        .arg(what)
                                        .arg(prediction)
                                        .arg(measurement)));
        };
        check("peak", predicted.peakBytes, measured.peakBytes);
        for (size_t c = 0; c < kMemoryCategories; ++c) {
            check(toString(MemoryCategory(c)), predicted.maxByCategory[c],
                  measured.maxByCategory[c]);
        }
        QCOMPARE(predicted.peakPhase, measured.peakPhase);
        qInfo("%s: peak predicted %lld, measured %lld; optimizer phase measured %lld",
              QTest::currentDataTag(), static_cast<long long>(predicted.peakBytes),
              static_cast<long long>(measured.peakBytes),
              static_cast<long long>(measured.peakByPhase[3]));
        // foreach's temporaries go beyond the loop's by about the parameters.
        RunConfig loop = config;
        loop.optimizer = OptimizerKind::AdamW;
        const auto temporaries = size_t(MemoryCategory::Temporaries);
        if (config.optimizer == OptimizerKind::AdamWForeach) {
            QVERIFY(predicted.maxByCategory[temporaries] >
                    predictMemory(loop).maxByCategory[temporaries]);
        }
    }

    void runFileKeepsTheOptimizer() {
        for (const OptimizerKind kind : kKinds) {
            RunConfig config = trainStep(kind);
            const std::string json = runConfigToJson(config);
            QCOMPARE(nlohmann::json::parse(json)["optimizer"].get<std::string>(), toString(kind));
            QCOMPARE(toString(runConfigFromJson(json).optimizer), toString(kind));
        }
        // A file from before the choice stepped LibTorch's loop.
        nlohmann::json old =
            nlohmann::json::parse(runConfigToJson(trainStep(OptimizerKind::AdamWFused)));
        old.erase("optimizer");
        QCOMPARE(toString(runConfigFromJson(old.dump()).optimizer), std::string("adamw"));
        // A name no build knows: the field and what it allows.
        old["optimizer"] = "sgd";
        try {
            runConfigFromJson(old.dump());
            QFAIL("an unknown optimizer was read");
        } catch (const RunFileError& error) {
            QVERIFY2(QString(error.what()).contains("optimizer") &&
                         QString(error.what()).contains("adamw, adamw-foreach, adamw-fused"),
                     error.what());
        }
        // A whole run, written and read back.
        QTemporaryDir dir;
        const RunResult run = runBenchmark(trainStep(OptimizerKind::AdamWForeach));
        const std::string path = (dir.path() + "/run.json").toStdString();
        writeRunFile(run, path);
        QCOMPARE(toString(readRunFile(path).config.optimizer), std::string("adamw-foreach"));
    }

    void configFieldAndValidation() {
        RunConfig config;
        setConfigField(config, "optimizer", "adamw-fused");
        QCOMPARE(toString(config.optimizer), std::string("adamw-fused"));
        QCOMPARE(configFieldText(config, "optimizer"), std::string("adamw-fused"));
        try {
            setConfigField(config, "optimizer", "adam");
            QFAIL("'adam' was taken");
        } catch (const InvalidConfigError& error) {
            QVERIFY2(QString(error.what())
                         .contains("optimizer: 'adam' is not allowed; allowed: adamw, "
                                   "adamw-foreach, adamw-fused"),
                     error.what());
        }
        // The Python worker steps AdamW's loop only.
        config.model = *findPreset("nano");
        config.engine = Engine::PyTorch;
        const std::string errors = describe(validate(config, validationContext()));
        QVERIFY2(QString::fromStdString(errors).contains(
                     "optimizer: the pytorch engine runs AdamW's per-parameter loop; "
                     "'adamw-fused' is allowed only with --engine libtorch"),
                 errors.c_str());
        config.optimizer = OptimizerKind::AdamW;
        QCOMPARE(describe(validate(config, validationContext())), std::string());
    }

    void sweepOverTheOptimizerAxis() {
        QTemporaryDir dir;
        SweepSpec spec;
        spec.base = trainStep(OptimizerKind::AdamW);
        spec.base.warmupSteps = 0;
        spec.base.measuredSteps = 3;
        spec.models = {spec.base.model};
        spec.contexts = {16};
        spec.modes = {RunMode::TrainStep};
        spec.precisions = {Precision::Fp32};
        spec.outDir = dir.path().toStdString();
        spec.axes = {{"optimizer", {"adamw", "adamw-foreach", "adamw-fused"}}};
        const std::vector<RunResult> results = runSweep(spec);
        QCOMPARE(int(results.size()), 3);
        for (size_t i = 0; i < results.size(); ++i) {
            const OptimizerKind kind = kKinds[i];
            QCOMPARE(toString(results[i].config.optimizer), toString(kind));
            QCOMPARE(toString(results[i].status), std::string("ok"));
            // Each point's file is named by its optimizer and says which it ran.
            const QString file = dir.path() + "/nano_ctx16_train-step_fp32_" +
                                 QString::fromStdString(toString(kind)) + ".json";
            QVERIFY2(QFile::exists(file), qPrintable(file));
            QCOMPARE(toString(readRunFile(file.toStdString()).config.optimizer), toString(kind));
            QVERIFY(std::abs(*results[i].steps.back().loss - *results[0].steps.back().loss) <=
                    1e-5 * std::abs(*results[0].steps.back().loss));
        }
        QFile markdown(dir.path() + "/sweep.md");
        QVERIFY(markdown.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(markdown.readAll()).trimmed().split('\n');
        QVERIFY2(lines[0].contains("| optimizer |"), qPrintable(lines[0]));
        QVERIFY2(lines[3].contains("| adamw-foreach |"), qPrintable(lines[3]));
        // A value no config can hold names the field and what it allows, before anything runs.
        spec.axes = {{"optimizer", {"adamw", "lion"}}};
        try {
            expandSweep(spec);
            QFAIL("a bad optimizer axis expanded");
        } catch (const InvalidConfigError& error) {
            QVERIFY2(QString(error.what())
                         .contains("optimizer: 'lion' is not allowed; allowed: adamw, "
                                   "adamw-foreach, adamw-fused"),
                     error.what());
        }
    }

    void cliTakesTheFlagAndRefusesBadValues() {
        // A bad value: exit 2, the flag and every allowed value named, in run and sweep.
        for (const QStringList& arguments :
             {QStringList{"run", "--optimizer", "adam"},
              QStringList{"sweep", "--optimizer", "adamw,adam", "--out", "unused"}}) {
            const test::CliResult bad = test::runCli(arguments);
            QCOMPARE(bad.exitCode, 2);
            QVERIFY2(bad.err.contains("--optimizer") && bad.err.contains("adam"),
                     qPrintable(bad.err));
            for (const auto& name : optimizerNames()) {
                QVERIFY2(bad.err.contains(QString::fromStdString(name)), qPrintable(bad.err));
            }
            QVERIFY(bad.out.isEmpty());
        }
        // With the Python worker: both flags named.
        const test::CliResult worker =
            test::runCli({"run", "--optimizer", "adamw-foreach", "--engine", "pytorch"});
        QCOMPARE(worker.exitCode, 2);
        QVERIFY2(worker.err.contains("optimizer") && worker.err.contains("--engine libtorch"),
                 qPrintable(worker.err));
        // A run with it: the file says which AdamW stepped.
        QTemporaryDir dir;
        const QString out = dir.filePath("fused.json");
        const test::CliResult run = test::runCli(
            {"run", "--model", "nano", "--vocab", "97", "--ctx", "16", "--batch", "2", "--warmup",
             "0", "--steps", "2", "--optimizer", "adamw-fused", "--out", out});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QCOMPARE(toString(readRunFile(out.toStdString()).config.optimizer),
                 std::string("adamw-fused"));
    }
};

QTEST_GUILESS_MAIN(TestOptimizers)
#include "tst_optimizers.moc"
