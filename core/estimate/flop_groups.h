#pragma once

#include <string>
#include <vector>

#include "config/run_config.h"
#include "profile/operator_tracer.h"

namespace stepscope {

// The FLOPs side of "where the time goes": a forward pass split into groups
// whose FLOPs have a closed form, beside the time measured for each, giving
// achieved FLOP/s per group. Per layer, with B·T tokens, width d, h heads,
// MLP width f: projections 8·B·T·d², q·kᵀ and ·v 2·B·T²·d each (the full T×T
// product naive attention computes), softmax 5·B·h·T² (max, subtract, exp,
// sum, divide per score), a fused attention core the two matmuls together,
// MLP 6·B·T·d·f (SwiGLU's three matmuls); LM head 2·B·T·d·V once.
struct FlopGroupRow {
    std::string group;
    double flopsPerStep = 0;  // 0 where the group has no closed form ("other")
    double msPerStep = 0;
    double achievedFlopsPerSecond = 0;
};

double forwardGroupFlops(const RunConfig& config, const std::string& group);

// Rows for every group that was measured, in a fixed reading order.
std::vector<FlopGroupRow> flopGroups(const RunConfig& config, const std::vector<GroupTime>& times);

}  // namespace stepscope
