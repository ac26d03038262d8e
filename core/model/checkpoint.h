#pragma once

// A model's weights as torch.save files: state dicts and training
// checkpoints, read through interop/'s torch.save reader and written as
// Python's torch.load(weights_only=True) accepts them.

#include <ATen/core/Tensor.h>

#include <map>
#include <string>

#include "config/model_dims.h"

namespace stepscope {

class TransformerLMImpl;

using StateDict = std::map<std::string, at::Tensor>;

// Reads a file written by Python's torch.save: a state dict, or a dict holding
// it under "model" or "model_state_dict" (training checkpoints); "_orig_mod."
// prefixes (from torch.compile) are stripped. `path` may also be the course's
// from_pretrained folder (its model.pt is read). Throws std::runtime_error
// saying what is wrong.
StateDict readStateDict(const std::string& path);

// Copies every parameter from the state dict. A missing, unexpected or
// mis-shaped tensor is an error naming it, and leaves the model unchanged.
void loadStateDict(TransformerLMImpl& model, const StateDict& state);

// Writes the model's parameters as a plain state dict that torch.load reads.
void saveStateDict(const TransformerLMImpl& model, const std::string& path);

// Reads a torch.save'd tensor (for example token ids).
at::Tensor readTensor(const std::string& path);

// The model shape that weights at `path` give: a from_pretrained folder's
// config, or a bare state dict's tensor shapes (d_model, d_ff, layers, vocab),
// with `heads` (0: unknown) or, failing that, the heads of the preset of the
// same width, MLP and depth. Throws std::runtime_error naming what is missing
// (the --heads flag when the tensors cannot say).
ModelDims weightsShape(const std::string& path, int64_t heads);

}  // namespace stepscope
