#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"

namespace stepscope {

// AdamW's hyper-parameters: the runner's learning rate and weight decay, and
// LibTorch's AdamWOptions defaults for the rest (PyTorch's too).
struct AdamWHyperParameters {
    double lr = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weightDecay = 0.01;
};

// One AdamW implementation stepping a fixed list of parameters: the same
// update in each (decoupled weight decay, then the bias-corrected moments),
// computed three ways.
//
// - adamw: LibTorch's torch::optim::AdamW, a loop over the parameters, a
//   handful of kernels each.
// - adamw-foreach: the multi-tensor ATen ops (at::_foreach_*) in the order
//   PyTorch's default foreach AdamW calls them; the denominator sqrt(v) is
//   made for every parameter at once, so a parameter-sized temporary exists
//   during the step.
// - adamw-fused: ATen's fused kernel (at::_fused_adamw_), with one fp32 step
//   counter per parameter on the parameter's device, as PyTorch's fused=True.
//
// Parameters without a gradient are skipped, as torch.optim does.
class StepOptimizer {
public:
    virtual ~StepOptimizer() = default;
    virtual OptimizerKind kind() const = 0;
    virtual void step() = 0;
    // Every tensor of optimizer state that exists now (moments, step
    // counters): what the memory tracker marks as optimizer state.
    virtual std::vector<at::Tensor> state() const = 0;
};

std::unique_ptr<StepOptimizer> makeOptimizer(OptimizerKind kind, std::vector<at::Tensor> parameters,
                                             const AdamWHyperParameters& hyper = {});

// Why `kind` cannot step fp32 parameters on `device` in this LibTorch (ATen
// has no fused AdamW kernel for it), from a one-element trial step; nullopt
// when it can.
std::optional<std::string> optimizerUnavailableReason(OptimizerKind kind,
                                                      const c10::Device& device);

}  // namespace stepscope
