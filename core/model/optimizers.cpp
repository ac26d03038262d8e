#include "model/optimizers.h"

#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_addcdiv.h>
#include <ATen/ops/_foreach_addcmul.h>
#include <ATen/ops/_foreach_div.h>
#include <ATen/ops/_foreach_lerp.h>
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/_foreach_sqrt.h>
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/GradMode.h>
#include <c10/util/Exception.h>
#include <torch/optim/adamw.h>

#include <cmath>
#include <tuple>

namespace stepscope {

namespace {

// LibTorch's own AdamW: per parameter, its moments updated and its step
// applied by a few elementwise kernels each.
class LoopAdamW final : public StepOptimizer {
public:
    LoopAdamW(std::vector<at::Tensor> parameters, const AdamWHyperParameters& h)
        : optimizer_(std::move(parameters), torch::optim::AdamWOptions(h.lr)
                                                .betas(std::make_tuple(h.beta1, h.beta2))
                                                .eps(h.eps)
                                                .weight_decay(h.weightDecay)) {}
    OptimizerKind kind() const override { return OptimizerKind::AdamW; }
    void step() override { optimizer_.step(); }
    std::vector<at::Tensor> state() const override {
        std::vector<at::Tensor> tensors;
        for (const auto& [key, state] : optimizer_.state()) {
            const auto& adamw = static_cast<const torch::optim::AdamWParamState&>(*state);
            for (const at::Tensor& tensor :
                 {adamw.exp_avg(), adamw.exp_avg_sq(), adamw.max_exp_avg_sq()}) {
                if (tensor.defined()) {  // max_exp_avg_sq is for amsgrad only
                    tensors.push_back(tensor);
                }
            }
        }
        return tensors;
    }

private:
    torch::optim::AdamW optimizer_;
};

// What the multi-tensor and fused forms share: the parameters and each one's
// moments (made at its first gradient, as torch.optim does).
class ListAdamW : public StepOptimizer {
public:
    ListAdamW(std::vector<at::Tensor> parameters, const AdamWHyperParameters& h)
        : parameters_(std::move(parameters)),
          hyper_(h),
          expAvg_(parameters_.size()),
          expAvgSq_(parameters_.size()) {}
    std::vector<at::Tensor> state() const override {
        std::vector<at::Tensor> tensors;
        for (size_t i = 0; i < parameters_.size(); ++i) {
            for (const at::Tensor& tensor : {expAvg_[i], expAvgSq_[i]}) {
                if (tensor.defined()) {
                    tensors.push_back(tensor);
                }
            }
        }
        return tensors;
    }

protected:
    // The parameters that have a gradient, with theirs and their state.
    struct Lists {
        std::vector<size_t> index;
        std::vector<at::Tensor> params, grads, expAvgs, expAvgSqs;
    };
    Lists withGradients() {
        Lists lists;
        for (size_t i = 0; i < parameters_.size(); ++i) {
            const at::Tensor& grad = parameters_[i].grad();
            if (!grad.defined()) {
                continue;
            }
            if (!expAvg_[i].defined()) {
                expAvg_[i] = at::zeros_like(parameters_[i], at::MemoryFormat::Preserve);
                expAvgSq_[i] = at::zeros_like(parameters_[i], at::MemoryFormat::Preserve);
            }
            lists.index.push_back(i);
            lists.params.push_back(parameters_[i]);
            lists.grads.push_back(grad);
            lists.expAvgs.push_back(expAvg_[i]);
            lists.expAvgSqs.push_back(expAvgSq_[i]);
        }
        return lists;
    }

