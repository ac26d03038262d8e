#pragma once

#include <torch/csrc/autograd/custom_function.h>

#include "attention/attention_backend.h"

namespace stepscope {

// FlashAttention-2 written with ATen operations. Forward walks query tiles ×
// key tiles with a running row max and row sum (online softmax), rescaling
// the output as tiles arrive; it saves Q, K, V, O and the logsumexp L = m +
// log(l) (fp32, one value per query row) and nothing of size seq². Backward
// recomputes P from L and uses D = rowsum(dO ∘ O). Causal skips tiles wholly
// above the diagonal. Works on any device.
struct TiledAttentionFunction : public torch::autograd::Function<TiledAttentionFunction> {
    // q: (B, H, Sq, D); k, v: (B, H, Sk, D).
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& q,
                              const at::Tensor& k, const at::Tensor& v, bool causal,
                              int64_t queryTile, int64_t keyTile);
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list gradOutputs);
};

class TiledAttention final : public AttentionBackend {
public:
    static constexpr int64_t kMinTile = 16;
    explicit TiledAttention(int64_t queryTile = 128, int64_t keyTile = 128);
    std::string name() const override { return "tiled"; }
    at::Tensor forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       bool causal) override;

private:
    int64_t queryTile_;
    int64_t keyTile_;
};

}  // namespace stepscope
