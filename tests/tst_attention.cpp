// Attention backends against a float64 reference computed here (outputs and
// gradients), what the tiled backend saves for backward, its memory next to
// naive's, the model's indifference to the backend, and the benchmark.
#include <QtTest/QtTest>

#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/softmax.h>
#include <c10/core/GradMode.h>

#include <cmath>

#include "attention/attention_registry.h"
#include "attention/naive_attention.h"
#include "attention/tiled_attention.h"
#include "engines/environment.h"
#include "engines/runner.h"
#include "experiments/attention_benchmark.h"
#include "model/transformer.h"
#include "profile/memory_watermark.h"
#include "test_support.h"

using namespace stepscope;

namespace {

struct Grads {
    at::Tensor out, dq, dk, dv;
};

// Plain float64 attention with autograd: the reference every backend meets.
Grads reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                const at::Tensor& dOut, bool causal) {
    auto q64 = q.detach().to(at::kDouble).requires_grad_(true);
    auto k64 = k.detach().to(at::kDouble).requires_grad_(true);
    auto v64 = v.detach().to(at::kDouble).requires_grad_(true);
    at::Tensor scores = at::matmul(q64, k64.transpose(-2, -1)) / std::sqrt(double(q.size(-1)));
    if (causal) {
        const int64_t sq = q.size(-2), sk = k.size(-2);
        for (int64_t i = 0; i < sq; ++i) {
            if (i + sk - sq + 1 < sk) {
                scores.select(-2, i).narrow(-1, i + sk - sq + 1, sq - i - 1).fill_(-INFINITY);
            }
        }
    }
    const at::Tensor out = at::matmul(at::softmax(scores, -1), v64);
    out.backward(dOut.to(at::kDouble));
    return {out.detach(), q64.grad(), k64.grad(), v64.grad()};
}

Grads run(AttentionBackend& backend, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
          const at::Tensor& dOut, bool causal) {
    auto qq = q.detach().clone().requires_grad_(true);
    auto kk = k.detach().clone().requires_grad_(true);
    auto vv = v.detach().clone().requires_grad_(true);
    const at::Tensor out = backend.forward(qq, kk, vv, causal);
    out.backward(dOut);
    return {out.detach(), qq.grad(), kk.grad(), vv.grad()};
}

double maxError(const at::Tensor& actual, const at::Tensor& expected) {
    return (actual.to(at::kDouble) - expected).abs().max().item<double>();
}

}  // namespace

