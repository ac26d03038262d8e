// Precompiled for stepscope_core and the torch-side tests: the LibTorch
// headers most engine files need. Narrow headers, not <torch/torch.h>.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
