#pragma once

#include "attention/attention_backend.h"

namespace stepscope {

// LibTorch's fused at::scaled_dot_product_attention. `choice` restricts it to
// one of its kernels (flash, efficient, math, cudnn) or leaves it to choose
// (auto); lastChoice() says which kernel the last call used.
class SdpaAttention final : public AttentionBackend {
public:
    enum class Choice { Auto, Flash, Efficient, Math, CuDnn };
    static std::string toString(Choice choice);  // "auto", "flash", …

    explicit SdpaAttention(Choice choice = Choice::Auto);
    std::string name() const override;
    std::optional<std::string> unavailableReason(const at::Tensor& q) const override;
    at::Tensor forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       bool causal) override;
    std::string lastChoice() const { return lastChoice_; }

private:
    Choice choice_;
    std::string lastChoice_;
};

}  // namespace stepscope
