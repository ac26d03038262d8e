#pragma once

// Time intervals (µs) and the set arithmetic the analyses share: a union of
// kernels or collectives, its length, and how much of one set another covers.

#include <vector>

namespace stepscope {

struct Interval {
    double start = 0;
    double end = 0;
};

// Sorted and disjoint, as HTA's merge_kernel_intervals makes them (intervals
// that touch join).
std::vector<Interval> mergeIntervals(std::vector<Interval> intervals);

// Of disjoint intervals.
double totalLength(const std::vector<Interval>& disjoint);

// How long both run: of two sorted, disjoint sets (mergeIntervals' output).
double intersectionLength(const std::vector<Interval>& a, const std::vector<Interval>& b);

// What of `from` is left outside `removed`: of two sorted, disjoint sets.
std::vector<Interval> subtractIntervals(const std::vector<Interval>& from,
                                        const std::vector<Interval>& removed);

}  // namespace stepscope
