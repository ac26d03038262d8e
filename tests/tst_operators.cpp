// The operator tracer: call counts against what the model's structure
// implies, phase attribution, categories that add up, and the breakdown.
#include <QtTest/QtTest>

#include <map>

#include "bench/runner.h"
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

int64_t callsOf(const RunResult& run, const std::string& name, const std::string& phase) {
    int64_t calls = 0;
    for (const auto& row : run.operators) {
        if (row.name == name && row.phase == phase) {
            calls += row.calls;
        }
    }
    return calls;
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
        QCOMPARE(callsOf(run, "aten::linear", "forward"), steps * (7 * layers + 1));
        QCOMPARE(callsOf(run, "aten::matmul", "forward"), steps * 2 * layers);
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
        QVERIFY(callsOf(run, "aten::linear", "backward") == 0);
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
            for (const auto& row : breakdown(run.operators, phase, "category")) {
                categories += row.totalMs;
                shares += row.share;
            }
            QVERIFY2(std::abs(categories - total) < 1e-9 * std::max(1.0, total), phase);
            QVERIFY(std::abs(shares - 1.0) < 1e-9);
        }
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, breakdown(run.operators, "sideways", "op"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, breakdown(run.operators, "all", "kernel"));
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

    void untracedRunsRecordNothing() {
        RunConfig config = test::tinyCpuConfig();
        QVERIFY(runBenchmark(config).operators.empty());
    }
};

QTEST_GUILESS_MAIN(TestOperators)
#include "tst_operators.moc"
