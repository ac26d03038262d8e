#pragma once

// Integer arithmetic that says when it overflows instead of wrapping: sizes
// that come from files and flags are multiplied with these before anything
// is allocated (config/limits.h).

#include <cstdint>
#include <initializer_list>
#include <optional>

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

}  // namespace stepscope
