#include "util/checked_math.h"

#include <charconv>
#include <cmath>

namespace stepscope {

namespace {

// The shortest text that reads back as `value`: "1.5", "1e+300", "inf".
std::string shortest(double value) {
    char text[32];
    const auto [end, error] = std::to_chars(text, text + sizeof text, value);
    return error == std::errc() ? std::string(text, end) : std::string("?");
}

// "must be ≥ 0, got -3" (below a bound that is the only one), "must be ≤ N,
// got X" (above it), else "X is out of range; allowed: A..B".
std::string outOfRange(const std::string& got, bool below, int64_t min, int64_t max) {
    constexpr int64_t lowest = std::numeric_limits<int64_t>::min();
    constexpr int64_t highest = std::numeric_limits<int64_t>::max();
    if (below && max == highest) {
        return "must be ≥ " + std::to_string(min) + ", got " + got;
    }
    if (!below && min == lowest) {
        return "must be ≤ " + std::to_string(max) + ", got " + got;
    }
    return got + " is out of range; allowed: " + std::to_string(min) + ".." + std::to_string(max);
}

}  // namespace

std::string integerProblem(double value, int64_t min, int64_t max) {
    if (integerFromDouble(value, min, max)) {
        return {};
    }
    if (!std::isfinite(value) || std::trunc(value) != value) {
        return "expected an integer, got " + shortest(value);
    }
    // Whole but outside min..max (or beyond int64 altogether).
    const auto whole = integerFromDouble(value);
    return outOfRange(whole ? std::to_string(*whole) : shortest(value), value < double(min), min,
                      max);
}

std::string integerRangeProblem(int64_t value, int64_t min, int64_t max) {
    if (value >= min && value <= max) {
        return {};
    }
    return outOfRange(std::to_string(value), value < min, min, max);
}

}  // namespace stepscope
