#include "attention/naive_attention.h"

#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/triu.h>

#include <cmath>
#include <limits>
#include <optional>

#include "profile/trace_range.h"

namespace stepscope {

at::Tensor NaiveAttention::forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   bool causal) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    std::optional<TraceRange> range(std::in_place, "attention q·kᵀ");
    at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * scale;
    range.emplace("attention softmax");
    if (causal) {
        const int64_t queries = q.size(-2);
        const int64_t keys = k.size(-2);
        // Key j is hidden from query i when j > i (aligned at the end when lengths differ).
        at::Tensor future =
            at::triu(at::ones({queries, keys}, q.options().dtype(at::kBool)), keys - queries + 1);
        scores = scores.masked_fill(future, -std::numeric_limits<double>::infinity());
    }
    const at::Tensor probabilities = at::softmax(scores, -1);
    range.emplace("attention ·v");
    return at::matmul(probabilities, v);
}

}  // namespace stepscope
