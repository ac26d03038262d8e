#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

namespace stepscope {

// Writes named tensors as the file `torch.save(OrderedDict(...))` makes: the
// zip archive with a protocol-2 pickle that uses only what Python's
// `torch.load(weights_only=True)` allows. (LibTorch's pickle_save tags dicts
// with torch.jit._pickle.restore_type_tag, which weights_only rejects.)
// Atomic: the file appears whole or not at all.
void writeTorchSaveStateDict(const std::string& path,
                             const std::vector<std::pair<std::string, at::Tensor>>& tensors);

}  // namespace stepscope
