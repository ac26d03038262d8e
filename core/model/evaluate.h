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

// What eval runs, as a config: `config` in inference mode with the batch and
// context of `tokens` (readTokenBatch's), so that validate()'s limits and the
// CPU pre-flight (estimate/fit_check.h) hold eval to what they hold `run` to
// before any of its tensors is made.
RunConfig evalConfig(RunConfig config, const at::Tensor& tokens);

// Loads `weightsPath` (torch.save'd state dict or training checkpoint) into
// the model of `config` and returns the mean cross-entropy of predicting
// tokens[:, 1:] from tokens[:, :-1] (`tokens` as readTokenBatch gives them).
// Throws std::runtime_error saying what is wrong.
EvalResult evaluateTokens(const RunConfig& config, const std::string& weightsPath,
                          const at::Tensor& tokens);
// The same, the tokens read from `tokensPath` (no pre-flight: the CLI's eval has it).
EvalResult evaluateCheckpoint(const RunConfig& config, const std::string& weightsPath,
                              const std::string& tokensPath);

}  // namespace stepscope
