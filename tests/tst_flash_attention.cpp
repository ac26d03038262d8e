// Our FlashAttention-2 CUDA kernels (the cuda-flash backend) against a
// float64 reference computed here: O, L, dQ, dK, dV for every head dim,
// causal and not, ragged and unequal lengths, bf16/fp16/fp32; every output
// poisoned with NaN first (the fill kernel) and checked fully overwritten.
// The GPU cases skip, saying why, without a CUDA device. What the backend
// and the launch API refuse (CPU tensors, head dim 96, a non-contiguous head
// dim, misaligned rows, ...) is checked everywhere, as a reason and never a
// crash.
//
// Tolerances, ‖actual − reference‖ / ‖reference‖ over each whole tensor:
//   fp32 (SIMT, fp32 arithmetic)                              1e-4
//   fp16 (fp16 operands, P and dS rounded to fp16)            5e-3
//   bf16 (bf16 operands, P and dS rounded to bf16)            2e-2
// and the logsumexp L, max |error| (fp32 in every case): 1e-4 for fp32
// inputs, 1e-3 for fp16/bf16 inputs.
#include <QtTest/QtTest>

#include <ATen/ops/isnan.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/triu.h>
#include <torch/cuda.h>

#include <cmath>
#include <random>

#include "attention/attention_backend.h"
#include "attention/cuda_flash_attention.h"
#include "config/model_dims.h"
#include "engines/runner.h"
#include "test_support.h"

#ifdef STEPSCOPE_HAVE_CUDA_KERNELS
#include "attention/attention_registry.h"
#include "stepscope/kernels/fill.h"
#include "stepscope/kernels/flash_attention.h"
#endif

using namespace stepscope;

namespace {

struct Outputs {
    at::Tensor out, lse, dq, dk, dv;
};

// Plain float64 attention with autograd on the CPU, the causal mask aligned
// at the end (query r sees keys up to r + Sk − Sq), as every backend does.
Outputs reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                  const at::Tensor& dOut, bool causal) {
    auto q64 = q.detach().cpu().to(at::kDouble).requires_grad_(true);
    auto k64 = k.detach().cpu().to(at::kDouble).requires_grad_(true);
    auto v64 = v.detach().cpu().to(at::kDouble).requires_grad_(true);
    at::Tensor scores = at::matmul(q64, k64.transpose(-2, -1)) / std::sqrt(double(q.size(-1)));
    if (causal) {
        const int64_t sq = q.size(-2), sk = k.size(-2);
        const at::Tensor future =
            at::triu(at::ones({sq, sk}, at::TensorOptions().dtype(at::kBool)), sk - sq + 1);
        scores = scores.masked_fill(future, -INFINITY);
    }
    const at::Tensor lse = at::logsumexp(scores, -1);
    const at::Tensor out = at::matmul(at::softmax(scores, -1), v64);
    out.backward(dOut.detach().cpu().to(at::kDouble));
    return {out.detach(), lse.detach(), q64.grad(), k64.grad(), v64.grad()};
}

double relativeError(const at::Tensor& actual, const at::Tensor& expected) {
    const at::Tensor a = actual.detach().cpu().to(at::kDouble);
    return (a - expected).norm().item<double>() / expected.norm().item<double>();
}

double maxError(const at::Tensor& actual, const at::Tensor& expected) {
    return (actual.detach().cpu().to(at::kDouble) - expected).abs().max().item<double>();
}

int64_t nanCount(const at::Tensor& t) {
    return at::isnan(t).sum().item<int64_t>();
}

double tolerance(at::ScalarType dtype) {
    return dtype == at::kFloat ? 1e-4 : dtype == at::kHalf ? 5e-3 : 2e-2;
}

double lseTolerance(at::ScalarType dtype) {
    return dtype == at::kFloat ? 1e-4 : 1e-3;
}

at::ScalarType dtypeNamed(const QString& name) {
    return name == "bf16" ? at::kBFloat16 : name == "fp16" ? at::kHalf : at::kFloat;
}

