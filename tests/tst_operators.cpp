// The operator tracer: call counts against what the model's structure
// implies, phase attribution, categories that add up, and the breakdown.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include "attention/attention_backend.h"
#include "attention/attention_registry.h"
#include "engines/environment.h"
#include "engines/runner.h"
#include "interop/chrome_trace.h"
#include "model/transformer.h"
#include "profile/operator_tracer.h"
#include "results/breakdown.h"
#include "results/run_file.h"
#include "test_support.h"

using namespace stepscope;

namespace {

RunResult tracedRun(RunMode mode, int steps) {
    RunConfig config = test::tinyCpuConfig();  // nano: 2 layers
    config.mode = mode;
    config.warmupSteps = 1;
    config.measuredSteps = steps;
    config.traceOps = true;
    return runBenchmark(config);
}

}  // namespace

class TestOperators : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void matmulCallsFollowTheModelStructure() {
        const int steps = 3;
        const RunResult run = tracedRun(RunMode::TrainStep, steps);
        QCOMPARE(toString(run.status), std::string("ok"));
        const int64_t layers = 2;
        // Per step: q, k, v, output, w1, w2, w3 per layer, plus the LM head;
        // two attention matmuls per layer. Warm-up steps are not counted.
        QCOMPARE(test::operatorCalls(run, "aten::linear", "forward"), steps * (7 * layers + 1));
        QCOMPARE(test::operatorCalls(run, "aten::matmul", "forward"), steps * 2 * layers);
        int64_t backwardMatmuls = 0;
        for (const auto& row : run.operators) {
            if (row.phase == "backward" && row.category == "matmul") {
                backwardMatmuls += row.calls;
            }
        }
        // Autograd differentiates each linear (MmBackward0 on the flattened
        // input) and each attention matmul (BmmBackward0): at least one node each.
        QVERIFY2(backwardMatmuls >= steps * (7 * layers + 1 + 2 * layers),
                 qPrintable(QString::number(backwardMatmuls)));
    }

    void backwardOperatorsAreAutogradNodes() {
        const RunResult run = tracedRun(RunMode::ForwardBackward, 2);
        int nodes = 0;
        for (const auto& row : run.operators) {
            if (row.phase != "backward") {
                continue;
            }
            // Only top-level calls are recorded, so anything else ran under a node;
            // ones_like is the seed gradient loss.backward() makes before the engine runs.
            const bool node = row.name.find("Backward") != std::string::npos ||
                              row.name.find("AccumulateGrad") != std::string::npos;
            QVERIFY2(node || row.name == "aten::ones_like", row.name.c_str());
            nodes += node;
        }
        QVERIFY(nodes > 10);
        QVERIFY(test::operatorCalls(run, "aten::linear", "backward") == 0);
    }

    void categoriesAddUpToTheTracedTotal() {
        const RunResult run = tracedRun(RunMode::TrainStep, 2);
        for (const char* phase : {"forward", "backward", "optimizer"}) {
            double total = 0;
            for (const auto& row : run.operators) {
                if (row.phase == phase) {
                    total += row.totalMs;
                }
            }
            double categories = 0, shares = 0;
            for (const auto& row : breakdown(run, phase, "category")) {
                categories += row.totalMs;
                shares += row.share;
            }
            QVERIFY2(std::abs(categories - total) < 1e-9 * std::max(1.0, total), phase);
            QVERIFY(std::abs(shares - 1.0) < 1e-9);
        }
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, breakdown(run, "sideways", "op"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, breakdown(run, "all", "stack"));
        // A CPU run has no kernels to group by.
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, breakdown(run, "all", "kernel"));
    }

    void operatorsRoundTripThroughTheRunFile() {
        const RunResult run = tracedRun(RunMode::Forward, 1);
        const RunResult back = runResultFromJson(runResultToJson(run));
        QCOMPARE(back.operators.size(), run.operators.size());
        QCOMPARE(back.operators.front().name, run.operators.front().name);
        QCOMPARE(back.operators.front().calls, run.operators.front().calls);
        QVERIFY(back.config.traceOps);
    }

    void categoriesOfKnownNames() {
        QCOMPARE(operatorCategory("aten::linear", "forward"), std::string("matmul"));
        QCOMPARE(operatorCategory("MmBackward0", "backward"), std::string("matmul"));
        QCOMPARE(operatorCategory("aten::softmax", "forward"), std::string("softmax"));
        QCOMPARE(operatorCategory("LogSoftmaxBackward0", "backward"), std::string("reduction"));
        QCOMPARE(operatorCategory("torch::autograd::AccumulateGrad", "backward"),
                 std::string("copy/cast"));
        QCOMPARE(operatorCategory("aten::mul", "forward"), std::string("elementwise"));
        QCOMPARE(operatorCategory("aten::mul", "optimizer"), std::string("optimizer"));
    }

    void timelineHoldsTheLastStepWithModulePaths() {
        const RunResult run = tracedRun(RunMode::TrainStep, 2);
        QCOMPARE(run.timeline.step, run.steps.back().index);
        double stepEndUs = -1;
        int linears = 0, forwardOps = 0;
        for (const auto& span : run.timeline.spans) {
            if (span.kind == SpanKind::Range && span.name == "step 2") {
                QCOMPARE(span.startUs, 0.0);
                stepEndUs = span.durationUs;
            }
        }
        QVERIFY(stepEndUs > 0);
        for (const auto& span : run.timeline.spans) {
            QVERIFY2(span.startUs >= 0 && span.startUs + span.durationUs <= stepEndUs + 1e-3,
                     span.name.c_str());
            if (span.kind != SpanKind::Operator) {
                continue;
            }
            forwardOps += span.phase == "forward";
            if (span.name == "aten::linear") {
                ++linears;
                const bool module =
                    span.detail.rfind("layers.", 0) == 0 || span.detail == "lm_head";
                QVERIFY2(module, span.detail.c_str());
            }
        }
        QCOMPARE(linears, 7 * 2 + 1);  // one step of nano: 2 layers
        QVERIFY(forwardOps > linears);
    }

    void flopGroupsMatchTheModelsOwnMatmulShapes() {
        RunConfig config = test::tinyCpuConfig();
        config.mode = RunMode::Forward;
        config.traceOps = true;
        const RunResult run = runBenchmark(config);
        // Independent count: 2·tokens·(in·out) for every linear weight, by module.
        const TransformerLM model(config.model, makeAttentionBackend("naive"),
                                  at::TensorOptions().device(at::kMeta));
        const double tokens = double(config.batchSize * config.contextLength);
        std::map<std::string, double> expected;
        for (const auto& item : model->named_parameters()) {
            const std::string& name = item.key();
            const at::Tensor& weight = item.value();
            if (weight.dim() != 2 || name.find("embeddings") != std::string::npos) {
                continue;
            }
            const std::string group = name.find(".attn.") != std::string::npos
                                          ? "attention projections"
                                      : name.find(".ffn.") != std::string::npos ? "MLP matmuls"
                                                                                : "LM head";
            expected[group] += 2 * tokens * double(weight.numel());
        }
        const double t = double(config.contextLength);
        expected["attention q·kᵀ"] = 2.0 * 2 * tokens * t * double(config.model.dModel);
        std::map<std::string, const FlopGroupRow*> measured;
        for (const auto& row : run.flopGroups) {
            measured[row.group] = &row;
            QVERIFY2(row.msPerStep > 0, row.group.c_str());
        }
        for (const auto& [group, flops] : expected) {
            QVERIFY2(measured.count(group), group.c_str());
            QCOMPARE(measured[group]->flopsPerStep, flops);
            QVERIFY(measured[group]->achievedFlopsPerSecond > 0);
        }
        QVERIFY(measured.count("attention softmax") && measured.count("attention ·v"));
    }

    void chromeTraceParsesWithMonotonicTracks() {
        const RunResult run = tracedRun(RunMode::TrainStep, 1);
        const auto document =
            nlohmann::json::parse(chromeTraceJson(runResultFromJson(runResultToJson(run))));
        std::map<std::pair<int, int>, double> lastStart;
        std::set<std::string> kinds;
        int threadNames = 0;
        for (const auto& event : document.at("traceEvents")) {
            if (event.at("ph") == "M") {
                threadNames += event.at("name") == "thread_name";
                continue;
            }
            QCOMPARE(event.at("ph").get<std::string>(), std::string("X"));
            QVERIFY(event.at("dur").get<double>() >= 0);
            kinds.insert(event.at("cat").get<std::string>());
            const auto track =
                std::make_pair(event.at("pid").get<int>(), event.at("tid").get<int>());
            const double ts = event.at("ts").get<double>();
            if (lastStart.count(track)) {
                QVERIFY(ts >= lastStart[track]);
            }
            lastStart[track] = ts;
        }
        QCOMPARE(kinds, (std::set<std::string>{"user_annotation", "cpu_op"}));  // Kineto's
        QCOMPARE(threadNames, int(lastStart.size()));
        RunResult untraced = run;
        untraced.timeline = {};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, chromeTraceJson(untraced));
    }

    void kernelTracingNeedsCuda() {
        RunConfig config = test::tinyCpuConfig();
        config.traceKernels = true;
        const auto errors = validate(config, validationContext());
        QVERIFY(std::any_of(errors.begin(), errors.end(),
                            [](const ConfigError& e) { return e.field == "kernels"; }));
        QCOMPARE(kernelCategory("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n", "", "forward"),
                 std::string("matmul"));
        QCOMPARE(kernelCategory("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4>",
                                "softmax", "forward"),
                 std::string("softmax"));
        QCOMPARE(kernelCategory("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4>",
                                "reduction", "forward"),
                 std::string("reduction"));
        QCOMPARE(kernelCategory("memcpy HtoD", "", "forward"), std::string("copy/cast"));
    }

    void untracedRunsRecordNothing() {
        RunConfig config = test::tinyCpuConfig();
        QVERIFY(runBenchmark(config).operators.empty());
    }
};

QTEST_GUILESS_MAIN(TestOperators)
#include "tst_operators.moc"
