#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "profile/memory_trace.h"

namespace stepscope {

// What a run will need, predicted from what each part of the model keeps for
// backward and what each phase allocates for a moment (memory_estimate.cpp
// says which tensors), calibrated against the memory tracker on the CPU.
struct MemoryPrediction {
    int64_t peakBytes = 0;
    int peakPhase = 0;              // 0 setup, 1 forward, 2 backward, 3 optimizer (as MemoryTrace)
    CategoryBytes maxByCategory{};  // each category's own maximum over the run
    std::optional<int64_t> deviceBytes;    // the device's memory where known
    std::vector<std::string> explanation;  // the parts of the formula in words, for the app
    int64_t at(MemoryCategory category) const { return maxByCategory[size_t(category)]; }
};
MemoryPrediction predictMemory(const RunConfig& config);

// The margin the CPU pre-flight, shrink-to-fit and the runner's refusal add
// to the predicted peak: the prediction is held within ±10% of measurements.
constexpr double kPreflightMargin = 0.10;
int64_t preflightBytes(const RunConfig& config);

// Total memory of the machine the config runs on: system memory for the CPU,
// nullopt where unknown.
std::optional<int64_t> deviceMemoryBytes(const RunConfig& config);

}  // namespace stepscope
