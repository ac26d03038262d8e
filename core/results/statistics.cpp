#include "results/statistics.h"

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

namespace {

// Ways to order n1 values of A among n2 of B with exactly u (A > B) pairs,
// for every u: the recurrence c(n1, n2, u) = c(n1-1, n2, u-n2) + c(n1, n2-1, u).
std::vector<double> exactUCounts(size_t n1, size_t n2) {
    const size_t maxU = n1 * n2;
    // table[i][j] holds the counts for sizes (i, j).
    std::vector<std::vector<std::vector<double>>> table(n1 + 1,
                                                        std::vector<std::vector<double>>(n2 + 1));
    for (size_t i = 0; i <= n1; ++i) {
        for (size_t j = 0; j <= n2; ++j) {
            std::vector<double>& counts = table[i][j];
            counts.assign(i * j + 1, 0);
            if (i == 0 || j == 0) {
                counts[0] = 1;
                continue;
            }
            for (size_t u = 0; u <= i * j; ++u) {
                const std::vector<double>& lastIsA = table[i - 1][j];
                const std::vector<double>& lastIsB = table[i][j - 1];
                counts[u] = (u >= j && u - j < lastIsA.size() ? lastIsA[u - j] : 0) +
                            (u < lastIsB.size() ? lastIsB[u] : 0);
            }
        }
    }
    std::vector<double> counts = table[n1][n2];
    counts.resize(maxU + 1, 0);
    return counts;
}

}  // namespace

double mannWhitneyPValue(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.empty() || b.empty()) {
        return 1;
    }
    const size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;
    std::vector<std::pair<double, bool>> all;  // value, from a
    for (double v : a) {
        all.emplace_back(v, true);
    }
    for (double v : b) {
        all.emplace_back(v, false);
    }
    std::sort(all.begin(), all.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    // Average ranks over ties; sum the tie sizes' t^3 - t for the variance.
    double rankSumA = 0, ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && all[j].first == all[i].first) {
            ++j;
        }
        const double rank = 0.5 * double(i + 1 + j);  // mean of ranks i+1 .. j
        for (size_t k = i; k < j; ++k) {
            rankSumA += all[k].second ? rank : 0;
        }
        const double t = double(j - i);
        ties += t * t * t - t;
        i = j;
    }
    const double uA = rankSumA - double(n1 * (n1 + 1)) / 2;
    const double product = double(n1 * n2);
    const double u = std::min(uA, product - uA);
    if (ties == 0 && n1 <= 30 && n2 <= 30) {
        const std::vector<double> counts = exactUCounts(n1, n2);
        const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
        double tail = 0;
        for (size_t k = 0; double(k) <= u; ++k) {
            tail += counts[k];
        }
        return std::min(1.0, 2 * tail / total);
    }
    const double mean = product / 2;
    const double variance = product / 12 * ((double(n) + 1) - ties / (double(n) * (double(n) - 1)));
    if (variance <= 0) {
        return 1;  // every value equal
    }
    const double z = std::max(0.0, std::abs(uA - mean) - 0.5) / std::sqrt(variance);
    return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

}  // namespace stepscope
