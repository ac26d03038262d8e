#pragma once

#include <cstdint>
#include <string>

#include "bench/run_config.h"

namespace stepscope {

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
