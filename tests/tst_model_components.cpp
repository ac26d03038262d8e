// The model's building blocks against straightforward loops in double
// precision, and the causality of the whole model.
#include <QtTest/QtTest>

#include <ATen/TensorIndexing.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

#include "attention/attention_registry.h"
#include "attention/naive_attention.h"
#include "model/transformer.h"

using namespace stepscope;

namespace {
const auto kFloat = at::TensorOptions().dtype(at::kFloat);

void expectClose(const at::Tensor& actual, const at::Tensor& expected, double tolerance = 1e-5) {
    QCOMPARE(actual.sizes().vec(), expected.sizes().vec());
    const double error = (actual.to(at::kDouble) - expected).abs().max().item<double>();
    if (error > tolerance) {
        QFAIL(qPrintable(QString("max abs error %1 > %2").arg(error).arg(tolerance)));
    }
}
}  // namespace

class TestModelComponents : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init() { at::manual_seed(1234); }

    void rmsNormMatchesLoop() {
        c10::InferenceMode guard;
        RMSNorm norm(6, kFloat);
        norm->weight.copy_(at::randn({6}));
        const at::Tensor x = at::randn({3, 4, 6});
        at::Tensor expected = at::zeros({3, 4, 6}, at::kDouble);
        auto xa = x.accessor<float, 3>();
        auto wa = norm->weight.accessor<float, 1>();
        auto ea = expected.accessor<double, 3>();
        for (int b = 0; b < 3; ++b) {
            for (int t = 0; t < 4; ++t) {
                double squares = 0;
                for (int i = 0; i < 6; ++i) {
                    squares += double(xa[b][t][i]) * xa[b][t][i];
                }
                const double rms = std::sqrt(squares / 6 + 1e-5);
                for (int i = 0; i < 6; ++i) {
                    ea[b][t][i] = xa[b][t][i] / rms * wa[i];
                }
            }
        }
        expectClose(norm->forward(x), expected);
    }

    void rmsNormKeepsLowPrecisionInputType() {
        c10::InferenceMode guard;
        RMSNorm norm(8, kFloat);
        QCOMPARE(norm->forward(at::randn({2, 8}).to(at::kBFloat16)).scalar_type(), at::kBFloat16);
    }

    void ropeMatchesLoopOnAdjacentPairs() {
        c10::InferenceMode guard;
        const int64_t d = 8, seq = 5, maxContext = 16;
        const double theta = 10000.0;
        RotaryEmbedding rope(d, maxContext, theta, kFloat);
        const at::Tensor x = at::randn({2, seq, d});
        const at::Tensor positions = at::arange(3, 3 + seq, at::kLong);  // not starting at 0
        at::Tensor expected = at::zeros({2, seq, d}, at::kDouble);
        auto xa = x.accessor<float, 3>();
        auto ea = expected.accessor<double, 3>();
        for (int h = 0; h < 2; ++h) {
            for (int t = 0; t < seq; ++t) {
                const double position = 3 + t;
                for (int i = 0; i < d / 2; ++i) {
                    const double angle = position / std::pow(theta, 2.0 * i / d);
                    const double a = xa[h][t][2 * i], b = xa[h][t][2 * i + 1];
                    ea[h][t][2 * i] = a * std::cos(angle) - b * std::sin(angle);
                    ea[h][t][2 * i + 1] = a * std::sin(angle) + b * std::cos(angle);
                }
            }
        }
        expectClose(rope.apply(x, positions), expected);
    }

    void swigluMatchesLoop() {
        c10::InferenceMode guard;
        const int64_t d = 5, ff = 7;
        SwiGLU ffn(d, ff, kFloat);
        const at::Tensor x = at::randn({3, d});
        at::Tensor expected = at::zeros({3, d}, at::kDouble);
        auto xa = x.accessor<float, 2>();
        auto w1 = ffn->w1->weight.accessor<float, 2>();
        auto w2 = ffn->w2->weight.accessor<float, 2>();
        auto w3 = ffn->w3->weight.accessor<float, 2>();
        auto ea = expected.accessor<double, 2>();
        for (int r = 0; r < 3; ++r) {
            std::vector<double> hidden(ff);
            for (int j = 0; j < ff; ++j) {
                double a = 0, g = 0;
                for (int i = 0; i < d; ++i) {
                    a += double(w1[j][i]) * xa[r][i];
                    g += double(w3[j][i]) * xa[r][i];
                }
                hidden[j] = a / (1 + std::exp(-a)) * g;
            }
            for (int o = 0; o < d; ++o) {
                for (int j = 0; j < ff; ++j) {
                    ea[r][o] += double(w2[o][j]) * hidden[j];
                }
            }
        }
        expectClose(ffn->forward(x), expected);
    }

    void naiveAttentionMatchesLoop() {
        c10::InferenceMode guard;
        const int64_t seq = 6, d = 4;
        const at::Tensor q = at::randn({1, 1, seq, d}), k = at::randn({1, 1, seq, d}),
                         v = at::randn({1, 1, seq, d});
        at::Tensor expected = at::zeros({1, 1, seq, d}, at::kDouble);
        auto qa = q.accessor<float, 4>(), ka = k.accessor<float, 4>(), va = v.accessor<float, 4>();
        auto ea = expected.accessor<double, 4>();
        for (int i = 0; i < seq; ++i) {
            std::vector<double> weights(i + 1);
            double max = -1e300, sum = 0;
            for (int j = 0; j <= i; ++j) {
                double s = 0;
                for (int c = 0; c < d; ++c) {
                    s += double(qa[0][0][i][c]) * ka[0][0][j][c];
                }
                weights[j] = s / std::sqrt(double(d));
                max = std::max(max, weights[j]);
            }
            for (auto& w : weights) {
                w = std::exp(w - max);
                sum += w;
            }
            for (int j = 0; j <= i; ++j) {
                for (int c = 0; c < d; ++c) {
                    ea[0][0][i][c] += weights[j] / sum * va[0][0][j][c];
                }
            }
        }
        NaiveAttention attention;
        expectClose(attention.forward(q, k, v, /*causal=*/true), expected);
    }

    void changingTokenTNeverChangesEarlierLogits() {
        c10::InferenceMode guard;
        ModelDims dims = *findPreset("nano");
        dims.vocabSize = 50;
        TransformerLM model(dims, makeAttentionBackend("naive"), kFloat);
        const at::Tensor tokens = at::randint(50, {2, 12}, at::kLong);
        const at::Tensor before = model->forward(tokens);
        for (int64_t t : {0, 5, 11}) {
            at::Tensor changed = tokens.clone();
            changed.index_put_({at::indexing::Slice(), t}, (tokens.select(1, t) + 1) % 50);
            const at::Tensor after = model->forward(changed);
            if (t > 0) {
                QVERIFY(at::equal(before.narrow(1, 0, t), after.narrow(1, 0, t)));
            }
            QVERIFY(!at::allclose(before.narrow(1, t, 1), after.narrow(1, t, 1)));
        }
    }

    void initialisationIsTruncatedNormal() {
        c10::InferenceMode guard;
        Linear linear(300, 500, kFloat);
        const double std = std::sqrt(2.0 / 800.0);
        const at::Tensor w = linear->weight;
        QVERIFY(w.abs().max().item<double>() <= 3 * std + 1e-7);
        // Truncation at ±3σ shrinks the standard deviation by about 1.3%.
        const double measured = w.std().item<double>();
        QVERIFY2(std::abs(measured / std - 0.9866) < 0.01, qPrintable(QString::number(measured)));
        QVERIFY(std::abs(w.mean().item<double>()) < 0.01 * std);

        RMSNorm norm(16, kFloat);
        QVERIFY(at::equal(norm->weight, at::ones({16})));
        Embedding embedding(1000, 64, kFloat);
        QVERIFY(std::abs(embedding->weight.std().item<double>() - 0.9866) < 0.01);
        QVERIFY(embedding->weight.abs().max().item<double>() <= 3.0);
    }
};

QTEST_GUILESS_MAIN(TestModelComponents)
#include "tst_model_components.moc"
