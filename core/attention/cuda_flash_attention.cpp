#include "attention/cuda_flash_attention.h"

#include <ATen/ops/empty.h>

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#ifdef STEPSCOPE_CUDA_FLASH
#include <ATen/cuda/CUDAContextLight.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "stepscope/kernels/flash_attention.h"
#endif

namespace stepscope {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

#ifndef STEPSCOPE_CUDA_FLASH

std::optional<std::string> CudaFlashAttention::unsupportedReason(const at::Tensor&,
                                                                 const at::Tensor&,
                                                                 const at::Tensor&, bool) {
#ifndef STEPSCOPE_HAVE_CUDA_KERNELS
    return "this build has no CUDA kernels (nvcc was not found when it was configured)";
#else
    return "this build's LibTorch has no CUDA, which our CUDA kernels need";
#endif
}

at::Tensor CudaFlashAttentionFunction::forward(AutogradContext*, const at::Tensor& q,
                                               const at::Tensor& k, const at::Tensor& v,
                                               bool causal) {
    throw std::runtime_error("attention: cuda-flash is unavailable: " +
                             *CudaFlashAttention::unsupportedReason(q, k, v, causal));
}

variable_list CudaFlashAttentionFunction::backward(AutogradContext*, variable_list) {
    throw std::runtime_error("attention: cuda-flash is unavailable in this build");
}

#else

namespace {

namespace kn = stepscope::kernels;

std::optional<kn::AttentionDtype> dtypeOf(at::ScalarType type) {
    switch (type) {
        case at::kBFloat16:
            return kn::AttentionDtype::BFloat16;
        case at::kHalf:
            return kn::AttentionDtype::Float16;
        case at::kFloat:
            return kn::AttentionDtype::Float32;
        default:
            return std::nullopt;
    }
}

kn::Strides stridesOf(const at::Tensor& t) {  // (B, H, S, D)
    return {t.stride(0), t.stride(1), t.stride(2)};
}

kn::Strides lseStridesOf(const at::Tensor& lse) {  // (B, H, S)
    return {lse.stride(0), lse.stride(1), lse.stride(2)};
}

kn::FlashShape shapeOf(const at::Tensor& q, const at::Tensor& k, bool causal) {
    kn::FlashShape shape;
    shape.batch = q.size(0);
    shape.heads = q.size(1);
    shape.queryLength = q.size(2);
    shape.keyLength = k.size(2);
    shape.headDim = q.size(3);
    shape.softmaxScale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(q.size(3))));
    shape.causal = causal;
    shape.dtype = *dtypeOf(q.scalar_type());
    return shape;
}

// STEPSCOPE_FLASH_DQ=atomics|pass picks how the bf16/fp16 backward computes
// dQ, so that both can be timed through `attention` in one build (issue 11:
// measure both, keep the faster); unset or anything else: the kernels' default.
kn::DqStrategy dqStrategyFromEnvironment() {
    const char* value = std::getenv("STEPSCOPE_FLASH_DQ");
    const std::string choice = value ? value : "";
    return choice == "atomics" ? kn::DqStrategy::Atomics
           : choice == "pass"  ? kn::DqStrategy::SeparatePass
                               : kn::DqStrategy::Default;
}

CUstream_st* currentStream(const at::Tensor& t) {
    return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

// The shape and Q, K, V: what every launch's parameters start from.
template <typename Params>
void setInputs(Params& p, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
               bool causal) {
    p.shape = shapeOf(q, k, causal);
    p.q = q.data_ptr();
    p.qStrides = stridesOf(q);
    p.k = k.data_ptr();
    p.kStrides = stridesOf(k);
    p.v = v.data_ptr();
    p.vStrides = stridesOf(v);
}

// What the forward's and the backward's launch parameters share: the
// inputs, the output and its logsumexp, and the stream.
template <typename Params>
void setForwardTensors(Params& p, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       const at::Tensor& out, const at::Tensor& lse, bool causal) {
    setInputs(p, q, k, v, causal);
    p.o = out.data_ptr();
    p.oStrides = stridesOf(out);
    p.logsumexp = lse.data_ptr<float>();
    p.lseStrides = lseStridesOf(lse);
    p.stream = currentStream(q);
}

}  // namespace

