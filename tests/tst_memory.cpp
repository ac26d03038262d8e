// The memory tracker: parameter, gradient and AdamW bytes against closed
// forms, balance over a step, activations against a hand count of what the
// model saves for backward, the memory_viz pickle re-read by LibTorch's
// unpickler and by PyTorch's memory_viz tooling, peaks that grow
// with context.
#include <QtTest/QtTest>

#include <torch/csrc/jit/serialization/pickle.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "config/model_dims.h"
#include "engines/runner.h"
#include "interop/chrome_trace.h"
#include "interop/memviz_export.h"
#include "results/memory_report.h"
#include "results/run_file.h"
#include "test_support.h"

using namespace stepscope;

namespace {

RunResult memoryRun(RunMode mode, int64_t context = 16, Precision precision = Precision::Fp32) {
    RunConfig config = test::tinyCpuConfig();  // nano, vocab 97, batch 2
    config.mode = mode;
    config.contextLength = context;
    config.precision = precision;
    config.warmupSteps = 1;
    config.measuredSteps = 2;
    config.traceMemory = true;
    return runBenchmark(config);
}

// Active bytes of each category just before `timeUs`.
CategoryBytes activeBefore(const MemoryTrace& trace, double timeUs) {
    CategoryBytes active{};
    for (size_t i = 0; i < trace.size() && trace.timeUs[i] < timeUs; ++i) {
        active[trace.category[i]] += trace.bytes[i];
    }
    return active;
}

int64_t activeTotalAfterStep(const MemoryTrace& trace, int step) {
    int64_t total = 0;
    for (size_t i = 0; i < trace.size() && trace.step[i] <= step; ++i) {
        total += trace.bytes[i];
    }
    return total;
}

}  // namespace

