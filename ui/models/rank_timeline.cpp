#include "models/rank_timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stepscope::ui {

namespace {

using CollectiveKey = std::pair<std::string, int64_t>;  // group, sequence

// Where each of a rank's steps starts: its first phase.
std::map<int, double> stepStarts(const RankRecord& rank) {
    std::map<int, double> starts;
    for (const PhaseSpan& phase : rank.phases) {
        auto [at, added] = starts.emplace(phase.step, phase.startUs);
        if (!added) {
            at->second = std::min(at->second, phase.startUs);
        }
    }
    return starts;
}

}  // namespace

RankTimeline::RankTimeline(const DistributedRun& run, bool alignSteps) : run_(&run) {
    if (run.ranks.empty()) {
        return;
    }
    const std::map<int, double> reference = stepStarts(run.ranks[0]);
    double originUs = std::numeric_limits<double>::infinity();
    for (const RankRecord& rank : run.ranks) {
        for (const PhaseSpan& phase : rank.phases) {
            originUs = std::min(originUs, phase.startUs);
        }
    }
    if (!reference.empty()) {
        originUs = reference.begin()->second;
    } else if (!std::isfinite(originUs)) {
        originUs = 0;
    }
    std::map<CollectiveKey, int> matchedIndex;
    for (size_t i = 0; i < run.collectives.size(); ++i) {
        matchedIndex[{run.collectives[i].group, run.collectives[i].sequence}] = int(i);
    }
    for (const RankRecord& rank : run.ranks) {
        // Aligned: what moves each of this rank's steps onto rank 0's start.
        std::map<int, double> shift;
        if (alignSteps) {
            for (const auto& [step, start] : stepStarts(rank)) {
                if (const auto at = reference.find(step); at != reference.end()) {
                    shift[step] = at->second - start;
                }
            }
        }
        const auto toMs = [&](double us, int step) {
            const auto at = shift.find(step);
            return (us + (at == shift.end() ? 0 : at->second) - originUs) / 1e3;
        };
        Lane& lane = lanes_.emplace_back();
        lane.rank = rank.rank;
        for (const PhaseSpan& phase : rank.phases) {
            lane.phases.push_back({toMs(phase.startUs, phase.step), toMs(phase.endUs, phase.step),
                                   phase.phase, phase.step});
            endMs_ = std::max(endMs_, lane.phases.back().endMs);
        }
        const auto& collectives = rank.spans.collectives;
        for (size_t i = 0; i < collectives.size(); ++i) {
            const CollectiveSpan& span = collectives[i];
            const auto found = matchedIndex.find({span.group, span.sequence});
            lane.collectives.push_back({toMs(span.startUs, span.step), toMs(span.endUs, span.step),
                                        int(i), found == matchedIndex.end() ? -1 : found->second});
            endMs_ = std::max(endMs_, lane.collectives.back().endMs);
        }
        std::stable_sort(
            lane.collectives.begin(), lane.collectives.end(),
            [](const CollectiveBar& a, const CollectiveBar& b) { return a.startMs < b.startMs; });
        // Exposed stretches step by step, so each moves with its step: the
        // rank's spans split by step in one pass (a live run redraws often).
        std::map<int, RankRecord> bySteps;
        for (const PhaseSpan& phase : rank.phases) {
            bySteps[phase.step].phases.push_back(phase);
        }
        for (const CollectiveSpan& span : collectives) {
            bySteps[span.step].spans.collectives.push_back(span);
        }
        for (const auto& [step, one] : bySteps) {
            for (const Interval& exposed : exposedIntervals(spansOf(one, false))) {
                lane.exposed.emplace_back(toMs(exposed.start, step), toMs(exposed.end, step));
            }
        }
    }
    for (const StepRecord& step : run.ranks[0].steps) {
        if (const auto at = reference.find(step.index); at != reference.end()) {
            steps_.push_back({step.index, step.warmup, (at->second - originUs) / 1e3});
        }
    }
}

int RankTimeline::collectiveAt(int lane, double ms, double slackMs) const {
    if (lane < 0 || lane >= int(lanes_.size())) {
        return -1;
    }
    const std::vector<CollectiveBar>& bars = lanes_[size_t(lane)].collectives;
    int best = -1;
    double bestDistance = std::numeric_limits<double>::infinity();
    double bestLength = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < bars.size() && bars[i].startMs <= ms + slackMs; ++i) {
        const CollectiveBar& bar = bars[i];
        const double distance = ms < bar.startMs ? bar.startMs - ms
                                : ms > bar.endMs ? ms - bar.endMs
                                                 : 0;
        const double length = bar.endMs - bar.startMs;
        if (distance <= slackMs &&
            (distance < bestDistance || (distance == bestDistance && length < bestLength))) {
            best = int(i);
            bestDistance = distance;
            bestLength = length;
        }
    }
    return best;
}

const CollectiveSpan& RankTimeline::span(Place place) const {
    const CollectiveBar& bar = lanes_[size_t(place.first)].collectives[size_t(place.second)];
    return run_->ranks[size_t(place.first)].spans.collectives[size_t(bar.span)];
}

std::vector<RankTimeline::Place> RankTimeline::sameCollective(Place place) const {
    const CollectiveSpan& wanted = span(place);
    std::vector<Place> same;
    for (size_t lane = 0; lane < lanes_.size(); ++lane) {
        const auto& bars = lanes_[lane].collectives;
        for (size_t i = 0; i < bars.size(); ++i) {
            const CollectiveSpan& other = span({int(lane), int(i)});
            if (other.group == wanted.group && other.sequence == wanted.sequence) {
                same.emplace_back(int(lane), int(i));
                break;
            }
        }
    }
    return same;
}

const MatchedCollective* RankTimeline::matched(Place place) const {
    const int index = lanes_[size_t(place.first)].collectives[size_t(place.second)].matched;
    return index < 0 ? nullptr : &run_->collectives[size_t(index)];
}

double RankTimeline::waitUs(Place place) const {
    const MatchedCollective* found = matched(place);
    if (!found || size_t(place.first) >= found->waitUs.size()) {
        return -1;
    }
    return found->waitUs[size_t(place.first)];
}

}  // namespace stepscope::ui
