#include "analysis/trace_ranks.h"

namespace stepscope {

DistributedRun distributedRunOfTrace(const std::vector<RankAnalysis>& ranks) {
    DistributedRun run;
    for (const RankAnalysis& analysis : ranks) {
        if (analysis.communicationSource == CommunicationSource::None) {
            continue;
        }
        RankRecord& rank = run.ranks.emplace_back();
        rank.rank = int(analysis.rank);
        for (const StepTime& step : analysis.steps) {
            StepRecord record;
            record.index = int(step.step);
            record.warmup = !step.analysed;  // the step HTA leaves out: not in the figures
            record.totalMs = step.durationUs / 1e3;
            rank.steps.push_back(record);
        }
        // The trace's clock throughout: one stretch, not steps, so that
        // aligning moves each rank's whole recording to rank 0's start.
        for (const Interval& compute : analysis.communicationSpans.compute) {
            rank.phases.push_back({-1, "compute", compute.start, compute.end});
        }
        rank.spans = analysis.communicationSpans;
        rank.spans.rank = rank.rank;
        rank.communication = analysis.communication;
    }
    const CrossRankCommunication across = communicationAcross(ranks);
    run.collectives = across.collectives;
    run.unmatched = across.unmatched;
    run.straggler = across.straggler;
    return run;
}

}  // namespace stepscope
