#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "results/run_result.h"

namespace stepscope {

// The memory side of a run made with --memory: the peak (value, time, phase),
// each phase's peak, what was alive at the peak and each category's own
// maximum beside the estimator's prediction, the CUDA allocator's view where
// there is one, and the largest allocations. Throws std::invalid_argument for
// a run without a memory trace.
std::string formatMemoryReport(const RunResult& run, size_t topCount = 10);
nlohmann::json memoryReportJson(const RunResult& run, size_t topCount = 20);

// The table users build by hand: per model, precision and context length,
// the measured peak of each mode beside the estimator's total.
std::string formatMemorySweepTable(const std::vector<RunResult>& runs);

// One residual-stream tensor: batch × context × d_model × element size.
int64_t residualStreamBytes(const RunConfig& config);

}  // namespace stepscope