    std::vector<at::Tensor> parameters_;
    AdamWHyperParameters hyper_;
    std::vector<at::Tensor> expAvg_, expAvgSq_;
};

// torch.optim.AdamW(foreach=True), _multi_tensor_adam without capturable:
// the step counts and bias corrections on the host, one multi-tensor op per
// line of the update.
class ForeachAdamW final : public ListAdamW {
public:
    ForeachAdamW(std::vector<at::Tensor> parameters, const AdamWHyperParameters& h)
        : ListAdamW(std::move(parameters), h), steps_(parameters_.size(), 0) {}
    OptimizerKind kind() const override { return OptimizerKind::AdamWForeach; }
    void step() override {
        const c10::NoGradGuard noGrad;
        Lists l = withGradients();
        if (l.params.empty()) {
            return;
        }
        const AdamWHyperParameters& h = hyper_;
        std::vector<at::Scalar> stepSize, biasCorrection2Sqrt;
        for (const size_t i : l.index) {
            const double step = double(++steps_[i]);
            stepSize.emplace_back(-h.lr / (1.0 - std::pow(h.beta1, step)));
            biasCorrection2Sqrt.emplace_back(std::sqrt(1.0 - std::pow(h.beta2, step)));
        }
        at::_foreach_mul_(l.params, 1.0 - h.lr * h.weightDecay);  // decoupled weight decay
        at::_foreach_lerp_(l.expAvgs, l.grads, 1.0 - h.beta1);
        at::_foreach_mul_(l.expAvgSqs, h.beta2);
        at::_foreach_addcmul_(l.expAvgSqs, l.grads, l.grads, 1.0 - h.beta2);
        // sqrt(v) for every parameter at once: the parameter-sized temporary.
        std::vector<at::Tensor> denominator = at::_foreach_sqrt(l.expAvgSqs);
        at::_foreach_div_(denominator, biasCorrection2Sqrt);
        at::_foreach_add_(denominator, h.eps);
        at::_foreach_addcdiv_(l.params, l.expAvgs, denominator, stepSize);
    }

private:
    std::vector<int64_t> steps_;  // each parameter's, on the host
};

// torch.optim.AdamW(fused=True): ATen's one kernel per list, reading each
// parameter's step from an fp32 tensor on its device.
class FusedAdamW final : public ListAdamW {
public:
    using ListAdamW::ListAdamW;
    OptimizerKind kind() const override { return OptimizerKind::AdamWFused; }
    std::vector<at::Tensor> state() const override {
        std::vector<at::Tensor> tensors = ListAdamW::state();
        for (const at::Tensor& step : stepTensors_) {
            if (step.defined()) {
                tensors.push_back(step);
            }
        }
        return tensors;
    }
    void step() override {
        const c10::NoGradGuard noGrad;
        Lists l = withGradients();
        if (l.params.empty()) {
            return;
        }
        stepTensors_.resize(parameters_.size());
        std::vector<at::Tensor> steps;
        for (const size_t i : l.index) {
            if (!stepTensors_[i].defined()) {
                stepTensors_[i] = at::zeros(
                    at::IntArrayRef{},
                    at::TensorOptions().dtype(at::kFloat).device(parameters_[i].device()));
            }
            steps.push_back(stepTensors_[i]);
        }
        at::_foreach_add_(steps, 1.0);
        const AdamWHyperParameters& h = hyper_;
        at::_fused_adamw_(l.params, l.grads, l.expAvgs, l.expAvgSqs, /*max_exp_avg_sqs=*/{}, steps,
                          h.lr, h.beta1, h.beta2, h.weightDecay, h.eps, /*amsgrad=*/false,
                          /*maximize=*/false);
    }

private:
    std::vector<at::Tensor> stepTensors_;
};

}  // namespace

std::unique_ptr<StepOptimizer> makeOptimizer(OptimizerKind kind, std::vector<at::Tensor> parameters,
                                             const AdamWHyperParameters& hyper) {
    switch (kind) {
        case OptimizerKind::AdamWForeach:
            return std::make_unique<ForeachAdamW>(std::move(parameters), hyper);
        case OptimizerKind::AdamWFused:
            return std::make_unique<FusedAdamW>(std::move(parameters), hyper);
        case OptimizerKind::AdamW:
            break;
    }
    return std::make_unique<LoopAdamW>(std::move(parameters), hyper);
}

std::optional<std::string> optimizerUnavailableReason(OptimizerKind kind,
                                                      const c10::Device& device) {
    if (kind != OptimizerKind::AdamWFused) {
        return std::nullopt;  // LibTorch's loop and the foreach ops run on every device
    }
    try {
        const auto options = at::TensorOptions().dtype(at::kFloat).device(device);
        at::Tensor parameter = at::zeros({1}, options).requires_grad_(true);
        parameter.mutable_grad() = at::ones({1}, options);
        makeOptimizer(kind, {parameter})->step();
        return std::nullopt;
    } catch (const c10::Error& error) {
        std::string message = error.what_without_backtrace();
        message = message.substr(0, message.find('\n'));
        return "ATen's fused AdamW kernel (at::_fused_adamw_) does not run fp32 parameters on " +
               device.str() + " in this LibTorch: " + message;
    }
}

}  // namespace stepscope
