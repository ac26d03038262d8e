#include "config/limits.h"

#include <cmath>
#include <optional>
#include <sstream>
#include <thread>

#include "util/checked_math.h"

namespace stepscope {

namespace {

// "out of range" with the value and the range, or nothing where it is in it.
std::optional<LimitProblem> outOfRange(const IntegerLimit& limit, int64_t value) {
    if (value >= limit.min && value <= limit.max) {
        return std::nullopt;
    }
    const std::string bound =
        value < limit.min ? "≥ " + std::to_string(limit.min) : "≤ " + std::to_string(limit.max);
    return LimitProblem{limit.field,
                        "must be " + bound + ", got " + std::to_string(value) + "; " +
                            allowedRange(limit.min, limit.max),
                        value > limit.max};
}

// A tensor of `what` with `product` elements (nullopt: it overflowed int64).
std::optional<LimitProblem> tooManyElements(const char* field, const std::string& formula,
                                            const std::string& what, std::optional<int64_t> product,
                                            const std::string& smaller) {
    if (product && *product <= kMaxTensorElements) {
        return std::nullopt;
    }
    const std::string count = product ? " = " + std::to_string(*product) : " overflows int64:";
    return LimitProblem{field, formula + count + " elements of " + what +
                                   ", over the 2^50 one tensor may have (its bytes and their "
                                   "sums must fit int64); allowed: a smaller " +
                                   smaller};
}

}  // namespace

std::string allowedRange(int64_t min, int64_t max) {
    return "allowed: " + std::to_string(min) + ".." + std::to_string(max);
}

std::vector<LimitProblem> modelLimitProblems(const ModelDims& dims) {
    std::vector<LimitProblem> problems;
    const std::pair<const IntegerLimit&, int64_t> fields[] = {
        {kDModelLimit, dims.dModel},   {kDFfLimit, dims.dFf},
        {kLayersLimit, dims.layers},   {kHeadsLimit, dims.heads},
        {kVocabLimit, dims.vocabSize}, {kMaxContextLimit, dims.maxContext}};
    for (const auto& [limit, value] : fields) {
        if (auto problem = outOfRange(limit, value)) {
            problems.push_back(std::move(*problem));
        }
    }
    // RoPE's base: zero, negative or infinite gives frequencies of NaN.
    if (!(dims.ropeTheta > 0) || !std::isfinite(dims.ropeTheta)) {
        std::ostringstream got;
        got << dims.ropeTheta;
        problems.push_back({"rope_theta",
                            "must be a positive number (RoPE's base, 10000 in the "
                            "presets), got " +
                                got.str(),
                            false});
    }
    if (!problems.empty()) {
        return problems;
    }
    // In range, the parameters are at most about 2^46; checked all the same.
    const int64_t d = dims.dModel;
    const auto attention = checkedProduct({4, d, d});
    const auto mlp = checkedProduct({3, d, dims.dFf});
    const auto embeddings = checkedProduct({2, dims.vocabSize, d});
    std::optional<int64_t> parameters;
    if (attention && mlp && embeddings) {
        if (const auto perLayer = checkedSum({*attention, *mlp, 2 * d})) {
            if (const auto blocks = checkedMultiply(dims.layers, *perLayer)) {
                parameters = checkedSum({*blocks, *embeddings, d});
            }
        }
    }
    if (auto problem = tooManyElements("d_model", "the parameter count", "parameters", parameters,
                                       "d_model, d_ff, layers or vocab")) {
        problems.push_back(std::move(*problem));
    }
    return problems;
}

std::vector<LimitProblem> workloadLimitProblems(const ModelDims& dims, int64_t contextLength,
                                                int64_t batchSize) {
    std::vector<LimitProblem> problems;
    for (const auto& [limit, value] :
         {std::pair{kContextLimit, contextLength}, std::pair{kBatchLimit, batchSize}}) {
        if (auto problem = outOfRange(limit, value)) {
            problems.push_back(std::move(*problem));
        }
    }
    if (!problems.empty() || !modelLimitProblems(dims).empty()) {
        return problems;
    }
    const int64_t b = batchSize, t = contextLength;
    const std::optional<LimitProblem> tensors[] = {
        tooManyElements("batch", "batch × ctx × vocab", "logits",
                        checkedProduct({b, t, dims.vocabSize}), "batch, ctx or vocab"),
        tooManyElements("batch", "batch × heads × ctx × ctx", "attention scores",
                        checkedProduct({b, dims.heads, t, t}), "batch, ctx or heads"),
        tooManyElements("batch", "batch × ctx × d_ff", "MLP activations",
                        checkedProduct({b, t, dims.dFf}), "batch, ctx or d_ff"),
        tooManyElements("batch", "layers × batch × ctx × d_model", "activations kept for backward",
                        checkedProduct({dims.layers, b, t, dims.dModel}),
                        "batch, ctx, layers or d_model"),
    };
    for (const auto& problem : tensors) {
        if (problem) {
            problems.push_back(*problem);
        }
    }
    return problems;
}

int64_t maxCpuThreads() {
    const unsigned hardware = std::thread::hardware_concurrency();
    return 4 * int64_t(hardware > 0 ? hardware : 1);
}

}  // namespace stepscope