class TestAttention : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void backendsMatchFloat64Reference_data() {
        QTest::addColumn<QString>("backend");
        QTest::addColumn<int>("sq");
        QTest::addColumn<int>("sk");
        QTest::addColumn<int>("d");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<bool>("bf16");
        for (const auto& name : attentionBackendNames()) {
            const QString b = QString::fromStdString(name);
            QTest::newRow(qPrintable(b + " causal 37")) << b << 37 << 37 << 16 << true << false;
            QTest::newRow(qPrintable(b + " causal 100 d32"))
                << b << 100 << 100 << 32 << true << false;
            QTest::newRow(qPrintable(b + " full 33x50")) << b << 33 << 50 << 16 << false << false;
            QTest::newRow(qPrintable(b + " causal 70 bf16")) << b << 70 << 70 << 64 << true << true;
        }
    }

    void backendsMatchFloat64Reference() {
        QFETCH(QString, backend);
        QFETCH(int, sq);
        QFETCH(int, sk);
        QFETCH(int, d);
        QFETCH(bool, causal);
        QFETCH(bool, bf16);
        at::manual_seed(sq * 31 + d);
        const auto dtype = bf16 ? at::kBFloat16 : at::kFloat;
        const at::Tensor q = at::randn({2, 3, sq, d}).to(dtype);
        const at::Tensor k = at::randn({2, 3, sk, d}).to(dtype);
        const at::Tensor v = at::randn({2, 3, sk, d}).to(dtype);
        const at::Tensor dOut = at::randn({2, 3, sq, d}).to(dtype);
        auto attention = makeAttentionBackend(backend.toStdString());
        if (const auto reason = attention->unavailableReason(q)) {
            QSKIP(qPrintable(backend + " is unavailable here: " + QString::fromStdString(*reason)));
        }
        const Grads expected = reference(q, k, v, dOut, causal);
        const Grads actual = run(*attention, q, k, v, dOut, causal);
        QCOMPARE(actual.out.scalar_type(), dtype);
        const double tolerance = bf16 ? 0.1 : 2e-4;
        for (const auto& [name, a, e] :
             {std::tuple{"out", actual.out, expected.out}, std::tuple{"dq", actual.dq, expected.dq},
              std::tuple{"dk", actual.dk, expected.dk}, std::tuple{"dv", actual.dv, expected.dv}}) {
            const double error = maxError(a, e);
            QVERIFY2(
                error < tolerance,
                qPrintable(QString("%1: max error %2 > %3").arg(name).arg(error).arg(tolerance)));
        }
    }

    void tiledTilesSmallerThanSequence() {
        at::manual_seed(5);
        const at::Tensor q = at::randn({1, 2, 83, 16}), k = at::randn({1, 2, 83, 16}),
                         v = at::randn({1, 2, 83, 16}), dOut = at::randn({1, 2, 83, 16});
        TiledAttention tiled(16, 32);  // 83 is a multiple of neither
        const Grads expected = reference(q, k, v, dOut, true);
        const Grads actual = run(tiled, q, k, v, dOut, true);
        QVERIFY(maxError(actual.out, expected.out) < 2e-4);
        QVERIFY(maxError(actual.dq, expected.dq) < 2e-4);
        QVERIFY(maxError(actual.dk, expected.dk) < 2e-4);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, TiledAttention(8, 64));
    }

    void tiledSavesLogsumexpAndNothingQuadratic() {
        const int64_t b = 2, h = 3, s = 64, d = 16;
        auto q = at::randn({b, h, s, d}).requires_grad_(true);
        auto k = at::randn({b, h, s, d}).requires_grad_(true);
        auto v = at::randn({b, h, s, d}).requires_grad_(true);
        const at::Tensor out = TiledAttentionFunction::apply(q, k, v, true, 16, 16);
        auto node = std::dynamic_pointer_cast<torch::autograd::CppNode<TiledAttentionFunction>>(
            out.grad_fn());
        QVERIFY(node);
        const auto saved = node->ctx_.get_saved_variables();
        int logsumexps = 0;
        for (const auto& tensor : saved) {
            QVERIFY2(tensor.numel() < s * s * b * h, "a seq² tensor is saved");
            if (tensor.sizes() == at::IntArrayRef{b * h, s}) {
                QCOMPARE(tensor.scalar_type(), at::kFloat);
                ++logsumexps;
            }
        }
        QCOMPARE(logsumexps, 1);
        QCOMPARE(int(saved.size()), 5);  // Q, K, V, O, L
    }

    void tiledPeakMemoryIsASmallFractionOfNaive() {
        const int64_t s = 1024;
        auto peakOf = [&](AttentionBackend& backend) {
            const at::Tensor q = at::randn({1, 4, s, 64}), k = at::randn({1, 4, s, 64}),
                             v = at::randn({1, 4, s, 64}), dOut = at::randn({1, 4, s, 64});
            MemoryWatermark watermark(at::kCPU);
            run(backend, q, k, v, dOut, true);
            return watermark.peakBytes();
        };
        NaiveAttention naive;
        TiledAttention tiled(128, 128);
        const int64_t naivePeak = peakOf(naive);
        const int64_t tiledPeak = peakOf(tiled);
        // naive holds several 4 × 1024² fp32 score matrices (16 MiB each).
        QVERIFY2(naivePeak > 3 * 4 * s * s * 4, qPrintable(QString::number(naivePeak)));
        QVERIFY2(tiledPeak * 4 < naivePeak,
                 qPrintable(QString("tiled %1 vs naive %2").arg(tiledPeak).arg(naivePeak)));
    }

    void modelGivesSameLogitsAndGradientsWithEveryBackend() {
        ModelDims dims = *findPreset("nano");
        dims.vocabSize = 61;
        const at::Tensor tokens = at::randint(61, {2, 24}, at::kLong);
        auto logitsAndGrad = [&](const std::string& backend) {
            at::manual_seed(11);
            TransformerLM model(dims, makeAttentionBackend(backend), at::TensorOptions());
            const at::Tensor logits = model->forward(tokens);
            logits.square().mean().backward();
            return std::pair{logits.detach(),
                             model->named_parameters()["layers.0.attn.q_proj.weight"].grad()};
        };
        const auto [naiveLogits, naiveGrad] = logitsAndGrad("naive");
        for (const char* backend : {"tiled", "sdpa", "sdpa-math"}) {
            const auto [logits, grad] = logitsAndGrad(backend);
            QVERIFY2(maxError(logits, naiveLogits.to(at::kDouble)) < 1e-4, backend);
            QVERIFY2(maxError(grad, naiveGrad.to(at::kDouble)) < 1e-4, backend);
        }
    }

    void everyBackendTrainsTheModelUnderAutocast() {
        for (const char* backend : {"tiled", "sdpa"}) {
            RunConfig config = test::tinyCpuConfig();
            config.attention = backend;
            config.precision = Precision::Bf16;
            const RunResult result = runBenchmark(config);
            QCOMPARE(toString(result.status), std::string("ok"));
            QVERIFY2(std::isfinite(*result.steps.back().loss), backend);
            QVERIFY(*result.steps.back().loss < *result.steps.front().loss);
        }
    }

    void benchmarkPassesTileSizesToTiled() {
        AttentionBenchSpec spec;
        spec.backends = {"tiled"};
        spec.headDims = {16};
        spec.seqLens = {40};
        spec.repeats = 1;
        spec.options.queryTile = 16;
        spec.options.keyTile = 16;
        QCOMPARE(runAttentionBenchmark(spec)[0].status, std::string("ok"));
        spec.options.keyTile = 8;
        QVERIFY_THROWS_EXCEPTION(InvalidConfigError, runAttentionBenchmark(spec));
    }

    void unavailableBackendIsAReasonNotACrash() {
        RunConfig config = test::tinyCpuConfig();
        config.attention = "cuda-flash";
        const RunResult result = runBenchmark(config);
        QCOMPARE(toString(result.status), std::string("unavailable"));
        QVERIFY(result.message.find("cuda-flash") != std::string::npos);
    }

    void benchmarkRecordsEveryPoint() {
        AttentionBenchSpec spec;
        spec.backends = {"naive", "tiled", "cuda-flash"};
        spec.headDims = {16};
        spec.seqLens = {64, 96};
        spec.batch = 2;
        spec.repeats = 2;
        int reported = 0;
        AttentionBenchControl control;
        control.onPoint = [&](const AttentionPoint&, int, int total) {
            ++reported;
            QCOMPARE(total, 6);
        };
        const auto points = runAttentionBenchmark(spec, control);
        QCOMPARE(int(points.size()), 6);
        QCOMPARE(reported, 6);
        for (const auto& p : points) {
            if (p.backend == "cuda-flash") {
                QCOMPARE(p.status, std::string("unavailable"));
                QVERIFY(!p.message.empty());
                continue;
            }
            QCOMPARE(p.status, std::string("ok"));
            QVERIFY(*p.forwardMs > 0 && *p.backwardMs > 0);
            const double flops = 4.0 * 2 * 1 * p.seq * p.seq * 16 / 2;  // causal halves
            QVERIFY(qFuzzyCompare(*p.forwardTflops, flops / (*p.forwardMs / 1000) / 1e12));
            QVERIFY(qFuzzyCompare(*p.backwardTflops, 2.5 * flops / (*p.backwardMs / 1000) / 1e12));
            QCOMPARE(p.scoreMatrixBytes, int64_t{2 * p.seq * p.seq * 4});
            QVERIFY(*p.peakBytes >= *p.memBeforeBackwardBytes);
        }
        // naive keeps the score matrices for backward; tiled does not.
        QVERIFY(*points[3].memBeforeBackwardBytes > *points[4].memBeforeBackwardBytes);
    }

    void sdpaRecordsTheKernelThatRan() {
        AttentionBenchSpec spec;
        spec.backends = {"sdpa", "sdpa-math"};
        spec.headDims = {16};
        spec.seqLens = {32};
        spec.batch = 2;
        spec.repeats = 1;
        const auto points = runAttentionBenchmark(spec);
        QCOMPARE(points[0].status, std::string("ok"));
        QVERIFY2(points[0].kernel == "flash" || points[0].kernel == "math",
                 points[0].kernel.c_str());
        QCOMPARE(points[1].kernel, std::string("math"));
    }

    void benchmarkRecordsWhatCannotFitAsOom() {
        AttentionBenchSpec spec;
        spec.backends = {"naive"};
        spec.headDims = {16};
        spec.seqLens = {512};
        AttentionBenchControl control;
        control.availableMemoryBytes = 1024;
        const auto points = runAttentionBenchmark(spec, control);
        QCOMPARE(points[0].status, std::string("oom"));
        QVERIFY(points[0].message.find("not run") != std::string::npos);
        spec.backends = {"magic"};
        QVERIFY_THROWS_EXCEPTION(InvalidConfigError, runAttentionBenchmark(spec));
    }

    void cudaBackendsOnTheGpu() {
        if (!probeDevices().cudaAvailable) {
            QSKIP("no CUDA device is available on this machine");
        }
        at::manual_seed(3);
        const auto options = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
        const at::Tensor q = at::randn({2, 4, 300, 64}, options),
                         k = at::randn({2, 4, 300, 64}, options),
                         v = at::randn({2, 4, 300, 64}, options),
                         dOut = at::randn({2, 4, 300, 64}, options);
        const Grads expected = reference(q, k, v, dOut, true);
        for (const auto& name : attentionBackendNames()) {
            auto backend = makeAttentionBackend(name);
            if (backend->unavailableReason(q)) {
                continue;
            }
            const Grads actual = run(*backend, q, k, v, dOut, true);
            QVERIFY2(maxError(actual.out, expected.out) < 0.1, name.c_str());
            QVERIFY2(maxError(actual.dq, expected.dq) < 0.1, name.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestAttention)
#include "tst_attention.moc"
