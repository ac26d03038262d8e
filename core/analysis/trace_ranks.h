#pragma once

// A recording's ranks (a folder of rank traces) as a distributed run's, so the
// Ranks view draws a trace's collectives as it draws our runs': each rank
// with communication its collectives and its compute (one "compute" phase a
// stretch), its profiler steps, its communication figures as the trace
// analysis found them, and the collectives matched across the ranks.

#include <vector>

#include "analysis/trace_analysis.h"
#include "results/run_result.h"

namespace stepscope {

// Ranks without communication (a trace with no collectives) are left out;
// empty ranks when none has any.
DistributedRun distributedRunOfTrace(const std::vector<RankAnalysis>& ranks);

}  // namespace stepscope
