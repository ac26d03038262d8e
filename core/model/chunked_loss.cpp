#include "model/chunked_loss.h"

#include <ATen/ops/cross_entropy_loss.h>

#include <algorithm>

#include "model/activation_checkpoint.h"
#include "model/transformer.h"
#include "profile/trace_range.h"

namespace stepscope {

at::Tensor chunkedCrossEntropyLoss(const at::Tensor& hidden, LinearImpl& head,
                                   const at::Tensor& targets, int64_t chunkTokens) {
    const at::Tensor rows = hidden.flatten(0, 1);
    const at::Tensor labels = targets.flatten();
    const int64_t tokens = rows.size(0);
    at::Tensor total;
    for (int64_t start = 0; start < tokens; start += chunkTokens) {
        const int64_t length = std::min(chunkTokens, tokens - start);
        const at::Tensor chunkLabels = labels.narrow(0, start, length);
        const at::Tensor chunkLoss = recomputedInBackward(
            rows.narrow(0, start, length), [&head, chunkLabels](const at::Tensor& x) {
                const TraceRange range("lm_head");
                return at::cross_entropy_loss(head.forward(x).to(at::kFloat), chunkLabels,
                                              /*weight=*/{}, at::Reduction::Sum);
            });
        total = total.defined() ? total + chunkLoss : chunkLoss;
    }
    return total / static_cast<double>(tokens);
}

}  // namespace stepscope
