#pragma once

#include <string>
#include <vector>

#include "config/run_config.h"

namespace stepscope {

// What autocast actually produces in one forward and backward of a config's
// model: the dtype of the parameters, of every module's output, of the loss
// and of the gradients.
struct DtypeRow {
    std::string what;  // "parameters", a module path ("layers.0.attn.q_proj"), "loss", "gradients"
    std::string kind;  // "Linear", "RMSNorm", "SwiGLU", "CausalSelfAttention", "TransformerLM", …
    std::string dtype;  // "float32", "bfloat16", …
};

// Throws InvalidConfigError for a bad config; precision must be bf16 or fp16.
std::vector<DtypeRow> inspectDtypeFlow(const RunConfig& config);

}  // namespace stepscope