class TestMemory : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void parametersGradientsAndAdamStateMatchClosedForms() {
        const RunResult run = memoryRun(RunMode::TrainStep);
        QCOMPARE(toString(run.status), std::string("ok"));
        const MemorySummary summary = summarizeMemory(run.memory);
        const int64_t parameterBytes = parameterCount(run.config.model) * 4;
        auto of = [&](MemoryCategory c) { return summary.maxByCategory[size_t(c)]; };
        QCOMPARE(of(MemoryCategory::Parameters), parameterBytes);
        QCOMPARE(of(MemoryCategory::Gradients), parameterBytes);
        QCOMPARE(of(MemoryCategory::OptimizerState), 2 * parameterBytes);
        QCOMPARE(of(MemoryCategory::Inputs),
                 run.config.batchSize * (run.config.contextLength + 1) * 8);
    }

    void activeMemoryReturnsToItsBaselineAfterASteadyStep() {
        for (RunMode mode : {RunMode::Forward, RunMode::TrainStep}) {
            const RunResult run = memoryRun(mode);
            // Steps 1 and 2 keep exactly what step 0 kept (gradients, moments).
            const int64_t afterFirst = activeTotalAfterStep(run.memory, 1);
            QVERIFY(afterFirst > 0);
            QCOMPARE(activeTotalAfterStep(run.memory, 2), afterFirst);
        }
    }

    void activationsMatchAHandCount() {
        const RunResult run = memoryRun(RunMode::ForwardBackward);
        const MemoryTrace& trace = run.memory;
        double backwardStart = -1;
        for (const auto& range : trace.phases) {
            if (range.phase == 2 && range.step == 2) {
                backwardStart = range.startUs;
            }
        }
        QVERIFY(backwardStart > 0);
        const int64_t measured =
            activeBefore(trace, backwardStart)[size_t(MemoryCategory::Activations)];
        // What this model saves for backward, read off transformer.cpp, in
        // fp32 elements with N = B·T tokens. Per block: RMSNorm ×2 (1/rms N,
        // x·(1/rms) N·d, output N·d); RoPE's rotated q and k 2·N·d (the
        // projections themselves are not kept: cos and sin need no grad) and
        // its cos and sin rows 2·T·d_head; the v copy bmm needs N·d; softmax
        // probabilities B·H·T²; the attention output copy N·d; the residual
        // after attention N·d; SwiGLU's w1, silu, w3 and product 4·N·d_ff;
        // the block output N·d. Then the embedding output, the final norm,
        // log-softmax N·V, the bool causal mask T² per layer, the flattened
        // int64 targets 8·N bytes, and the loss and its total weight.
        const ModelDims& m = run.config.model;
        const int64_t n = run.config.batchSize * run.config.contextLength;
        const int64_t t = run.config.contextLength;
        const int64_t perBlock = 10 * n * m.dModel + 2 * n + 4 * n * m.dFf +
                                 run.config.batchSize * m.heads * t * t + 2 * t * m.headDim();
        const int64_t elements =
            m.layers * perBlock + n * m.dModel + (n + 2 * n * m.dModel) + n * m.vocabSize;
        const int64_t expected = 4 * elements + m.layers * t * t + 8 * n + 8;
        const double ratio = double(measured) / double(expected);
        qInfo("activations at backward start: measured %lld B, hand count %lld B (%.3f)",
              static_cast<long long>(measured), static_cast<long long>(expected), ratio);
        QVERIFY2(std::abs(ratio - 1.0) < 0.01, qPrintable(QString::number(ratio)));
    }

    void memvizPickleReReads() {
        const RunResult run = memoryRun(RunMode::TrainStep);
        const std::string pickle = memvizPickle(run.memory);
        c10::IValue value;
        try {
            // LibTorch's own unpickler (torch::pickle_load wants a zip archive around it).
            value = torch::jit::unpickle(pickle.data(), pickle.size());
        } catch (const c10::Error& error) {
            QFAIL(error.what_without_backtrace());
        }
        QVERIFY(value.isGenericDict());
        const auto dict = value.toGenericDict();
        QVERIFY(dict.contains("segments") && dict.contains("device_traces"));
        const auto traces = dict.at("device_traces").toList();
        QCOMPARE(traces.size(), size_t(1));
        // One entry per event, plus the empty "unknown" pair memory_viz needs.
        QCOMPARE(traces.get(0).toList().size(), run.memory.size() + 2);
        const auto first = traces.get(0).toList().get(0).toGenericDict();
        QCOMPARE(first.at("action").toStringRef(), std::string("alloc"));
        QCOMPARE(first.at("category").toStringRef(), std::string("parameters"));

        const QString python = QStringLiteral(STEPSCOPE_PYTHON);
        if (QProcess::execute(python, {"-c", "import torch"}) != 0) {
            QSKIP("the build's Python cannot import torch, so memory_viz's own check is skipped");
        }
        QTemporaryDir dir;
        const QString path = dir.filePath("run.pickle");
        std::ofstream(path.toStdString(), std::ios::binary) << pickle;
        QProcess process;
        process.start(python, {"-c",
                               "import pickle, sys; from torch.cuda import _memory_viz as v; "
                               "d = pickle.load(open(sys.argv[1], 'rb')); "
                               "html = v.trace_plot(d); "
                               "print(len(d['device_traces'][0]), len(html))",
                               path});
        QVERIFY(process.waitForFinished(120000));
        QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
        const QList<QByteArray> printed = process.readAllStandardOutput().trimmed().split(' ');
        QCOMPARE(printed.value(0).toLongLong(), qint64(run.memory.size() + 2));
    }

    void peakGrowsWithContextAndBf16IsItsOwnRow() {
        int64_t previous = 0;
        for (int64_t context : {16, 32, 64}) {
            const RunResult run = memoryRun(RunMode::TrainStep, context);
            const int64_t peak = summarizeMemory(run.memory).peakBytes;
            QVERIFY2(peak > previous, qPrintable(QString::number(context)));
            previous = peak;
        }
        const RunResult fp32 = memoryRun(RunMode::TrainStep, 64);
        const RunResult bf16 = memoryRun(RunMode::TrainStep, 64, Precision::Bf16);
        const std::string table = formatMemorySweepTable({fp32, bf16});
        QVERIFY(table.find("| nano | fp32 | 64 |") != std::string::npos);
        QVERIFY(table.find("| nano | bf16 | 64 |") != std::string::npos);
        QVERIFY(summarizeMemory(bf16.memory).peakBytes != summarizeMemory(fp32.memory).peakBytes);
    }

    void chromeTraceCarriesAMemoryCounter() {
        RunConfig config = test::tinyCpuConfig();
        config.mode = RunMode::TrainStep;
        config.traceOps = true;
        config.traceMemory = true;
        const RunResult run = runBenchmark(config);
        const auto document = nlohmann::json::parse(chromeTraceJson(run));
        const double parametersMiB = double(parameterCount(config.model) * 4) / (1024.0 * 1024.0);
        double last = -1;
        int counters = 0;
        for (const auto& event : document.at("traceEvents")) {
            if (event.at("ph") != "C") {
                continue;
            }
            ++counters;
            const double ts = event.at("ts").get<double>();
            QVERIFY(ts >= last && ts >= 0);
            last = ts;
            QCOMPARE(event.at("args").size(), kMemoryCategories);
            // Parameters neither come nor go during a step.
            QCOMPARE(event.at("args").at("parameters").get<double>(), parametersMiB);
        }
        QVERIFY(counters > 10);
    }

    void aCancelledRunKeepsItsMemoryTrace() {
        struct CancelAfterFirstStep final : RunObserver {
            std::atomic<bool> cancel{false};
            void onStep(const StepRecord&) override { cancel.store(true); }
        } observer;
        RunConfig config = test::tinyCpuConfig();
        config.mode = RunMode::TrainStep;
        config.traceMemory = true;
        RunControl control;
        control.observer = &observer;
        control.cancel = &observer.cancel;
        const RunResult run = runBenchmark(config, control);
        QCOMPARE(toString(run.status), std::string("cancelled"));
        QCOMPARE(run.steps.size(), size_t(1));
        QVERIFY(!run.memory.empty());
        QCOMPARE(summarizeMemory(run.memory).maxByCategory[size_t(MemoryCategory::Parameters)],
                 parameterCount(config.model) * 4);
    }

    void memoryRoundTripsThroughTheRunFile() {
        const RunResult run = memoryRun(RunMode::TrainStep);
        const RunResult back = runResultFromJson(runResultToJson(run));
        QCOMPARE(back.memory.size(), run.memory.size());
        QCOMPARE(back.memory.address, run.memory.address);
        QCOMPARE(back.memory.category, run.memory.category);
        QCOMPARE(back.memory.paths, run.memory.paths);
        QCOMPARE(back.memory.allocated, run.memory.allocated);
        // The allocator's totals move by exactly the events' sizes (they may
        // start from allocations made before the trace).
        int64_t sum = 0;
        for (size_t i = 0; i < run.memory.size(); ++i) {
            sum += run.memory.bytes[i];
            QCOMPARE(run.memory.allocated[i] - run.memory.allocated[0], sum - run.memory.bytes[0]);
        }
        QCOMPARE(summarizeMemory(back.memory).peakBytes, summarizeMemory(run.memory).peakBytes);
        const auto json = memoryReportJson(back);
        for (const char* key : {"peak_bytes", "peak_phase", "at_peak", "max_by_category", "top"}) {
            QVERIFY2(json.contains(key), key);
        }
        QCOMPARE(json["at_peak"].size(), kMemoryCategories);
    }
};

QTEST_GUILESS_MAIN(TestMemory)
#include "tst_memory.moc"
