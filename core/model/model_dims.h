#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepscope {

// The shape of a GPT-style Transformer LM (design.md): embedding, N pre-norm
// blocks, final RMSNorm, untied LM head. Plain data, no torch.
struct ModelDims {
    std::string name = "custom";  // preset name, or "custom"
    int64_t dModel = 0;
    int64_t dFf = 0;
    int64_t layers = 0;
    int64_t heads = 0;
    int64_t vocabSize = 10000;
    int64_t maxContext = 2048;  // RoPE tables are built up to this length
    double ropeTheta = 10000.0;

    int64_t headDim() const { return heads > 0 ? dModel / heads : 0; }
};

// The presets of design.md, plus "nano" and "tiny" for quick CPU runs and tests.
const std::vector<ModelDims>& modelPresets();
std::optional<ModelDims> findPreset(const std::string& name);
std::vector<std::string> presetNames();

// Closed-form parameter count: 2·V·d (embedding and LM head) +
// L·(4d² + 3·d·d_ff + 2d) + d (final norm).
int64_t parameterCount(const ModelDims& dims);

}  // namespace stepscope
