#include "results/statistics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <tuple>

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

// Twice each value's mid-rank among all of a and b (an integer, so that a
// tie's mean rank stays exact), a's first.
struct DoubledRanks {
    std::vector<int64_t> ranks;  // a's n1, then b's
    size_t n1 = 0;
    double ties = 0;  // the sum of t^3 - t over the tie groups
};

DoubledRanks doubledRanks(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<std::pair<double, size_t>> all;  // value, its place in a then b
    for (size_t i = 0; i < a.size(); ++i) {
        all.emplace_back(a[i], i);
    }
    for (size_t i = 0; i < b.size(); ++i) {
        all.emplace_back(b[i], a.size() + i);
    }
    std::sort(all.begin(), all.end());
    DoubledRanks out{std::vector<int64_t>(all.size()), a.size(), 0};
    for (size_t i = 0; i < all.size();) {
        size_t j = i;
        while (j < all.size() && all[j].first == all[i].first) {
            ++j;
        }
        for (size_t k = i; k < j; ++k) {
            out.ranks[all[k].second] = int64_t(i + 1 + j);  // ranks i+1 .. j, doubled mean
        }
        const double t = double(j - i);
        out.ties += t * t * t - t;
        i = j;
    }
    return out;
}

// For every sum s, how many of the subsets of `ranks` of size `size` add up
// to s: the rank sum's distribution when every split of the values between
// the two runs is equally likely.
std::vector<double> subsetSumCounts(const std::vector<int64_t>& ranks, size_t size) {
    const int64_t total = std::accumulate(ranks.begin(), ranks.end(), int64_t{0});
    std::vector<std::vector<double>> counts(size + 1, std::vector<double>(size_t(total) + 1, 0));
    counts[0][0] = 1;
    size_t seen = 0;
    for (const int64_t rank : ranks) {
        ++seen;
        for (size_t k = std::min(size, seen); k >= 1; --k) {
            for (int64_t s = total; s >= rank; --s) {
                counts[k][size_t(s)] += counts[k - 1][size_t(s - rank)];
            }
        }
    }
    return counts[size];
}

double binomial(size_t n, size_t k) {
    double out = 1;
    for (size_t i = 1; i <= k; ++i) {
        out = out * double(n - k + i) / double(i);
    }
    return out;
}

}  // namespace

double mannWhitneyPValue(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.empty() || b.empty()) {
        return 1;
    }
    const DoubledRanks r = doubledRanks(a, b);
    const size_t n1 = a.size(), n = r.ranks.size();
    const int64_t observed =
        std::accumulate(r.ranks.begin(), r.ranks.begin() + long(n1), int64_t{0});
    if (n <= kExactTestLimit) {
        const std::vector<double> counts = subsetSumCounts(r.ranks, n1);
        const double all = std::accumulate(counts.begin(), counts.end(), 0.0);
        double below = 0, above = 0;
        for (size_t s = 0; s < counts.size(); ++s) {
            below += int64_t(s) <= observed ? counts[s] : 0;
            above += int64_t(s) >= observed ? counts[s] : 0;
        }
        return std::min(1.0, 2 * std::min(below, above) / all);
    }
    const double uA = double(observed) / 2 - double(n1 * (n1 + 1)) / 2;
    const double product = double(n1 * b.size());
    const double mean = product / 2;
    const double variance =
        product / 12 * ((double(n) + 1) - r.ties / (double(n) * (double(n) - 1)));
    if (variance <= 0) {
        return 1;  // every value equal
    }
    const double z = std::max(0.0, std::abs(uA - mean) - 0.5) / std::sqrt(variance);
    return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

double leastPValue(size_t n1, size_t n2) {
    if (n1 == 0 || n2 == 0) {
        return 1;
    }
    return std::min(1.0, 2 / binomial(n1 + n2, std::min(n1, n2)));
}

const char* toString(Verdict verdict) {
    switch (verdict) {
        case Verdict::Faster:
            return "faster";
        case Verdict::Slower:
            return "slower";
        case Verdict::WithinNoise:
            return "within noise";
        case Verdict::TooFewSteps:
            break;
    }
    return "too few steps";
}

