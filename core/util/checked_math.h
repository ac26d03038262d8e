#pragma once

// Integer arithmetic that says when it overflows instead of wrapping: sizes
// that come from files and flags are multiplied with these before anything
// is allocated (config/limits.h).

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

namespace stepscope {

// a × b, or nullopt where the product does not fit int64.
constexpr std::optional<int64_t> checkedMultiply(int64_t a, int64_t b) {
    int64_t product = 0;
    if (__builtin_mul_overflow(a, b, &product)) {
        return std::nullopt;
    }
    return product;
}

// a + b, or nullopt where the sum does not fit int64.
constexpr std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
    int64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) {
        return std::nullopt;
    }
    return sum;
}

// The sum of all `terms` (0 for none), or nullopt where any partial sum
// does not fit int64.
constexpr std::optional<int64_t> checkedSum(std::initializer_list<int64_t> terms) {
    std::optional<int64_t> sum = 0;
    for (const int64_t term : terms) {
        sum = checkedAdd(*sum, term);
        if (!sum) {
            return std::nullopt;
        }
    }
    return sum;
}

// The product of all `factors` (1 for none), or nullopt where any partial
// product does not fit int64.
constexpr std::optional<int64_t> checkedProduct(std::initializer_list<int64_t> factors) {
    std::optional<int64_t> product = 1;
    for (const int64_t factor : factors) {
        product = checkedMultiply(*product, factor);
        if (!product) {
            return std::nullopt;
        }
    }
    return product;
}

// A number a file wrote where a whole number belongs (JSON reads every
// number as a double once it has a fraction or an exponent), as an int64 in
// min..max; nullopt for a fraction (1.5), NaN, an infinity, or a value
// outside min..max. Casting a double that does not fit int64 is undefined
// behaviour (1e300 came out as -2^63): every reader converts through this.
constexpr std::optional<int64_t> integerFromDouble(
    double value, int64_t min = std::numeric_limits<int64_t>::min(),
    int64_t max = std::numeric_limits<int64_t>::max()) {
    // [-2^63, 2^63) is where the cast is defined; both ends are exact doubles.
    if (!(value >= -0x1p63 && value < 0x1p63)) {
        return std::nullopt;
    }
    const auto whole = static_cast<int64_t>(value);
    if (static_cast<double>(whole) != value || whole < min || whole > max) {
        return std::nullopt;
    }
    return whole;
}

// Why `value` is not a whole number in min..max, said after the field's name:
// "expected an integer, got 1.5", "must be ≥ 0, got -3", "must be ≤
// 2147483647, got 1e+300", "5 is out of range; allowed: 0..3". Empty when it is one.
std::string integerProblem(double value, int64_t min = std::numeric_limits<int64_t>::min(),
                           int64_t max = std::numeric_limits<int64_t>::max());
// The same for a value that is whole already (read as an integer).
std::string integerRangeProblem(int64_t value, int64_t min = std::numeric_limits<int64_t>::min(),
                                int64_t max = std::numeric_limits<int64_t>::max());

}  // namespace stepscope
