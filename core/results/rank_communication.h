#pragma once

// Communication across the ranks of one recording: each rank's collectives
// and the compute they may run under go in; per-rank communication figures
// and the collectives matched across ranks come out. Works on spans, not on
// a file format, so a distributed run and a folder of rank traces both feed
// it. Times are µs on each rank's own clock: ranks are matched by process
// group and sequence number, never by time, so their clocks need not agree.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/intervals.h"

namespace stepscope {

struct CollectiveSpan {
    std::string op;        // "all_reduce", "all_gather", ...
    std::string group;     // the process group's name
    int64_t sequence = 0;  // its n-th collective of the group on this rank
    int64_t bytes = 0;     // the data it carries on this rank
    double startUs = 0;
    double endUs = 0;
    // Where known (a distributed run's worker says): its dtype, the phase it
    // was issued from, the thread it ran on.
    std::string dtype;
    std::string phase;
    std::string thread;
    int step = -1;  // the step it was issued in, where known
    // The issuing thread waited in it (a call without async_op): it ran no
    // compute meanwhile, whatever phase it was called from.
    bool blocking = false;
};

struct RankSpans {
    int64_t rank = 0;
    std::vector<CollectiveSpan> collectives;
    std::vector<Interval> compute;  // forward, backward, optimizer: what can hide communication
};

struct RankCommunication {
    int64_t rank = 0;
    double computeUs = 0;        // compute runs (the union of its intervals)
    double communicationUs = 0;  // a collective runs (their union)
    double exposedUs = 0;        // a collective runs and no compute does
    double overlapPercent = 0;   // HTA's: share of communication time under compute
    int64_t collectives = 0;
    int64_t bytes = 0;
    // Its waits over the matched collectives: each from the collective's
    // start, their union (async collectives in flight together wait once).
    double waitUs = 0;
};

// The i-th collective of a group, found on every rank with the same op.
struct MatchedCollective {
    std::string op;
    std::string group;
    int64_t sequence = 0;
    int64_t bytes = 0;  // rank 0's (the first rank given)
    // The shortest duration across ranks, as PyTorch's distributed view
    // defined it: the rank that came last waited for no one.
    double transferUs = 0;
    std::vector<double> waitUs;  // each rank's duration less the transfer, in the ranks' order
};

// The rank the others wait for: the least total wait over the matched
// collectives, and how much more the others waited, on average.
struct Straggler {
    int64_t rank = 0;
    double othersWaitUs = 0;
};

struct CrossRankCommunication {
    std::vector<RankCommunication> ranks;        // in the order given
    std::vector<MatchedCollective> collectives;  // by group, then sequence
    int64_t unmatched = 0;  // (group, sequence) pairs missing on a rank or with another op
    std::optional<Straggler> straggler;  // none for one rank, no match, or equal waits
};

CrossRankCommunication analyzeCommunication(const std::vector<RankSpans>& ranks);

// When a rank's communication runs exposed: a collective runs and no compute
// does. Sorted and disjoint; their length is RankCommunication::exposedUs.
std::vector<Interval> exposedIntervals(const RankSpans& spans);

}  // namespace stepscope
