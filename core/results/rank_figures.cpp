#include "results/rank_figures.h"

#include <algorithm>
#include <vector>

#include "results/statistics.h"

namespace stepscope {

RankStepFigures perMeasuredStep(const RankRecord& rank) {
    RankStepFigures out;
    out.rank = rank.rank;
    std::vector<double> totals;
    for (const StepRecord& step : rank.steps) {
        if (!step.warmup) {
            totals.push_back(step.totalMs);
        }
    }
    out.measuredSteps = int(totals.size());
    if (!totals.empty()) {
        out.stepMs = summarize(totals).median;
    }
    const double steps = std::max<double>(1, double(totals.size()));
    const RankCommunication& c = rank.communication;
    out.computeMs = c.computeUs / 1e3 / steps;
    out.communicationMs = c.communicationUs / 1e3 / steps;
    out.exposedMs = c.exposedUs / 1e3 / steps;
    out.waitMs = c.waitUs / 1e3 / steps;
    out.collectives = double(c.collectives) / steps;
    out.bytes = double(c.bytes) / steps;
    out.overlapPercent = c.overlapPercent;
    out.peakBytes = rank.memory.peakBytes;
    return out;
}

std::string overlapCaveat(const RunConfig& config) {
    if (config.parallel != "torch-ddp" && config.parallel != "torch-fsdp") {
        return {};
    }
    return config.parallel +
           " waits for its collectives inside autograd, which counts as computation here: its "
           "overlap is an upper bound and its exposed communication a lower one";
}

std::string rankNodesText(const DistributedRun& run) {
    std::vector<std::pair<std::string, std::vector<int>>> nodes;
    for (const RankRecord& rank : run.ranks) {
        if (rank.host.empty()) {
            continue;
        }
        auto found = std::find_if(nodes.begin(), nodes.end(),
                                  [&](const auto& node) { return node.first == rank.host; });
        if (found == nodes.end()) {
            found = nodes.insert(nodes.end(), {rank.host, {}});
        }
        found->second.push_back(rank.rank);
    }
    std::string text;
    for (const auto& [host, ranks] : nodes) {
        text += (text.empty() ? "" : ", ") + host + (ranks.size() == 1 ? " (rank " : " (ranks ");
        for (size_t i = 0; i < ranks.size(); ++i) {
            text += (i ? ", " : "") + std::to_string(ranks[i]);
        }
        text += ")";
    }
    return text;
}

}  // namespace stepscope
