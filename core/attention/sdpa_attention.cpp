#include "attention/sdpa_attention.h"

#include <ATen/Context.h>
#include <ATen/SDPBackend.h>
#include <ATen/ops/_fused_sdp_choice.h>
#include <ATen/ops/scaled_dot_product_attention.h>

namespace stepscope {

namespace {

std::string kernelName(int64_t backend) {
    switch (static_cast<at::SDPBackend>(backend)) {
        case at::SDPBackend::math:
            return "math";
        case at::SDPBackend::flash_attention:
            return "flash";
        case at::SDPBackend::efficient_attention:
            return "efficient";
        case at::SDPBackend::cudnn_attention:
            return "cudnn";
        case at::SDPBackend::overrideable:
            return "overrideable";
        default:
            return "none";
    }
}

// Enables only the kernel asked for (all for Auto) while alive; the global
// switches are restored afterwards.
class KernelSelection {
public:
    explicit KernelSelection(SdpaAttention::Choice choice) {
        auto& context = at::globalContext();
        saved_ = {context.userEnabledFlashSDP(), context.userEnabledMemEfficientSDP(),
                  context.userEnabledMathSDP(), context.userEnabledCuDNNSDP()};
        using Choice = SdpaAttention::Choice;
        const bool any = choice == Choice::Auto;
        context.setSDPUseFlash(any || choice == Choice::Flash);
        context.setSDPUseMemEfficient(any || choice == Choice::Efficient);
        context.setSDPUseMath(any || choice == Choice::Math);
        context.setSDPUseCuDNN(any || choice == Choice::CuDnn);
    }
    ~KernelSelection() {
        auto& context = at::globalContext();
        context.setSDPUseFlash(saved_[0]);
        context.setSDPUseMemEfficient(saved_[1]);
        context.setSDPUseMath(saved_[2]);
        context.setSDPUseCuDNN(saved_[3]);
    }
    KernelSelection(const KernelSelection&) = delete;
    KernelSelection& operator=(const KernelSelection&) = delete;

private:
    std::array<bool, 4> saved_{};
};

}  // namespace

std::string SdpaAttention::toString(Choice choice) {
    switch (choice) {
        case Choice::Flash:
            return "flash";
        case Choice::Efficient:
            return "efficient";
        case Choice::Math:
            return "math";
        case Choice::CuDnn:
            return "cudnn";
        default:
            return "auto";
    }
}

SdpaAttention::SdpaAttention(Choice choice) : choice_(choice) {}

std::string SdpaAttention::name() const {
    return choice_ == Choice::Auto ? "sdpa" : "sdpa-" + toString(choice_);
}

std::optional<std::string> SdpaAttention::unavailableReason(const at::Tensor& q) const {
    const KernelSelection selection(choice_);
    try {
        const int64_t backend = at::_fused_sdp_choice(q, q, q, {}, 0.0, true);
        if (static_cast<at::SDPBackend>(backend) == at::SDPBackend::error) {
            return "no scaled_dot_product_attention kernel accepts these inputs";
        }
        if (choice_ != Choice::Auto && kernelName(backend) != toString(choice_)) {
            return "LibTorch's " + toString(choice_) + " kernel does not run on " +
                   q.device().str() + " for " + std::string(c10::toString(q.scalar_type())) +
                   " (it would use " + kernelName(backend) + ")";
        }
    } catch (const c10::Error& error) {
        return "LibTorch's " + toString(choice_) +
               " kernel cannot run these inputs: " + error.what_without_backtrace();
    }
    return std::nullopt;
}

at::Tensor SdpaAttention::forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  bool causal) {
    const KernelSelection selection(choice_);
    lastChoice_ = kernelName(at::_fused_sdp_choice(q, k, v, {}, 0.0, causal));
    return at::scaled_dot_product_attention(q, k, v, {}, 0.0, causal);
}

}  // namespace stepscope
