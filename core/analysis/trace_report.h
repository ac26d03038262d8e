#pragma once

#include <string>
#include <vector>

#include "analysis/trace_analysis.h"

namespace stepscope {

// `stepscope-cli breakdown TRACE` without --json: each rank's HTA analyses as
// Markdown (temporal breakdown, kernel types, the top kernels and host
// operators, launch statistics, profiler steps), the slowest rank per step marked.
std::string formatTraceBreakdown(const std::vector<RankAnalysis>& ranks, size_t topRows = 15);

}  // namespace stepscope
