#include "results/rank_communication.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

namespace stepscope {

namespace {

std::vector<Interval> communicationIntervals(const RankSpans& spans) {
    std::vector<Interval> busy;
    busy.reserve(spans.collectives.size());
    for (const CollectiveSpan& collective : spans.collectives) {
        busy.push_back({collective.startUs, collective.endUs});
    }
    return mergeIntervals(std::move(busy));
}

RankCommunication communicationOf(const RankSpans& spans) {
    RankCommunication out;
    out.rank = spans.rank;
    for (const CollectiveSpan& collective : spans.collectives) {
        out.bytes += collective.bytes;
    }
    out.collectives = int64_t(spans.collectives.size());
    const std::vector<Interval> communication = communicationIntervals(spans);
    const std::vector<Interval> compute = mergeIntervals(spans.compute);
    out.computeUs = totalLength(compute);
    out.communicationUs = totalLength(communication);
    const double hidden = intersectionLength(communication, compute);
    out.exposedUs = out.communicationUs - hidden;
    out.overlapPercent = out.communicationUs > 0 ? 100.0 * hidden / out.communicationUs : 0;
    return out;
}

using CollectiveKey = std::pair<std::string, int64_t>;  // group, sequence

// Each rank's collectives by (group, sequence); a key seen twice on one rank
// keeps its first.
std::vector<std::map<CollectiveKey, const CollectiveSpan*>> indexed(
    const std::vector<RankSpans>& ranks) {
    std::vector<std::map<CollectiveKey, const CollectiveSpan*>> out(ranks.size());
    for (size_t r = 0; r < ranks.size(); ++r) {
        for (const CollectiveSpan& collective : ranks[r].collectives) {
            out[r].emplace(CollectiveKey{collective.group, collective.sequence}, &collective);
        }
    }
    return out;
}

std::optional<MatchedCollective> matchAcross(
    const CollectiveKey& key,
    const std::vector<std::map<CollectiveKey, const CollectiveSpan*>>& byRank) {
    std::vector<const CollectiveSpan*> found;
    for (const auto& rank : byRank) {
        const auto it = rank.find(key);
        if (it == rank.end() || it->second->op != byRank[0].at(key)->op) {
            return std::nullopt;
        }
        found.push_back(it->second);
    }
    MatchedCollective matched;
    matched.op = found[0]->op;
    matched.group = key.first;
    matched.sequence = key.second;
    matched.bytes = found[0]->bytes;
    matched.transferUs = std::numeric_limits<double>::infinity();
    for (const CollectiveSpan* span : found) {
        matched.transferUs = std::min(matched.transferUs, span->endUs - span->startUs);
    }
    for (const CollectiveSpan* span : found) {
        matched.waitUs.push_back(span->endUs - span->startUs - matched.transferUs);
    }
    return matched;
}

std::optional<Straggler> stragglerOf(const std::vector<RankCommunication>& ranks) {
    if (ranks.size() < 2) {
        return std::nullopt;
    }
    const auto least = std::min_element(
        ranks.begin(), ranks.end(),
        [](const RankCommunication& a, const RankCommunication& b) { return a.waitUs < b.waitUs; });
    double others = 0;
    for (const RankCommunication& rank : ranks) {
        others += &rank == &*least ? 0 : rank.waitUs - least->waitUs;
    }
    const double othersWait = others / double(ranks.size() - 1);
    if (!(othersWait > 0)) {
        return std::nullopt;
    }
    return Straggler{least->rank, othersWait};
}

}  // namespace

std::vector<Interval> exposedIntervals(const RankSpans& spans) {
    return subtractIntervals(communicationIntervals(spans), mergeIntervals(spans.compute));
}

CrossRankCommunication analyzeCommunication(const std::vector<RankSpans>& ranks) {
    CrossRankCommunication out;
    for (const RankSpans& rank : ranks) {
        out.ranks.push_back(communicationOf(rank));
    }
    if (ranks.empty()) {
        return out;
    }
    const auto byRank = indexed(ranks);
    std::set<CollectiveKey> everyKey;
    for (const auto& rank : byRank) {
        for (const auto& entry : rank) {
            everyKey.insert(entry.first);
        }
    }
    // A rank waits from a collective's start until its transfer could begin.
    // Async collectives in flight together wait at once: their union counts.
    std::vector<std::vector<Interval>> waits(ranks.size());
    for (const CollectiveKey& key : everyKey) {
        std::optional<MatchedCollective> matched =
            byRank[0].count(key) ? matchAcross(key, byRank) : std::nullopt;
        if (!matched) {
            ++out.unmatched;
            continue;
        }
        for (size_t r = 0; r < ranks.size(); ++r) {
            const double start = byRank[r].at(key)->startUs;
            waits[r].push_back({start, start + matched->waitUs[r]});
        }
        out.collectives.push_back(std::move(*matched));
    }
    for (size_t r = 0; r < ranks.size(); ++r) {
        out.ranks[r].waitUs = totalLength(mergeIntervals(std::move(waits[r])));
    }
    out.straggler = stragglerOf(out.ranks);
    return out;
}

}  // namespace stepscope
