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

}  // namespace stepscope
