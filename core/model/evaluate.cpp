#include "model/evaluate.h"

#include <c10/core/InferenceMode.h>

#include <stdexcept>

#include "attention/attention_registry.h"
#include "model/checkpoint.h"
#include "model/transformer.h"

namespace stepscope {

at::Tensor readTokenBatch(const std::string& path, const ModelDims& dims) {
    const at::Tensor tokens = readTensor(path);
    if (tokens.dim() != 2 || tokens.scalar_type() != at::kLong) {
        throw std::runtime_error("tokens: '" + path +
                                 "' must hold an int64 tensor of shape (batch, seq)");
    }
    if (tokens.size(0) == 0) {
        throw std::runtime_error("tokens: '" + path + "' holds no rows (shape (0, " +
                                 std::to_string(tokens.size(1)) + ")); need at least one sequence");
    }
    if (tokens.size(1) < 2) {
        throw std::runtime_error("tokens: need at least 2 tokens per row to predict one");
    }
    if (tokens.min().item<int64_t>() < 0 || tokens.max().item<int64_t>() >= dims.vocabSize) {
        throw std::runtime_error("tokens: ids must lie in 0.." +
                                 std::to_string(dims.vocabSize - 1) + " (the vocab)");
    }
    if (tokens.size(1) - 1 > dims.maxContext) {
        throw std::runtime_error("tokens: " + std::to_string(tokens.size(1) - 1) +
                                 " positions exceed the model's maximum context " +
                                 std::to_string(dims.maxContext) + " (see --max-ctx)");
    }
    return tokens;
}

RunConfig evalConfig(RunConfig config, const at::Tensor& tokens) {
    config.mode = RunMode::Inference;
    config.batchSize = tokens.size(0);
    config.contextLength = tokens.size(1) - 1;
    return config;
}

EvalResult evaluateTokens(const RunConfig& config, const std::string& weightsPath,
                          const at::Tensor& tokens) {
    const at::Device device(config.device == DeviceKind::Cuda ? at::kCUDA : at::kCPU, 0);

    TransformerLM model(config.model,
                        std::shared_ptr<AttentionBackend>(makeAttentionBackend(config.attention)),
                        at::TensorOptions().device(device).dtype(at::kFloat));
    loadStateDict(*model, readStateDict(weightsPath));

    c10::InferenceMode inference;
    const at::Tensor onDevice = tokens.to(device);
    const int64_t positions = tokens.size(1) - 1;
    const at::Tensor logits = model->forward(onDevice.narrow(1, 0, positions));
    EvalResult result;
    result.loss = crossEntropyLoss(logits, onDevice.narrow(1, 1, positions)).item<double>();
    result.predictions = tokens.size(0) * positions;
    return result;
}

EvalResult evaluateCheckpoint(const RunConfig& config, const std::string& weightsPath,
                              const std::string& tokensPath) {
    return evaluateTokens(config, weightsPath, readTokenBatch(tokensPath, config.model));
}

}  // namespace stepscope
