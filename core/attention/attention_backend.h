#pragma once

// core/attention: the backends behind one interface (here), the factory in
// attention_registry. Includes config/, profile/ and kernels/.

#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>
#include <string>

#include "config/attention_options.h"

namespace stepscope {

// One way to compute softmax(q kᵀ / sqrt(d)) v. Inputs are (batch, heads,
// seq, head_dim); the output has q's shape and is differentiable.
class AttentionBackend {
public:
    virtual ~AttentionBackend() = default;
    virtual std::string name() const = 0;

    // Why this backend cannot run these inputs (no GPU, unsupported head dim
    // or dtype, ...), or nullopt when it can. Callers show the reason instead
    // of failing.
    virtual std::optional<std::string> unavailableReason(const at::Tensor& q) const {
        (void)q;
        return std::nullopt;
    }

    virtual at::Tensor forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               bool causal) = 0;
};

}  // namespace stepscope
