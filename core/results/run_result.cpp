#include "results/run_result.h"

#include <algorithm>
#include <set>

#include "estimate/cost_model.h"

namespace stepscope {

namespace {
constexpr std::pair<RunStatus, const char*> kStatuses[] = {{RunStatus::Ok, "ok"},
                                                           {RunStatus::Oom, "oom"},
                                                           {RunStatus::Failed, "failed"},
                                                           {RunStatus::Cancelled, "cancelled"},
                                                           {RunStatus::Refused, "refused"},
                                                           {RunStatus::Unavailable, "unavailable"},
                                                           {RunStatus::Incorrect, "incorrect"}};

std::optional<Stats> phaseStats(const std::vector<StepRecord>& steps,
                                std::optional<double> StepRecord::*phase) {
    std::vector<double> values;
    for (const auto& step : steps) {
        if (!step.warmup && (step.*phase).has_value()) {
            values.push_back(*(step.*phase));
        }
    }
    if (values.empty()) {
        return std::nullopt;
    }
    return summarize(values);
}
}  // namespace

const char* toString(SpanKind kind) {
    switch (kind) {
        case SpanKind::Range:
            return "range";
        case SpanKind::Operator:
            return "operator";
        case SpanKind::Kernel:
            return "kernel";
        case SpanKind::Memcpy:
            return "memcpy";
        case SpanKind::Memset:
            return "memset";
    }
    return "range";
}

std::string toString(RunStatus status) {
    for (const auto& [value, name] : kStatuses) {
        if (value == status) {
            return name;
        }
    }
    return "?";
}

std::optional<RunStatus> parseRunStatus(const std::string& text) {
    for (const auto& [value, name] : kStatuses) {
        if (text == name) {
            return value;
        }
    }
    return std::nullopt;
}

RankSpans spansOf(const RankRecord& rank, bool measuredOnly) {
    std::set<int> measured;
    for (const StepRecord& step : rank.steps) {
        if (!step.warmup) {
            measured.insert(step.index);
        }
    }
    const auto kept = [&](int step) { return !measuredOnly || measured.count(step) > 0; };
    RankSpans spans;
    spans.rank = rank.rank;
    std::vector<Interval> phases;
    std::vector<Interval> waited;  // in a blocking collective: the thread computes nothing
    for (const PhaseSpan& phase : rank.phases) {
        // Waiting for communication hides none.
        if (kept(phase.step) && phase.phase != "comm_wait") {
            phases.push_back({phase.startUs, phase.endUs});
        }
    }
    for (const CollectiveSpan& span : rank.spans.collectives) {
        if (span.step < 0 || kept(span.step)) {
            spans.collectives.push_back(span);
            if (span.blocking) {
                waited.push_back({span.startUs, span.endUs});
            }
        }
    }
    spans.compute =
        subtractIntervals(mergeIntervals(std::move(phases)), mergeIntervals(std::move(waited)));
    return spans;
}

void analyzeRanks(DistributedRun& run) {
    // The measured steps' spans, as every other figure of a run is theirs.
    std::vector<RankSpans> spans;
    for (RankRecord& rank : run.ranks) {
        rank.spans.rank = rank.rank;
        spans.push_back(spansOf(rank, /*measuredOnly=*/true));
    }
    const CrossRankCommunication across = analyzeCommunication(spans);
    for (size_t r = 0; r < run.ranks.size(); ++r) {
        run.ranks[r].communication = across.ranks[r];
    }
    run.collectives = across.collectives;
    run.unmatched = across.unmatched;
    run.straggler = across.straggler;
}

RankRecord& rankRecordOf(DistributedRun& run, int rank) {
    const auto at =
        std::lower_bound(run.ranks.begin(), run.ranks.end(), rank,
                         [](const RankRecord& record, int wanted) { return record.rank < wanted; });
    if (at != run.ranks.end() && at->rank == rank) {
        return *at;
    }
    RankRecord made;
    made.rank = rank;
    made.spans.rank = rank;
    return *run.ranks.insert(at, std::move(made));
}

void addRankStep(DistributedRun& run, RankStep step) {
    RankRecord& rank = rankRecordOf(run, step.rank);
    rank.steps.push_back(step.step);
    rank.phases.insert(rank.phases.end(), step.phases.begin(), step.phases.end());
    for (CollectiveSpan& span : step.collectives) {
        rank.spans.collectives.push_back(std::move(span));
    }
}

RunSummary summarizeSteps(const std::vector<StepRecord>& steps, const RunConfig& config,
                          std::optional<double> devicePeakFlopsPerSecond) {
    RunSummary summary;
    std::vector<double> totals;
    for (const auto& step : steps) {
        if (!step.warmup) {
            totals.push_back(step.totalMs);
        }
    }
    summary.total = summarize(totals);
    summary.forward = phaseStats(steps, &StepRecord::forwardMs);
    summary.backward = phaseStats(steps, &StepRecord::backwardMs);
    summary.optimizer = phaseStats(steps, &StepRecord::optimizerMs);
    summary.communicationWait = phaseStats(steps, &StepRecord::communicationWaitMs);
    // A user's Python model has a shape of its own: its FLOPs are not ours to count.
    summary.flopsPerStep = config.pyModel.empty() ? modelFlopsPerStep(config) : 0;
    summary.devicePeakFlopsPerSecond = devicePeakFlopsPerSecond;
    if (summary.total.mean > 0) {
        const double seconds = summary.total.mean / 1000.0;
        summary.tokensPerSecond =
            static_cast<double>(config.batchSize * config.contextLength) / seconds;
        summary.achievedFlopsPerSecond = summary.flopsPerStep / seconds;
        if (devicePeakFlopsPerSecond && *devicePeakFlopsPerSecond > 0) {
            summary.mfu = summary.achievedFlopsPerSecond / *devicePeakFlopsPerSecond;
        }
    }
    return summary;
}

}  // namespace stepscope
