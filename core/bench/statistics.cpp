#include "bench/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace stepscope {

Stats summarize(std::vector<double> values) {
    Stats stats;
    stats.count = static_cast<int>(values.size());
    if (values.empty()) {
        return stats;
    }
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    stats.min = values.front();
    stats.max = values.back();
    stats.median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
    stats.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(n);
    if (n > 1) {
        double squares = 0;
        for (double v : values) {
            squares += (v - stats.mean) * (v - stats.mean);
        }
        stats.std = std::sqrt(squares / static_cast<double>(n - 1));
    }
    stats.cv = stats.mean != 0 ? stats.std / stats.mean : 0;
    return stats;
}

}  // namespace stepscope
