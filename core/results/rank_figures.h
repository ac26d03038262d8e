#pragma once

// A distributed run's figures of one rank per measured step, as a run's own
// step figures are: what the report's rank table and the app's Ranks view
// both show, worked out once.

#include <cstdint>
#include <optional>
#include <string>

#include "results/run_result.h"

namespace stepscope {

struct RankStepFigures {
    int rank = 0;
    int measuredSteps = 0;
    std::optional<double> stepMs;  // the median of its measured steps
    // Each its total over the measured steps' spans, divided by their number.
    double computeMs = 0;
    double communicationMs = 0;
    double exposedMs = 0;
    double waitMs = 0;
    double collectives = 0;
    double bytes = 0;
    double overlapPercent = 0;  // of the whole, not per step
    std::optional<int64_t> peakBytes;
};

// Of a record whose communication analyzeRanks() filled.
RankStepFigures perMeasuredStep(const RankRecord& rank);

// torch's DDP and FSDP2 wait for their collectives inside autograd (the
// reducer's last buckets, prefetched all-gathers), which the spans cannot
// tell from computation: their overlap is an upper bound and their exposed
// communication a lower one. What to say so, or empty for the others.
std::string overlapCaveat(const RunConfig& config);

// "stepscope-node1 (ranks 0, 1), stepscope-node2 (ranks 2, 3)": where the
// ranks ran, in the order the nodes first appear; empty where none said.
std::string rankNodesText(const DistributedRun& run);

}  // namespace stepscope
