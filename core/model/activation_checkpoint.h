#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

namespace stepscope {

// The forward of a part of the model (a group of blocks, a chunk of the loss)
// from its one input.
using SegmentForward = std::function<at::Tensor(const at::Tensor&)>;

// Activation checkpointing as a torch::autograd::Function: runs `forward` on
// `input` without grad, so none of its operations keeps anything for
// backward; keeps only `input`; in backward runs `forward` again under grad
// (in the forward's autocast state, inside a RecomputeScope so the memory
// tracker shows it) and backpropagates through the recomputed graph, which
// also gives the parameters `forward` uses their gradients (PyTorch's
// reentrant checkpoint). The parameters get gradients only when `input`
// requires grad, as there. Without grad mode it only runs `forward`.
at::Tensor recomputedInBackward(const at::Tensor& input, SegmentForward forward);

}  // namespace stepscope
