#pragma once

#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>

#include "config/run_config.h"

namespace stepscope {

// Reads a torch.save'd int64 (batch, seq) tensor of token ids for a model of
// `dims`: at least 2 per row, ids within the vocab, seq - 1 positions within
// the maximum context. Throws std::runtime_error saying what is wrong.
at::Tensor readTokenBatch(const std::string& path, const ModelDims& dims);

struct EvalResult {
    double loss = 0;  // mean next-token cross-entropy, nats
    int64_t predictions = 0;
};

// Loads `weightsPath` (torch.save'd state dict or training checkpoint) into
// the model of `config`, reads a torch.save'd int64 tensor of token ids
// (batch × seq) and returns the mean cross-entropy of predicting tokens[:, 1:]
// from tokens[:, :-1]. Throws std::runtime_error saying what is wrong.
EvalResult evaluateCheckpoint(const RunConfig& config, const std::string& weightsPath,
                              const std::string& tokensPath);

}  // namespace stepscope
