#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace stepscope {

class LinearImpl;

// Mean next-token cross-entropy of head(hidden) against targets, in fp32,
// `chunkTokens` tokens at a time: each chunk's logits are made, reduced to
// their summed loss and freed, and made again in backward
// (recomputedInBackward), so the (batch, seq, vocab) logits never exist at
// once. The same loss and gradients as crossEntropyLoss(head(hidden), targets).
// hidden: (batch, seq, d_model); targets: (batch, seq) int64.
at::Tensor chunkedCrossEntropyLoss(const at::Tensor& hidden, LinearImpl& head,
                                   const at::Tensor& targets, int64_t chunkTokens);

}  // namespace stepscope
