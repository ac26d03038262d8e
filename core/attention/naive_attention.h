#pragma once

#include "attention/attention_backend.h"

namespace stepscope {

// The reference model's attention: the seq × seq score matrix materialised,
// causal positions masked with -inf, softmax, times v.
class NaiveAttention final : public AttentionBackend {
public:
    std::string name() const override { return "naive"; }
    at::Tensor forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       bool causal) override;
};

}  // namespace stepscope