std::pair<size_t, size_t> stepsThatCanDecide(size_t countA, size_t countB) {
    const size_t small = std::min(countA, countB), large = std::max(countA, countB);
    auto oriented = [&](size_t forSmall, size_t forLarge) {
        return countA <= countB ? std::pair(forSmall, forLarge) : std::pair(forLarge, forSmall);
    };
    for (size_t m = std::max<size_t>(small, 1); m <= large; ++m) {
        if (leastPValue(m, large) < kNoiseAlpha) {
            return oriented(m, large);
        }
    }
    size_t n = std::max<size_t>(large, 1);
    while (leastPValue(n, n) >= kNoiseAlpha) {
        ++n;
    }
    return {n, n};
}

namespace {

// How many of the n1·n2 pairwise ratios the interval leaves out at each
// end, and the confidence that leaves: the largest k with P(U < k) ≤ α/2
// under the null (no ties), at least 1 (then below 95%: the sizes allow no
// more). Exact up to kExactTestLimit values, the normal approximation beyond.
std::pair<size_t, double> intervalDepth(size_t n1, size_t n2) {
    const double pairs = double(n1 * n2);
    if (n1 + n2 > kExactTestLimit) {
        const double z = 1.959963984540054;  // the normal's 97.5th percentile
        const double spread = std::sqrt(pairs * double(n1 + n2 + 1) / 12);
        const double k = std::floor(pairs / 2 - z * spread);
        return {size_t(std::max(1.0, k)), k >= 1 ? 1 - kNoiseAlpha : 0};
    }
    std::vector<int64_t> ranks(n1 + n2);
    std::iota(ranks.begin(), ranks.end(), int64_t{1});
    const std::vector<double> counts =
        subsetSumCounts(ranks, n1);  // by rank sum; U = sum - n1(n1+1)/2
    const double all = std::accumulate(counts.begin(), counts.end(), 0.0);
    const size_t offset = n1 * (n1 + 1) / 2;
    double below = 0;  // P(U < k)
    size_t k = 0;
    while (offset + k < counts.size()) {
        const double next = below + counts[offset + k] / all;
        if (next > kNoiseAlpha / 2 && k > 0) {
            break;
        }
        below = next;
        ++k;
    }
    return {k, 1 - 2 * below};
}

void ratioInterval(const std::vector<double>& a, const std::vector<double>& b,
                   TimeComparison& out) {
    std::vector<double> ratios;
    ratios.reserve(a.size() * b.size());
    for (const double x : a) {
        for (const double y : b) {
            if (y <= 0 || x < 0) {
                return;  // not step times: no interval
            }
            ratios.push_back(x / y);
        }
    }
    std::sort(ratios.begin(), ratios.end());
    const auto [k, level] = intervalDepth(a.size(), b.size());
    if (k == 0 || 2 * k > ratios.size() + 1) {
        return;
    }
    out.ciLow = ratios[k - 1];
    out.ciHigh = ratios[ratios.size() - k];
    out.ciLevel = level;
}

}  // namespace

TimeComparison compareTimes(const std::vector<double>& a, const std::vector<double>& b) {
    TimeComparison out;
    out.countA = a.size();
    out.countB = b.size();
    std::tie(out.neededA, out.neededB) = stepsThatCanDecide(a.size(), b.size());
    if (a.empty() || b.empty()) {
        return out;
    }
    const Stats sa = summarize(a), sb = summarize(b);
    out.medianA = sa.median;
    out.medianB = sb.median;
    out.ratio = sb.median > 0 ? sa.median / sb.median : 0;
    out.overlap = std::max(sa.min, sb.min) <= std::min(sa.max, sb.max);
    ratioInterval(a, b, out);
    if (leastPValue(a.size(), b.size()) >= kNoiseAlpha) {
        return out;  // no split of these steps could reach it
    }
    out.neededA = out.neededB = 0;
    out.pValue = mannWhitneyPValue(a, b);
    if (*out.pValue >= kNoiseAlpha) {
        out.verdict = Verdict::WithinNoise;
        return out;
    }
    // Which side ranks lower: pairs in which b's step is the shorter.
    int64_t bShorter = 0;
    for (const double x : a) {
        for (const double y : b) {
            bShorter += y < x ? 1 : y > x ? -1 : 0;
        }
    }
    out.verdict = bShorter > 0 ? Verdict::Faster : Verdict::Slower;
    return out;
}

}  // namespace stepscope