// O, dQ, dK, dV against the reference: no NaN left of the poison, relative
// error under the dtype's tolerance; L (natural log) by max error.
void checkOutputs(at::ScalarType type, const QString& how, const Outputs& actual,
                  const Outputs& expected) {
    const double tol = tolerance(type);
    for (const auto& [name, a, e] :
         {std::tuple{"O", actual.out, expected.out}, std::tuple{"dQ", actual.dq, expected.dq},
          std::tuple{"dK", actual.dk, expected.dk}, std::tuple{"dV", actual.dv, expected.dv}}) {
        const int64_t unwritten = nanCount(a);
        QVERIFY2(unwritten == 0, qPrintable(QString("%1, %2: %3 of %4 elements NaN (unwritten?)")
                                                .arg(how, name)
                                                .arg(unwritten)
                                                .arg(a.numel())));
        const double error = relativeError(a, e);
        QVERIFY2(error < tol, qPrintable(QString("%1, %2: relative error %3 > %4 (max abs %5)")
                                             .arg(how, name)
                                             .arg(error)
                                             .arg(tol)
                                             .arg(maxError(a, e))));
    }
    QCOMPARE(nanCount(actual.lse), int64_t{0});
    const double lseError = maxError(actual.lse, expected.lse);
    QVERIFY2(lseError < lseTolerance(type),
             qPrintable(QString("L: max error %1 > %2 (natural log expected)")
                            .arg(lseError)
                            .arg(lseTolerance(type))));
}

#ifdef STEPSCOPE_HAVE_CUDA_KERNELS
namespace kn = stepscope::kernels;

kn::AttentionDtype kernelDtype(at::ScalarType t) {
    return t == at::kBFloat16 ? kn::AttentionDtype::BFloat16
           : t == at::kHalf   ? kn::AttentionDtype::Float16
                              : kn::AttentionDtype::Float32;
}

kn::Strides strides4(const at::Tensor& t) {
    return {t.stride(0), t.stride(1), t.stride(2)};
}
kn::Strides strides3(const at::Tensor& t) {
    return {t.stride(0), t.stride(1), t.stride(2)};
}

// NaN in every element: 0x7FC0 is a bf16 NaN, 0x7E00 an fp16 one.
void poison(const at::Tensor& t) {
    const uint32_t pattern = t.scalar_type() == at::kBFloat16 ? 0x7FC07FC0u
                             : t.scalar_type() == at::kHalf   ? 0x7E007E00u
                                                              : 0x7FC00000u;
    QCOMPARE(kn::fillWords(t.data_ptr(), t.nbytes() / 4, pattern, nullptr), std::string());
}

// Q, K, V, dO of (B, H, S, D), or (B, S, H, D) transposed to it (the model's layout).
at::Tensor input(int64_t b, int64_t h, int64_t s, int64_t d, at::ScalarType dtype,
                 bool modelLayout) {
    const auto options = at::TensorOptions().device(at::kCUDA).dtype(dtype);
    return modelLayout ? at::randn({b, s, h, d}, options).transpose(1, 2)
                       : at::randn({b, h, s, d}, options);
}
#endif

}  // namespace

