#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace stepscope {

// Summary statistics of one series of step times. std is the sample standard
// deviation (n - 1) and cv = std / mean; a single value has no spread, so
// both are 0 then and hasSpread() says to show them as "–".
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

// Whether std and cv mean anything: two values or more.
inline bool hasSpread(const Stats& stats) {
    return stats.count >= 2;
}

// The two-sided p-value of the Mann–Whitney U test of two series of step
// times: rank-based, so one outlier step does not decide it. Exact for up to
// kExactTestLimit values in all, ties included: the permutation distribution
// of the rank sum (mid-ranks for ties), p = 2 × the smaller tail, at most 1.
// Beyond that the normal approximation with tie and continuity corrections;
// 1 when either side is empty.
double mannWhitneyPValue(const std::vector<double>& a, const std::vector<double>& b);
inline constexpr size_t kExactTestLimit = 60;

// The smallest two-sided p that any n1 values against n2 can give: both
// sides wholly apart, 2 / C(n1 + n2, n1). 3 steps against 3 can never go
// below 0.1; 4 against 4 can reach 0.029.
double leastPValue(size_t n1, size_t n2);

// What a comparison of two runs' step times can say (compareTimes).
enum class Verdict {
    Faster,       // b's steps are faster than a's: p < kNoiseAlpha
    Slower,       // b's are slower
    WithinNoise,  // the test could have told them apart and did not
    TooFewSteps,  // no test at these sizes can reach kNoiseAlpha
};
const char* toString(Verdict verdict);  // "faster", "slower", "within noise", "too few steps"

inline constexpr double kNoiseAlpha = 0.05;

// Run b's step times against run a's, the reference:
// - ratio: a's median ÷ b's (above 1, b is faster): the effect size, always;
// - the interval of that ratio at 95% confidence, or at the most the sizes
//   allow (ciLevel below 0.95): the exact, distribution-free interval of
//   the Mann–Whitney test inverted on the log times (Hodges–Lehmann: order
//   statistics of the pairwise ratios a_i / b_j);
// - pValue: the exact test's (mannWhitneyPValue), where the sizes can reach
//   p < kNoiseAlpha at all (leastPValue); none otherwise, and the verdict is
//   TooFewSteps with the counts that could decide (neededA, neededB);
// - faster or slower when p < kNoiseAlpha (by which side ranks lower), else
//   within noise.
struct TimeComparison {
    size_t countA = 0;
    size_t countB = 0;
    double medianA = 0;
    double medianB = 0;
    double ratio = 0;  // 0 when either side is empty or b's median is not above 0
    std::optional<double> ciLow;
    std::optional<double> ciHigh;
    double ciLevel = 0;  // the interval's confidence, 0 without one
    std::optional<double> pValue;
    Verdict verdict = Verdict::TooFewSteps;
    size_t neededA = 0;  // TooFewSteps: steps a side that could decide
    size_t neededB = 0;
    bool overlap = false;  // the ranges of a's and b's steps overlap
};
TimeComparison compareTimes(const std::vector<double>& a, const std::vector<double>& b);

// The fewest steps that let a test decide at kNoiseAlpha, growing the
// smaller side first: (4, 4) for 3 against 3, (3, 5) for 1 against 5.
std::pair<size_t, size_t> stepsThatCanDecide(size_t countA, size_t countB);

}  // namespace stepscope
