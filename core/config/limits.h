#pragma once

// Limits that come from the world, not from this machine: no model has more
// than 1,024 blocks or a vocabulary of 2^24 tokens, and every tensor a run
// makes must have few enough elements that its bytes, and the sums of them
// the memory estimate adds up, fit int64. Every place a config comes from
// (flags, run files, model_config.json, a state dict's shape) is held to
// them before anything is allocated.

#include <cstdint>
#include <string>
#include <vector>

#include "config/model_dims.h"

namespace stepscope {

// One number's allowed range, named as the run file and flags name it.
struct IntegerLimit {
    const char* field;
    int64_t min;
    int64_t max;
};

inline constexpr IntegerLimit kDModelLimit{"d_model", 1, 65536};
inline constexpr IntegerLimit kDFfLimit{"d_ff", 1, 262144};
inline constexpr IntegerLimit kLayersLimit{"layers", 1, 1024};
inline constexpr IntegerLimit kHeadsLimit{"heads", 1, 1024};
inline constexpr IntegerLimit kVocabLimit{"vocab", 1, (int64_t(1) << 24) - 1};
inline constexpr IntegerLimit kMaxContextLimit{"max_context", 1, int64_t(1) << 20};
inline constexpr IntegerLimit kContextLimit{"ctx", 1, int64_t(1) << 20};
inline constexpr IntegerLimit kBatchLimit{"batch", 1, int64_t(1) << 20};

// The most elements one tensor of a run may have: 2^50. Its bytes (up to 16
// per element: fp32 values, gradients and AdamW's two moments) and the few
// dozen such terms the memory estimate sums stay far below 2^63.
inline constexpr int64_t kMaxTensorElements = int64_t(1) << 50;

// "allowed: 1..1024": how messages give a range.
std::string allowedRange(int64_t min, int64_t max);

// A problem with one field: its name and what is allowed.
struct LimitProblem {
    std::string field;
    std::string message;
    // Over the maximum (or a tensor too large), as opposed to under the
    // minimum: what makes a reader loop or allocate without bound.
    bool overMaximum = true;
};

// Each of the model's numbers against its limit, and the parameter count
// against kMaxTensorElements.
std::vector<LimitProblem> modelLimitProblems(const ModelDims& dims);

// The run's context and batch against their limits, and every large tensor
// of the step (logits, attention scores, MLP activations, what all blocks
// keep for backward) against kMaxTensorElements, multiplied without overflow.
// Assumes the model's own numbers are in range (check those first).
std::vector<LimitProblem> workloadLimitProblems(const ModelDims& dims, int64_t contextLength,
                                                int64_t batchSize);

// CPU threads a run may ask for: 4 × this machine's hardware threads. More
// only adds switching, and a huge count exhausts the process table.
int64_t maxCpuThreads();

}  // namespace stepscope
