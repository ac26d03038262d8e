// validate(): each field alone as the table declares it (its range, the
// engines that take it: checkDeclaredFields), then the rules between fields.

#include <algorithm>

#include "config/config_field.h"
#include "config/limits.h"
#include "config/run_config.h"
#include "util/strings.h"

namespace stepscope {

namespace {

using Fail = std::function<void(const std::string&, const std::string&)>;

bool containsName(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

// The model's sizes within the world's limits (config/limits.h), and the
// heads they must split into for RoPE.
void validateModelDims(const ModelDims& m, const Fail& fail) {
    for (const auto& problem : modelLimitProblems(m)) {
        fail(problem.field, problem.message);
    }
    if (m.dModel > 0 && m.heads > 0) {
        if (m.dModel % m.heads != 0) {
            fail("heads", "d_model " + std::to_string(m.dModel) + " is not divisible by heads " +
                              std::to_string(m.heads) + "; allowed: a divisor of d_model");
        } else if (m.headDim() % 2 != 0) {
            fail("heads", "head dimension d_model/heads = " + std::to_string(m.headDim()) +
                              " is odd; RoPE rotates pairs, so it must be even");
        }
    }
}

// The input's shape against the model and the tensors it makes.
void validateRunShape(const RunConfig& config, const Fail& fail) {
    const ModelDims& m = config.model;
    const bool beyondModel =
        config.contextLength > 0 && m.maxContext > 0 && config.contextLength > m.maxContext;
    if (beyondModel) {
        fail("ctx", "context length " + std::to_string(config.contextLength) +
                        " exceeds the model's maximum context " + std::to_string(m.maxContext) +
                        "; allowed: 1.." + std::to_string(m.maxContext) +
                        " (raise it with --max-ctx)");
    }
    for (const auto& problem : workloadLimitProblems(m, config.contextLength, config.batchSize)) {
        if (!(beyondModel && problem.field == "ctx")) {
            fail(problem.field, problem.message);
        }
    }
}

// The device, and what exists on CUDA only: TF32, kernel traces, the allocator's history.
void validateDevice(const RunConfig& config, const ValidationContext& context, const Fail& fail) {
    if (config.device == DeviceKind::Cuda && !context.cudaAvailable) {
        fail("device", "'cuda' was asked for, but no CUDA device is available here; allowed: cpu");
    }
    if (config.tf32 && config.device != DeviceKind::Cuda) {
        fail("tf32", "TF32 is a CUDA tensor-core mode; allowed only with --device cuda");
    }
    if (config.traceKernels && config.device != DeviceKind::Cuda) {
        fail("kernels",
             "CUDA kernels are traced on a GPU; allowed only with --device cuda "
             "(use --ops for operators on the CPU)");
    }
    if (!config.cudaSnapshotPath.empty() && config.device != DeviceKind::Cuda) {
        fail("cuda-snapshot",
             "the caching allocator's history exists on CUDA only; allowed only "
             "with --device cuda (use --memory and export --memviz on the CPU)");
    }
}

// The LibTorch engine's own attention backends (the registry's, in `context`).
void validateLibTorchAttention(const RunConfig& config, const ValidationContext& context,
                               const Fail& fail) {
    if (containsName(pythonAttentionBackends(), config.attention)) {
        fail("attention", "'" + config.attention +
                              "' is StepScope's FlashAttention-2 in Python, run by the Python "
                              "worker; allowed only with --engine pytorch or pytorch-compile");
    } else if (!containsName(context.attentionBackends, config.attention)) {
        fail("attention", "unknown backend '" + config.attention +
                              "'; allowed: " + joinNames(context.attentionBackends));
    }
}

// The worker's engines: the worker model's backends or the user's attention,
// and the user's Python names.
void validateWorkerInputs(const RunConfig& config, const Fail& fail) {
    // With the user's attention, `attention` only names it for the file's reader.
    if (config.pyAttention.empty() && !containsName(workerAttentionBackends(), config.attention)) {
        fail("attention", "the " + toString(config.engine) + " engine has no backend '" +
                              config.attention +
                              "'; allowed: " + joinNames(workerAttentionBackends()) +
                              ", or your own with --py-attention");
    }
    if (!config.pyModel.empty() && !isPythonTarget(config.pyModel)) {
        fail("py-model", "'" + config.pyModel +
                             "' is not MODULE:CALLABLE with Python names (for example "
                             "my_model:build; a file my-model.py cannot be imported)");
    }
    if (config.pyAttention.empty()) {
        return;
    }
    if (!isPythonTarget(config.pyAttention)) {
        fail("py-attention", "'" + config.pyAttention +
                                 "' is not MODULE:NAME with Python names (for example "
                                 "my_flash:FlashAttention; a file my-flash.py cannot be imported)");
    } else if (!config.pyModel.empty()) {
        fail("py-attention",
             "calls your attention in the reference model; --py-model brings its own "
             "attention (give one of the two)");
    }
}

// Activation checkpointing: a group needs blocks, and inference has no backward.
void validateCheckpointing(const RunConfig& config, const Fail& fail) {
    const CheckpointStrategy& strategy = config.activationCheckpoint;
    if (strategy.kind == CheckpointStrategy::Kind::Groups && strategy.groupSize < 1) {
        fail("activation-checkpoint", "a group needs 1 or more blocks, got " +
                                          std::to_string(strategy.groupSize) +
                                          "; allowed: " + kCheckpointStrategyChoices);
    }
    if (strategy.kind != CheckpointStrategy::Kind::Off && config.mode == RunMode::Inference) {
        fail("activation-checkpoint",
             "inference keeps nothing for backward, so there is nothing to recompute; allowed "
             "with --mode forward, forward-backward or train-step (or off)");
    }
}

// --cuda-graph: what a captured step cannot be combined with, each named with
// the flag that conflicts (the engine is the table's to say).
void validateCudaGraph(const RunConfig& config, const Fail& fail) {
    if (!config.cudaGraph) {
        return;
    }
    if (config.device != DeviceKind::Cuda) {
        fail("cuda-graph",
             "--cuda-graph captures the step as a CUDA graph; allowed only with "
             "--device cuda, not --device " +
                 toString(config.device));
    }
    if (config.traceOps) {
        fail("cuda-graph",
             "--cuda-graph with --ops: a replayed graph runs no operators on the host, so there "
             "are none to trace; drop one of the two");
    }
    if (hasOptimizer(config.mode) && config.optimizer != OptimizerKind::AdamWFused) {
        fail("cuda-graph", "--cuda-graph with --optimizer " + toString(config.optimizer) +
                               ": its step count and bias corrections are host numbers, which a "
                               "captured step would replay unchanged; allowed: --optimizer "
                               "adamw-fused (step counters on the device)");
    }
    if (config.traceMemory) {
        fail("cuda-graph",
             "--cuda-graph with --memory: a replay allocates nothing (the graph's memory is taken "
             "once, at capture), so the memory timeline would show the capture, not the steps; "
             "drop one of the two");
    }
    if (config.warmupSteps < 1) {
        fail("cuda-graph",
             "--cuda-graph with --warmup 0: the capture needs at least one eager step on its "
             "stream first (cuBLAS, autograd and the optimizer's state are made there, and "
             "capture cannot make them); allowed: --warmup 1 or more");
    }
}

}  // namespace

std::vector<ConfigError> validate(const RunConfig& config, const ValidationContext& context) {
    std::vector<ConfigError> errors;
    const Fail fail = [&errors](const std::string& field, const std::string& message) {
        errors.push_back({field, message});
    };
    validateModelDims(config.model, fail);
    validateRunShape(config, fail);
    checkDeclaredFields(config, fail);
    validateDevice(config, context, fail);
    if (config.engine == Engine::LibTorch) {
        validateLibTorchAttention(config, context, fail);
    } else {
        validateWorkerInputs(config, fail);
    }
    validateCheckpointing(config, fail);
    validateCudaGraph(config, fail);
    return errors;
}

}  // namespace stepscope
