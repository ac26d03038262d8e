#include "estimate/fit_check.h"

#include "estimate/memory_estimate.h"
#include "util/strings.h"

namespace stepscope {

FitCheck checkFit(const RunConfig& config, int64_t freeBytes) {
    FitCheck check;
    check.freeBytes = freeBytes;
    // A user's Python model is not ours to predict; on CUDA the device's free
    // memory is the allocator's business, known only once it runs.
    if (config.device != DeviceKind::Cpu || !config.pyModel.empty()) {
        return check;
    }
    check.neededBytes = preflightBytes(config);
    if (freeBytes > 0) {
        check.fits = check.neededBytes <= freeBytes;
    }
    return check;
}

std::optional<std::string> preflightRefusal(const RunConfig& config, int64_t availableBytes) {
    const FitCheck check = checkFit(config, availableBytes);
    if (config.force || !check.fits.has_value() || *check.fits) {
        return std::nullopt;
    }
    return "the run needs about " + formatBytes(static_cast<double>(check.neededBytes)) +
           " (the predicted peak and a 10% margin) but only " +
           formatBytes(static_cast<double>(availableBytes)) +
           " is available; shrink the batch, the context or the model";
}

}  // namespace stepscope
