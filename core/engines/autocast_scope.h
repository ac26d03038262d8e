#pragma once

#include <ATen/autocast_mode.h>
#include <c10/core/Device.h>

#include "config/run_config.h"

namespace stepscope {

// Autocast for the forward pass (and loss), as `with torch.autocast(...)`.
class AutocastScope {
public:
    AutocastScope(const at::Device& device, Precision precision)
        : deviceType_(device.type()), enabled_(precision != Precision::Fp32) {
        if (!enabled_) {
            return;
        }
        previousEnabled_ = at::autocast::is_autocast_enabled(deviceType_);
        previousDtype_ = at::autocast::get_autocast_dtype(deviceType_);
        at::autocast::set_autocast_dtype(deviceType_,
                                         precision == Precision::Bf16 ? at::kBFloat16 : at::kHalf);
        at::autocast::set_autocast_enabled(deviceType_, true);
    }
    ~AutocastScope() {
        if (!enabled_) {
            return;
        }
        at::autocast::set_autocast_enabled(deviceType_, previousEnabled_);
        at::autocast::set_autocast_dtype(deviceType_, previousDtype_);
        at::autocast::clear_cache();
    }
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

private:
    at::DeviceType deviceType_;
    bool enabled_;
    bool previousEnabled_ = false;
    at::ScalarType previousDtype_ = at::kFloat;
};

}  // namespace stepscope
