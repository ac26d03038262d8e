#pragma once

#include <torch/csrc/autograd/custom_function.h>

#include "attention/attention_backend.h"

namespace stepscope {

// Our CUDA FlashAttention-2 kernels (kernels/include/stepscope/kernels/
// flash_attention.h) as an autograd Function: forward launches the forward
// kernel and saves Q, K, V, O and the logsumexp L (fp32, one value per query
// row) and nothing of size seq²; backward launches the backward kernels.
// bf16 and fp16 run on the tensor cores, fp32 on a SIMT path; head dims 16,
// 32, 64 and 128; CUDA tensors whose head-dim stride is 1.
//
// Not yet run on a GPU (written on a machine without one); the GPU tests in
// tests/tst_flash_attention.cpp prove it there.
struct CudaFlashAttentionFunction : public torch::autograd::Function<CudaFlashAttentionFunction> {
    // q: (B, H, Sq, D); k, v: (B, H, Sk, D). Call only with inputs for which
    // CudaFlashAttention::unsupportedReason says nothing.
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& q,
                              const at::Tensor& k, const at::Tensor& v, bool causal);
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list gradOutputs);
};

class CudaFlashAttention final : public AttentionBackend {
public:
    std::string name() const override { return "cuda-flash"; }
    // The reasons below for q alone (as k and v), e.g. for a run's probe.
    std::optional<std::string> unavailableReason(const at::Tensor& q) const override;
    // Why the kernels cannot serve these inputs: a build without them, CPU
    // tensors, a GPU older than sm_80, a dtype other than bf16/fp16/fp32, a
    // head dim other than 16/32/64/128, a head-dim stride other than 1 or a
    // misaligned tensor, mismatched shapes. Nothing is ever copied or run
    // elsewhere instead.
    static std::optional<std::string> unsupportedReason(const at::Tensor& q, const at::Tensor& k,
                                                        const at::Tensor& v, bool causal);
    // Throws std::runtime_error("attention: cuda-flash is unavailable: <reason>")
    // for inputs it does not serve.
    at::Tensor forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       bool causal) override;
};

}  // namespace stepscope