std::optional<std::string> CudaFlashAttention::unsupportedReason(const at::Tensor& q,
                                                                 const at::Tensor& k,
                                                                 const at::Tensor& v, bool causal) {
    // What is wrong with the inputs themselves comes first, then where they are.
    for (const at::Tensor* t : {&q, &k, &v}) {
        if (!t->defined()) {
            return "an input is undefined";
        }
        if (t->dim() != 4) {
            return "inputs must be (batch, heads, seq, head_dim), got " + std::to_string(t->dim()) +
                   " dimensions";
        }
    }
    if (k.scalar_type() != q.scalar_type() || v.scalar_type() != q.scalar_type()) {
        return "q, k and v have different dtypes";
    }
    const auto dtype = dtypeOf(q.scalar_type());
    if (!dtype) {
        return "dtype " + std::string(c10::toString(q.scalar_type())) +
               " is not served (bf16, fp16 or fp32)";
    }
    if (const kn::FlashResult r = kn::flashAttentionSupports(q.size(3), *dtype); !r.ok()) {
        return r.message;
    }
    if (k.size(0) != q.size(0) || k.size(1) != q.size(1) || k.size(3) != q.size(3) ||
        v.sizes() != k.sizes()) {
        return "q (B, H, Sq, D), k and v (B, H, Sk, D) do not fit together";
    }
    for (const auto& [name, t] : {std::pair{"q", &q}, std::pair{"k", &k}, std::pair{"v", &v}}) {
        if (t->stride(3) != 1) {
            return std::string("the head dim of ") + name + " is not contiguous (stride " +
                   std::to_string(t->stride(3)) + "); our kernels read whole rows, and a " +
                   "hidden copy would distort what is measured";
        }
    }
    for (const at::Tensor* t : {&q, &k, &v}) {
        if (!t->is_cuda()) {
            return "our CUDA kernels need CUDA tensors; these are on " + t->device().str();
        }
    }
    if (k.device() != q.device() || v.device() != q.device()) {
        return "q, k and v are on different devices";
    }
    const auto* properties = at::cuda::getDeviceProperties(q.device().index());
    if (properties->major < 8) {
        return "our kernels need compute capability 8.0 or newer (mma.sync bf16, cp.async); " +
               std::string(properties->name) + " is " + std::to_string(properties->major) + "." +
               std::to_string(properties->minor);
    }
    // What the launch itself would refuse (alignment, lengths, grid limits):
    // asked of the API without launching, on stand-in outputs.
    kn::FlashForwardParams p;
    setInputs(p, q, k, v, causal);
    p.o = q.data_ptr();  // outputs are fresh, contiguous and aligned: q's layout stands in
    p.oStrides = p.qStrides;
    float standIn = 0.f;
    p.logsumexp = &standIn;
    if (const kn::FlashResult r = kn::flashAttentionValidate(p); !r.ok()) {
        return r.message;
    }
    return std::nullopt;
}

at::Tensor CudaFlashAttentionFunction::forward(AutogradContext* ctx, const at::Tensor& q,
                                               const at::Tensor& k, const at::Tensor& v,
                                               bool causal) {
    const c10::cuda::CUDAGuard guard(q.device());
    const int64_t batch = q.size(0), heads = q.size(1), sq = q.size(2);
    at::Tensor out = at::empty(q.sizes(), q.options());
    at::Tensor lse = at::empty({batch, heads, sq}, q.options().dtype(at::kFloat));
    kn::FlashForwardParams p;
    setForwardTensors(p, q, k, v, out, lse, causal);
    if (const kn::FlashResult r = kn::flashAttentionForward(p); !r.ok()) {
        throw std::runtime_error("attention: cuda-flash forward: " + r.message);
    }
    ctx->save_for_backward({q, k, v, out, lse});
    ctx->saved_data["causal"] = causal;
    return out;
}

variable_list CudaFlashAttentionFunction::backward(AutogradContext* ctx,
                                                   variable_list gradOutputs) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& q = saved[0];
    const at::Tensor& k = saved[1];
    const at::Tensor& v = saved[2];
    const at::Tensor& out = saved[3];
    const at::Tensor& lse = saved[4];
    const bool causal = ctx->saved_data["causal"].toBool();
    const c10::cuda::CUDAGuard guard(q.device());
    // dO is autograd's, not the user's: a fresh contiguous copy in q's dtype
    // when it arrives otherwise costs nothing the user chose.
    const at::Tensor dOut = gradOutputs[0].to(q.scalar_type()).contiguous();
    at::Tensor dq = at::empty(q.sizes(), q.options());
    at::Tensor dk = at::empty(k.sizes(), k.options());
    at::Tensor dv = at::empty(v.sizes(), v.options());
    kn::FlashBackwardParams p;
    setForwardTensors(p, q, k, v, out, lse, causal);
    p.dO = dOut.data_ptr();
    p.dOStrides = stridesOf(dOut);
    p.dQ = dq.data_ptr();
    p.dQStrides = stridesOf(dq);
    p.dK = dk.data_ptr();
    p.dKStrides = stridesOf(dk);
    p.dV = dv.data_ptr();
    p.dVStrides = stridesOf(dv);
    const at::Tensor workspace =
        at::empty({static_cast<int64_t>(kn::flashAttentionBackwardWorkspaceBytes(p.shape))},
                  q.options().dtype(at::kByte));
    p.workspace = workspace.data_ptr();
    p.dqStrategy = dqStrategyFromEnvironment();
    if (const kn::FlashResult r = kn::flashAttentionBackward(p); !r.ok()) {
        throw std::runtime_error("attention: cuda-flash backward: " + r.message);
    }
    return {dq, dk, dv, at::Tensor()};
}

#endif

std::optional<std::string> CudaFlashAttention::unavailableReason(const at::Tensor& q) const {
    return unsupportedReason(q, q, q, /*causal=*/false);
}

at::Tensor CudaFlashAttention::forward(const at::Tensor& q, const at::Tensor& k,
                                       const at::Tensor& v, bool causal) {
    if (const auto reason = unsupportedReason(q, k, v, causal)) {
        throw std::runtime_error("attention: cuda-flash is unavailable: " + *reason);
    }
    return CudaFlashAttentionFunction::apply(q, k, v, causal);
}

}  // namespace stepscope
