#include "results/intervals.h"

#include <algorithm>

namespace stepscope {

std::vector<Interval> mergeIntervals(std::vector<Interval> intervals) {
    std::sort(intervals.begin(), intervals.end(),
              [](const Interval& a, const Interval& b) { return a.start < b.start; });
    std::vector<Interval> out;
    for (const Interval& next : intervals) {
        if (!out.empty() && next.start <= out.back().end) {
            out.back().end = std::max(out.back().end, next.end);
        } else {
            out.push_back(next);
        }
    }
    return out;
}

double totalLength(const std::vector<Interval>& disjoint) {
    double total = 0;
    for (const Interval& interval : disjoint) {
        total += interval.end - interval.start;
    }
    return total;
}

double intersectionLength(const std::vector<Interval>& a, const std::vector<Interval>& b) {
    double total = 0;
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const double start = std::max(a[i].start, b[j].start);
        const double end = std::min(a[i].end, b[j].end);
        if (end > start) {
            total += end - start;
        }
        // The one that ends first can meet nothing further on.
        if (a[i].end < b[j].end) {
            ++i;
        } else {
            ++j;
        }
    }
    return total;
}

std::vector<Interval> subtractIntervals(const std::vector<Interval>& from,
                                        const std::vector<Interval>& removed) {
    std::vector<Interval> left;
    size_t j = 0;
    for (Interval piece : from) {
        // The removed intervals that end before this piece begins touch no later one.
        while (j < removed.size() && removed[j].end <= piece.start) {
            ++j;
        }
        for (size_t k = j; k < removed.size() && removed[k].start < piece.end; ++k) {
            if (removed[k].start > piece.start) {
                left.push_back({piece.start, removed[k].start});
            }
            piece.start = std::max(piece.start, removed[k].end);
        }
        if (piece.end > piece.start) {
            left.push_back(piece);
        }
    }
    return left;
}

}  // namespace stepscope