class TestFlashAttention : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // ---- Everywhere: what is refused, and why ------------------------------

    void backendRefusesWithAReason() {
        auto backend = makeAttentionBackend("cuda-flash");
        QCOMPARE(backend->name(), std::string("cuda-flash"));
        const at::Tensor cpu = at::randn({1, 2, 8, 64});
        const auto cpuReason = backend->unavailableReason(cpu);
        QVERIFY(cpuReason.has_value());
        qInfo("CPU tensors: %s", cpuReason->c_str());
#ifdef STEPSCOPE_HAVE_CUDA_KERNELS
        QVERIFY2(cpuReason->find("CUDA tensors") != std::string::npos ||
                     cpuReason->find("LibTorch has no CUDA") != std::string::npos,
                 cpuReason->c_str());
#else
        QVERIFY2(cpuReason->find("no CUDA kernels") != std::string::npos, cpuReason->c_str());
#endif
        // Never a silent fallback: forward throws the reason.
        try {
            backend->forward(cpu, cpu, cpu, true);
            QFAIL("cuda-flash ran on CPU tensors");
        } catch (const std::runtime_error& error) {
            QVERIFY2(
                std::string(error.what()).find("cuda-flash is unavailable") != std::string::npos,
                error.what());
        }
    }

    void backendNamesWhatItDoesNotServe() {
#if !defined(STEPSCOPE_HAVE_CUDA_KERNELS)
        QSKIP("the CUDA kernels were not built (no nvcc): every input is refused for that");
#else
        const auto reasonFor = [](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  bool causal) {
            const auto reason = CudaFlashAttention::unsupportedReason(q, k, v, causal);
            return reason ? *reason : std::string();
        };
        if (reasonFor(at::randn({1, 2, 8, 64}), at::randn({1, 2, 8, 64}), at::randn({1, 2, 8, 64}),
                      false)
                .find("LibTorch has no CUDA") != std::string::npos) {
            QSKIP("this build's LibTorch has no CUDA");
        }
        // Shape and dtype come before the device: these hold on the CPU too.
        const at::Tensor d96 = at::randn({1, 2, 8, 96});
        const std::string headDim = reasonFor(d96, d96, d96, true);
        QVERIFY2(headDim.find("head dim 96") != std::string::npos, headDim.c_str());
        const at::Tensor doubles = at::randn({1, 2, 8, 64}, at::kDouble);
        const std::string dtype = reasonFor(doubles, doubles, doubles, true);
        QVERIFY2(dtype.find("Double") != std::string::npos, dtype.c_str());
        // Head dim strided by 2: a non-contiguous inner dim is refused, not copied.
        const at::Tensor strided = at::randn({1, 2, 8, 128}).slice(3, 0, 128, 2);
        const at::Tensor dense = at::randn({1, 2, 8, 64});
        const std::string inner = reasonFor(strided, dense, dense, false);
        QVERIFY2(inner.find("not contiguous") != std::string::npos, inner.c_str());
        const std::string mismatch =
            reasonFor(dense, at::randn({1, 2, 8, 32}), at::randn({1, 2, 8, 32}), false);
        QVERIFY2(mismatch.find("do not fit") != std::string::npos, mismatch.c_str());
        const std::string threeD = reasonFor(at::randn({2, 8, 64}), dense, dense, false);
        QVERIFY2(threeD.find("dimensions") != std::string::npos, threeD.c_str());
#endif
    }

    void launchApiChecksWithoutLaunching() {
#ifndef STEPSCOPE_HAVE_CUDA_KERNELS
        QSKIP("the CUDA kernels were not built (no nvcc)");
#else
        for (int64_t d : {16, 32, 64, 128}) {
            for (auto t : {kn::AttentionDtype::BFloat16, kn::AttentionDtype::Float16,
                           kn::AttentionDtype::Float32}) {
                QVERIFY(kn::flashAttentionSupports(d, t).ok());
                QVERIFY(!kn::flashAttentionConfig(d, t).empty());
            }
        }
        QCOMPARE(kn::toString(kn::flashAttentionSupports(96, kn::AttentionDtype::BFloat16).status),
                 kn::toString(kn::FlashStatus::UnsupportedHeadDim));
        QCOMPARE(kn::toString(kn::flashAttentionSupports(8, kn::AttentionDtype::Float32).status),
                 kn::toString(kn::FlashStatus::UnsupportedHeadDim));

        // Validation looks at addresses, never at memory: stand-in addresses do.
        alignas(16) static unsigned char arena[64];
        kn::FlashForwardParams p;
        p.shape = {2, 3, 100, 120, 64, 0.125f, false, kn::AttentionDtype::BFloat16};
        const kn::Strides qs{3 * 100 * 64, 100 * 64, 64}, ks{3 * 120 * 64, 120 * 64, 64};
        p.q = p.o = arena;
        p.k = p.v = arena;
        p.qStrides = p.oStrides = qs;
        p.kStrides = p.vStrides = ks;
        p.logsumexp = reinterpret_cast<float*>(arena);
        p.lseStrides = {300, 100, 1};
        QVERIFY2(kn::flashAttentionValidate(p).ok(), kn::flashAttentionValidate(p).message.c_str());

        kn::FlashForwardParams bad = p;
        bad.shape.headDim = 96;
        QCOMPARE(kn::toString(kn::flashAttentionValidate(bad).status),
                 kn::toString(kn::FlashStatus::UnsupportedHeadDim));
        QVERIFY(kn::flashAttentionValidate(bad).message.find("96") != std::string::npos);
        bad = p;
        bad.k = arena + 2;  // rows must start on 16 bytes for cp.async
        QCOMPARE(kn::toString(kn::flashAttentionValidate(bad).status),
                 kn::toString(kn::FlashStatus::BadLayout));
        bad = p;
        bad.qStrides.row = 68;  // 136 bytes: not a multiple of 16
        QCOMPARE(kn::toString(kn::flashAttentionValidate(bad).status),
                 kn::toString(kn::FlashStatus::BadLayout));
        bad.shape.dtype = kn::AttentionDtype::Float32;  // fp32 needs only 4-byte alignment
        QVERIFY(kn::flashAttentionValidate(bad).ok());
        bad = p;
        bad.v = nullptr;
        QCOMPARE(kn::toString(kn::flashAttentionValidate(bad).status),
                 kn::toString(kn::FlashStatus::InvalidArgument));
        bad = p;
        bad.shape.causal = true;
        bad.shape.queryLength = 130;  // more queries than keys: first rows see nothing
        QCOMPARE(kn::toString(kn::flashAttentionValidate(bad).status),
                 kn::toString(kn::FlashStatus::InvalidArgument));
        bad = p;
        bad.shape.keyLength = 0;
        QCOMPARE(kn::toString(kn::flashAttentionValidate(bad).status),
                 kn::toString(kn::FlashStatus::InvalidArgument));
        bad = p;
        bad.shape.softmaxScale = -1.f;
        QCOMPARE(kn::toString(kn::flashAttentionValidate(bad).status),
                 kn::toString(kn::FlashStatus::InvalidArgument));

        kn::FlashBackwardParams b;
        b.shape = p.shape;
        b.q = b.k = b.v = b.o = b.dO = arena;
        b.dQ = b.dK = b.dV = arena;
        b.qStrides = b.oStrides = b.dOStrides = b.dQStrides = qs;
        b.kStrides = b.vStrides = b.dKStrides = b.dVStrides = ks;
        b.logsumexp = reinterpret_cast<const float*>(arena);
        b.lseStrides = p.lseStrides;
        QCOMPARE(kn::toString(kn::flashAttentionValidate(b).status),
                 kn::toString(kn::FlashStatus::InvalidArgument));
        b.workspace = arena;
        QVERIFY(kn::flashAttentionValidate(b).ok());
        // D (2·3·100 fp32) and, for bf16, the fp32 dQ accumulator (2·3·100·64).
        QCOMPARE(kn::flashAttentionBackwardWorkspaceBytes(b.shape),
                 std::size_t(600 + 600 * 64) * 4);
        b.shape.dtype = kn::AttentionDtype::Float32;
        QCOMPARE(kn::flashAttentionBackwardWorkspaceBytes(b.shape), std::size_t(600) * 4);
        QCOMPARE(kn::toString(kn::FlashStatus::BadLayout), std::string("bad layout"));
#endif
    }

    // ---- On the GPU ------------------------------------------------------------

    void kernelsMatchFloat64Reference_data() {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<int>("d");
        QTest::addColumn<int>("sq");
        QTest::addColumn<int>("sk");
        QTest::addColumn<bool>("causal");
        QTest::addColumn<bool>("modelLayout");
        for (const char* dtype : {"bf16", "fp16", "fp32"}) {
            for (int d : {16, 32, 64, 128}) {
                const QString p = QString("%1 d%2 ").arg(dtype).arg(d);
                QTest::newRow(qPrintable(p + "causal 128"))
                    << dtype << d << 128 << 128 << true << false;
                QTest::newRow(qPrintable(p + "causal 77 ragged"))
                    << dtype << d << 77 << 77 << true << true;
                QTest::newRow(qPrintable(p + "full 50x200"))
                    << dtype << d << 50 << 200 << false << false;
                QTest::newRow(qPrintable(p + "full 200x37"))
                    << dtype << d << 200 << 37 << false << true;
                QTest::newRow(qPrintable(p + "causal 70x130"))
                    << dtype << d << 70 << 130 << true << false;
                QTest::newRow(qPrintable(p + "full 1x40"))
                    << dtype << d << 1 << 40 << false << false;
            }
        }
    }

    // The launch API directly: outputs poisoned, then every element checked.
    void kernelsMatchFloat64Reference() {
#ifndef STEPSCOPE_HAVE_CUDA_KERNELS
        QSKIP("the CUDA kernels were not built (no nvcc)");
#else
        if (!torch::cuda::is_available()) {
            QSKIP("no CUDA device is available on this machine");
        }
        QFETCH(QString, dtype);
        QFETCH(int, d);
        QFETCH(int, sq);
        QFETCH(int, sk);
        QFETCH(bool, causal);
        QFETCH(bool, modelLayout);
        const at::ScalarType type = dtypeNamed(dtype);
        const int64_t b = 2, h = 3;
        const uint64_t seed = std::random_device{}();  // fresh inputs on every run
        at::manual_seed(seed);
        const at::Tensor q = input(b, h, sq, d, type, modelLayout);
        const at::Tensor k = input(b, h, sk, d, type, modelLayout);
        const at::Tensor v = input(b, h, sk, d, type, modelLayout);
        const at::Tensor dOut = input(b, h, sq, d, type, false);
        const auto options = q.options();
        at::Tensor out = at::empty({b, h, sq, d}, options);
        at::Tensor lse = at::empty({b, h, sq}, options.dtype(at::kFloat));
        at::Tensor dq = at::empty({b, h, sq, d}, options);
        at::Tensor dk = at::empty({b, h, sk, d}, options);
        at::Tensor dv = at::empty({b, h, sk, d}, options);
        for (const at::Tensor& t : {out, lse, dq, dk, dv}) {
            poison(t);
        }

        kn::FlashShape shape{b,      h,
                             sq,     sk,
                             d,      static_cast<float>(1.0 / std::sqrt(double(d))),
                             causal, kernelDtype(type)};
        kn::FlashForwardParams f;
        f.shape = shape;
        f.q = q.data_ptr(), f.qStrides = strides4(q);
        f.k = k.data_ptr(), f.kStrides = strides4(k);
        f.v = v.data_ptr(), f.vStrides = strides4(v);
        f.o = out.data_ptr(), f.oStrides = strides4(out);
        f.logsumexp = lse.data_ptr<float>(), f.lseStrides = strides3(lse);
        const kn::FlashResult forward = kn::flashAttentionForward(f);
        QVERIFY2(forward.ok(), forward.message.c_str());

        const at::Tensor workspace = at::empty(
            {int64_t(kn::flashAttentionBackwardWorkspaceBytes(shape))}, options.dtype(at::kByte));
        kn::FlashBackwardParams g;
        g.shape = shape;
        g.q = f.q, g.qStrides = f.qStrides, g.k = f.k, g.kStrides = f.kStrides;
        g.v = f.v, g.vStrides = f.vStrides, g.o = f.o, g.oStrides = f.oStrides;
        g.logsumexp = f.logsumexp, g.lseStrides = f.lseStrides;
        g.dO = dOut.data_ptr(), g.dOStrides = strides4(dOut);
        g.dQ = dq.data_ptr(), g.dQStrides = strides4(dq);
        g.dK = dk.data_ptr(), g.dKStrides = strides4(dk);
        g.dV = dv.data_ptr(), g.dVStrides = strides4(dv);
        g.workspace = workspace.data_ptr();
        // Both ways of computing dQ (fp32 has only its separate pass), each
        // on freshly poisoned gradients.
        const Outputs expected = reference(q, k, v, dOut, causal);
        for (kn::DqStrategy strategy : {kn::DqStrategy::Atomics, kn::DqStrategy::SeparatePass}) {
            for (const at::Tensor& t : {dq, dk, dv}) {
                poison(t);
            }
            g.dqStrategy = strategy;
            const kn::FlashResult backward = kn::flashAttentionBackward(g);
            QVERIFY2(backward.ok(), backward.message.c_str());
            torch::cuda::synchronize();
            const QString how =
                strategy == kn::DqStrategy::Atomics ? "dQ by atomics" : "dQ by a separate pass";
            checkOutputs(type, how, {out, lse, dq, dk, dv}, expected);
            if (QTest::currentTestFailed()) {
                qWarning("the inputs were drawn with seed %llu", (unsigned long long)seed);
                return;
            }
        }
#endif
    }

    // Through the backend and autograd, in the model's (B, S, H, D) layout.
    void backendMatchesReferenceThroughAutograd_data() {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<int>("d");
        for (const char* dtype : {"bf16", "fp16", "fp32"}) {
            for (int d : {16, 64, 128}) {
                QTest::newRow(qPrintable(QString("%1 d%2").arg(dtype).arg(d))) << dtype << d;
            }
        }
    }

    void backendMatchesReferenceThroughAutograd() {
        if (!torch::cuda::is_available()) {
            QSKIP("no CUDA device is available on this machine");
        }
        QFETCH(QString, dtype);
        QFETCH(int, d);
        const at::ScalarType type = dtypeNamed(dtype);
        auto backend = makeAttentionBackend("cuda-flash");
        const auto options = at::TensorOptions().device(at::kCUDA).dtype(type);
        at::manual_seed(std::random_device{}());
        const int64_t b = 2, h = 4, s = 300;
        auto modelLayout = [&] {
            return at::randn({b, s, h, d}, options).transpose(1, 2).detach().requires_grad_(true);
        };
        const at::Tensor q = modelLayout(), k = modelLayout(), v = modelLayout();
        if (const auto reason = backend->unavailableReason(q)) {
            QFAIL(reason->c_str());  // a GPU with our kernels built serves this
        }
        const at::Tensor dOut = at::randn({b, h, s, d}, options);
        const at::Tensor out = backend->forward(q, k, v, true);
        QCOMPARE(out.scalar_type(), type);

        // Saved for backward: Q, K, V, O and L only, nothing of size seq². Read
        // before the backward, which frees them.
        auto node = std::dynamic_pointer_cast<torch::autograd::CppNode<CudaFlashAttentionFunction>>(
            out.grad_fn());
        QVERIFY(node);
        const auto saved = node->ctx_.get_saved_variables();
        QCOMPARE(int(saved.size()), 5);
        for (const auto& tensor : saved) {
            QVERIFY(tensor.numel() <= b * h * s * d);
        }
        out.backward(dOut);

        const Outputs expected = reference(q, k, v, dOut, true);
        const double tol = tolerance(type);
        for (const auto& [name, actual, wanted] :
             {std::tuple{"O", out, expected.out}, std::tuple{"dQ", q.grad(), expected.dq},
              std::tuple{"dK", k.grad(), expected.dk}, std::tuple{"dV", v.grad(), expected.dv}}) {
            const double error = relativeError(actual, wanted);
            QVERIFY2(
                error < tol,
                qPrintable(QString("%1: relative error %2 > %3").arg(name).arg(error).arg(tol)));
        }
    }

    void backendRefusesHeadDim96OnTheGpu() {
        if (!torch::cuda::is_available()) {
            QSKIP("no CUDA device is available on this machine");
        }
        auto backend = makeAttentionBackend("cuda-flash");
        const at::Tensor q = at::randn({1, 2, 64, 96}, at::TensorOptions().device(at::kCUDA));
        const auto reason = backend->unavailableReason(q);
        QVERIFY(reason.has_value());
        QVERIFY2(reason->find("96") != std::string::npos, reason->c_str());
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, backend->forward(q, q, q, true));
        // A misaligned row (head stride of 8 bf16 elements on a 1-element offset) is a reason too.
        const at::Tensor wide =
            at::randn({1, 2, 64, 72}, at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16));
        const at::Tensor shifted = wide.narrow(3, 1, 64);
        const auto layout = CudaFlashAttention::unsupportedReason(shifted, shifted, shifted, false);
        QVERIFY(layout.has_value());
        QVERIFY2(layout->find("16 bytes") != std::string::npos, layout->c_str());
    }

    // The proof: nano trained 20 steps with cuda-flash tracks naive's
    // loss (same seed, bf16) within 0.05 per step.
    void modelTrainsLikeNaive() {
        if (!torch::cuda::is_available()) {
            QSKIP("no CUDA device is available on this machine");
        }
        auto losses = [](const std::string& attention) {
            RunConfig config = test::tinyCpuConfig();  // nano: head dim 16
            config.device = DeviceKind::Cuda;
            config.precision = Precision::Bf16;
            config.mode = RunMode::TrainStep;
            config.contextLength = 128;
            config.batchSize = 4;
            config.warmupSteps = 0;
            config.measuredSteps = 20;
            config.seed = 7;
            config.attention = attention;
            const RunResult result = runBenchmark(config);
            std::vector<double> out;
            if (toString(result.status) != "ok") {
                qWarning("%s: %s", attention.c_str(), result.message.c_str());
                return out;
            }
            for (const auto& step : result.steps) {
                out.push_back(*step.loss);
            }
            return out;
        };
        const std::vector<double> naive = losses("naive");
        const std::vector<double> flash = losses("cuda-flash");
        QCOMPARE(int(flash.size()), 20);
        QCOMPARE(int(naive.size()), 20);
        for (int i = 0; i < 20; ++i) {
            QVERIFY2(std::abs(flash[i] - naive[i]) < 0.05,
                     qPrintable(QString("step %1: cuda-flash %2, naive %3")
                                    .arg(i)
                                    .arg(flash[i])
                                    .arg(naive[i])));
        }
        QVERIFY(flash.back() < flash.front());
    }
};

QTEST_GUILESS_MAIN(TestFlashAttention)
#include "tst_flash_attention.moc"
