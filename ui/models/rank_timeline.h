#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "results/run_result.h"

namespace stepscope::ui {

// A distributed run's ranks on one time axis, for the Ranks view: a lane
// per rank with its phases, its collectives and the stretches where its
// communication ran exposed, in ms from rank 0's first step. With steps
// aligned, each rank's step k is moved to start where rank 0's does: ranks
// on other machines keep other clocks, and step by step is how they compare.
// Finds the collective under a point and the same collective on every rank.
// Holds a pointer to the run, which must outlive it.
class RankTimeline {
public:
    struct PhaseBar {
        double startMs = 0;
        double endMs = 0;
        std::string phase;  // forward, backward, comm_wait, optimizer
        int step = 0;
    };
    struct CollectiveBar {
        double startMs = 0;
        double endMs = 0;
        int span = 0;      // into the rank's spans.collectives
        int matched = -1;  // into the run's collectives; -1: not on every rank
    };
    struct Lane {
        int rank = 0;
        std::vector<PhaseBar> phases;
        std::vector<CollectiveBar> collectives;          // by start
        std::vector<std::pair<double, double>> exposed;  // sorted, disjoint
    };
    struct StepMark {
        int step = 0;
        bool warmup = false;
        double startMs = 0;  // rank 0's
    };
    // A collective as a lane holds it: lane and its index in the lane.
    using Place = std::pair<int, int>;

    RankTimeline() = default;
    RankTimeline(const DistributedRun& run, bool alignSteps);

    const std::vector<Lane>& lanes() const { return lanes_; }
    const std::vector<StepMark>& steps() const { return steps_; }
    double endMs() const { return endMs_; }
    bool empty() const { return lanes_.empty(); }

    // The collective of a lane at a time: the shortest one holding it, else
    // the nearest within slackMs; -1 for none.
    int collectiveAt(int lane, double ms, double slackMs = 0) const;
    // The same collective (its group and sequence) on every lane that has it.
    std::vector<Place> sameCollective(Place place) const;
    const CollectiveSpan& span(Place place) const;
    // Across the ranks; nullptr where it is not found on every rank.
    const MatchedCollective* matched(Place place) const;
    // This lane's wait in it: its duration less the transfer; -1 where unmatched.
    double waitUs(Place place) const;

private:
    const DistributedRun* run_ = nullptr;
    std::vector<Lane> lanes_;
    std::vector<StepMark> steps_;
    double endMs_ = 0;
};

}  // namespace stepscope::ui
