#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/run_config.h"

namespace stepscope {

// Whether a run fits, by one rule for the CLI's estimate, the app's panel
// and pre-flight question, and the runner's refusal: on the CPU, the
// predicted peak plus kPreflightMargin against the memory free now
// (MemAvailable), never the machine's total, which other programs share.
// Elsewhere (CUDA, a user's Python model) it is not known before the run.
struct FitCheck {
    int64_t neededBytes = 0;   // the predicted peak with the margin
    int64_t freeBytes = 0;     // what it was held against
    std::optional<bool> fits;  // nullopt: unknown (not the CPU, or free memory unknown)
};

// `freeBytes`: the memory free now (availableSystemMemory(), or what a test
// or the app's override assumes); 0 or less when it could not be read.
FitCheck checkFit(const RunConfig& config, int64_t freeBytes);

// Why the CPU pre-flight refuses `config` (checkFit says it does not fit in
// `availableBytes`), or nullopt when it may run: running out of memory on the
// CPU kills the process. Runs on CUDA, with force, and of a user's Python
// model (not ours to predict) are never refused.
std::optional<std::string> preflightRefusal(const RunConfig& config, int64_t availableBytes);

// "free memory (MemAvailable)": what FitCheck::freeBytes is, for messages.
constexpr const char* kFreeMemoryName = "free memory (MemAvailable)";

}  // namespace stepscope
