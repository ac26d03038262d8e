#pragma once

#include <vector>

namespace stepscope {

// Summary statistics of one series of step times. std is the sample standard
// deviation (n - 1), 0 for a single value; cv = std / mean.
struct Stats {
    int count = 0;
    double mean = 0;
    double std = 0;
    double median = 0;
    double min = 0;
    double max = 0;
    double cv = 0;
};

Stats summarize(std::vector<double> values);

// Whether two series of step times differ by more than their noise: the
// two-sided p-value of the Mann–Whitney U test. Rank-based, so one outlier
// step does not decide it. Exact for up to 30 values a side without ties,
// the normal approximation with tie and continuity corrections otherwise;
// 1 when either side is empty.
double mannWhitneyPValue(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace stepscope
