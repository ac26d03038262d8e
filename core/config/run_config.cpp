#include "config/run_config.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string_view>

#include "config/limits.h"
#include "util/strings.h"

namespace stepscope {

InvalidConfigError::InvalidConfigError(std::vector<ConfigError> errors)
    : std::invalid_argument(describe(errors)), errors_(std::move(errors)) {}

namespace {

template <typename Enum>
struct EnumName {
    Enum value;
    const char* name;
};

constexpr EnumName<RunMode> kModes[] = {{RunMode::Inference, "inference"},
                                        {RunMode::Forward, "forward"},
                                        {RunMode::ForwardBackward, "forward-backward"},
                                        {RunMode::TrainStep, "train-step"}};
constexpr EnumName<Precision> kPrecisions[] = {
    {Precision::Fp32, "fp32"}, {Precision::Bf16, "bf16"}, {Precision::Fp16, "fp16"}};
constexpr EnumName<DeviceKind> kDevices[] = {{DeviceKind::Cpu, "cpu"}, {DeviceKind::Cuda, "cuda"}};
constexpr EnumName<Engine> kEngines[] = {{Engine::LibTorch, "libtorch"},
                                         {Engine::PyTorch, "pytorch"},
                                         {Engine::PyTorchCompile, "pytorch-compile"}};
constexpr EnumName<LossKind> kLosses[] = {{LossKind::Full, "full"}, {LossKind::Chunked, "chunked"}};
constexpr EnumName<OptimizerKind> kOptimizers[] = {{OptimizerKind::AdamW, "adamw"},
                                                   {OptimizerKind::AdamWForeach, "adamw-foreach"},
                                                   {OptimizerKind::AdamWFused, "adamw-fused"}};

template <typename Enum, size_t N>
std::string nameOf(const EnumName<Enum> (&table)[N], Enum value) {
    for (const auto& entry : table) {
        if (entry.value == value) {
            return entry.name;
        }
    }
    return "?";
}

template <typename Enum, size_t N>
std::optional<Enum> parseName(const EnumName<Enum> (&table)[N], const std::string& text) {
    for (const auto& entry : table) {
        if (text == entry.name) {
            return entry.value;
        }
    }
    return std::nullopt;
}

template <typename Enum, size_t N>
std::vector<std::string> namesOf(const EnumName<Enum> (&table)[N]) {
    std::vector<std::string> names;
    for (const auto& entry : table) {
        names.emplace_back(entry.name);
    }
    return names;
}

bool isPythonName(std::string_view text) {
    if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front()))) {
        return false;
    }
    return std::all_of(text.begin(), text.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

bool containsName(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

// The model's sizes within the world's limits (config/limits.h), and the
// heads they must split into for RoPE.
template <typename Fail>
void validateModelDims(const ModelDims& m, Fail& fail) {
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

// The input's shape and the tensors it makes, and how many steps run on how many threads.
template <typename Fail>
void validateRunShape(const RunConfig& config, Fail& fail) {
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
    if (config.warmupSteps < 0) {
        fail("warmup", "must be 0 or more, got " + std::to_string(config.warmupSteps));
    }
    if (config.measuredSteps < 1) {
        fail("steps", "must be at least 1, got " + std::to_string(config.measuredSteps));
    }
    if (config.threads < 0 || config.threads > maxCpuThreads()) {
        fail("threads",
             "must be 0 (LibTorch's default) up to 4 × this machine's hardware "
             "threads, got " +
                 std::to_string(config.threads) + "; " + allowedRange(0, maxCpuThreads()));
    }
}

// The device, and what exists on CUDA only: TF32, kernel traces, the allocator's history.
template <typename Fail>
void validateDevice(const RunConfig& config, const ValidationContext& context, Fail& fail) {
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

// The LibTorch engine: its own attention backends, and nothing of Python's.
template <typename Fail>
void validateLibTorchInputs(const RunConfig& config, const ValidationContext& context, Fail& fail) {
    if (containsName(pythonAttentionBackends(), config.attention)) {
        fail("attention", "'" + config.attention +
                              "' is StepScope's FlashAttention-2 in Python, run by the Python "
                              "worker; allowed only with --engine pytorch or pytorch-compile");
    } else if (!containsName(context.attentionBackends, config.attention)) {
        fail("attention", "unknown backend '" + config.attention +
                              "'; allowed: " + joinNames(context.attentionBackends));
    }
    if (!config.pyAttention.empty()) {
        fail("py-attention",
             "your attention runs in the Python worker; allowed only with --engine pytorch or "
             "pytorch-compile");
    }
    if (!config.pyModel.empty() || !config.pyPath.empty()) {
        fail(config.pyModel.empty() ? "py-path" : "py-model",
             "a Python model runs in the Python worker; allowed only with --engine "
             "pytorch or pytorch-compile");
    }
}

// The worker's engines: the worker model's backends or the user's attention,
// a Python model, no CUDA snapshot.
template <typename Fail>
void validateWorkerInputs(const RunConfig& config, Fail& fail) {
    // With the user's attention, `attention` only names it for the file's reader.
    if (config.pyAttention.empty() && !containsName(workerAttentionBackends(), config.attention)) {
        fail("attention", "the " + toString(config.engine) + " engine has no backend '" +
                              config.attention +
                              "'; allowed: " + joinNames(workerAttentionBackends()) +
                              ", or your own with --py-attention");
    }
    if (!config.cudaSnapshotPath.empty()) {
        fail("cuda-snapshot", "the " + toString(config.engine) +
                                  " engine records CUDA memory through --memory; allowed only "
                                  "with --engine libtorch");
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

// What each engine can run: its attention backends, a Python model, a CUDA snapshot.
template <typename Fail>
void validateEngineInputs(const RunConfig& config, const ValidationContext& context, Fail& fail) {
    if (config.engine == Engine::LibTorch) {
        validateLibTorchInputs(config, context, fail);
    } else {
        validateWorkerInputs(config, fail);
    }
}

// The optimizer's form and torch.compile's mode, each allowed with one engine.
template <typename Fail>
void validateEngineOptions(const RunConfig& config, Fail& fail) {
    if (config.optimizer != OptimizerKind::AdamW && config.engine != Engine::LibTorch) {
        // The worker steps torch.optim.AdamW's per-parameter loop (foreach=False).
        fail("optimizer",
             "the " + toString(config.engine) + " engine runs AdamW's per-parameter loop; '" +
                 toString(config.optimizer) + "' is allowed only with --engine libtorch");
    }
    if (!containsName(compileModeNames(), config.compileMode)) {
        fail("compile-mode", "'" + config.compileMode +
                                 "' is not allowed; allowed: " + joinNames(compileModeNames()));
    } else if (config.compileMode != "default" && config.engine != Engine::PyTorchCompile) {
        fail("compile-mode",
             "applies to torch.compile; allowed only with --engine pytorch-compile");
    }
}

// Activation checkpointing and the chunked loss: what each needs of the rest of the config.
template <typename Fail>
void validateMemoryLevers(const RunConfig& config, Fail& fail) {
    const bool checkpointing = config.activationCheckpoint.kind != CheckpointStrategy::Kind::Off;
    const bool chunked = config.loss == LossKind::Chunked;
    if (config.activationCheckpoint.kind == CheckpointStrategy::Kind::Groups &&
        config.activationCheckpoint.groupSize < 1) {
        fail("activation-checkpoint", "a group needs 1 or more blocks, got " +
                                          std::to_string(config.activationCheckpoint.groupSize) +
                                          "; allowed: " + kCheckpointStrategyChoices);
    }
    if (config.lossChunkTokens < 1) {
        fail("loss-chunk",
             "must be a positive number of tokens, got " + std::to_string(config.lossChunkTokens));
    }
    if (config.engine != Engine::LibTorch) {
        // The worker runs the reference model as the course's PyTorch code does.
        if (checkpointing) {
            fail("activation-checkpoint",
                 "the " + toString(config.engine) +
                     " engine runs the model without checkpointing; allowed only with --engine "
                     "libtorch (or off)");
        }
        if (chunked) {
            fail("loss", "the " + toString(config.engine) +
                             " engine computes the full logits; 'chunked' is allowed only with "
                             "--engine libtorch");
        }
    }
    if (checkpointing && config.mode == RunMode::Inference) {
        fail("activation-checkpoint",
             "inference keeps nothing for backward, so there is nothing to recompute; allowed "
             "with --mode forward, forward-backward or train-step (or off)");
    }
}

// --cuda-graph: what a captured step cannot be combined with, each named with
// the flag that conflicts.
template <typename Fail>
void validateCudaGraph(const RunConfig& config, Fail& fail) {
    if (!config.cudaGraph) {
        return;
    }
    if (config.device != DeviceKind::Cuda) {
        fail("cuda-graph",
             "--cuda-graph captures the step as a CUDA graph; allowed only with "
             "--device cuda, not --device " +
                 toString(config.device));
    }
    if (config.engine != Engine::LibTorch) {
        fail("cuda-graph",
             "--cuda-graph captures StepScope's own step; not allowed with --engine " +
                 toString(config.engine) +
                 " (torch.compile's --compile-mode reduce-overhead captures its own)");
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

bool isPythonTarget(const std::string& target) {
    const size_t colon = target.find(':');
    if (colon == std::string::npos || !isPythonName(std::string_view(target).substr(colon + 1))) {
        return false;
    }
    const std::string_view module = std::string_view(target).substr(0, colon);
    size_t start = 0;
    while (true) {
        const size_t dot = module.find('.', start);
        if (!isPythonName(
                module.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
            return false;
        }
        if (dot == std::string_view::npos) {
            return true;
        }
        start = dot + 1;
    }
}

std::string pythonTargetName(const std::string& target) {
    const size_t colon = target.find(':');
    return colon == std::string::npos ? std::string() : target.substr(colon + 1);
}

std::string toString(RunMode mode) {
    return nameOf(kModes, mode);
}
std::string toString(Precision precision) {
    return nameOf(kPrecisions, precision);
}
std::string toString(DeviceKind device) {
    return nameOf(kDevices, device);
}
std::string toString(Engine engine) {
    return nameOf(kEngines, engine);
}
std::optional<Engine> parseEngine(const std::string& text) {
    return parseName(kEngines, text);
}
std::string toString(LossKind loss) {
    return nameOf(kLosses, loss);
}
std::optional<LossKind> parseLossKind(const std::string& text) {
    return parseName(kLosses, text);
}
const std::vector<std::string>& lossNames() {
    static const auto names = namesOf(kLosses);
    return names;
}
std::string toString(OptimizerKind optimizer) {
    return nameOf(kOptimizers, optimizer);
}
std::optional<OptimizerKind> parseOptimizerKind(const std::string& text) {
    return parseName(kOptimizers, text);
}
const std::vector<std::string>& optimizerNames() {
    static const auto names = namesOf(kOptimizers);
    return names;
}
const std::vector<std::string>& engineNames() {
    static const auto names = namesOf(kEngines);
    return names;
}
const std::vector<std::string>& compileModeNames() {
    static const std::vector<std::string> names{"default", "reduce-overhead", "max-autotune"};
    return names;
}
const std::vector<std::string>& workerAttentionBackends() {
    static const std::vector<std::string> names{"naive", "sdpa", "flash-pytorch", "flash-triton"};
    return names;
}
const std::vector<std::string>& pythonAttentionBackends() {
    static const std::vector<std::string> names{"flash-pytorch", "flash-triton"};
    return names;
}
std::optional<RunMode> parseRunMode(const std::string& text) {
    return parseName(kModes, text);
}
std::optional<Precision> parsePrecision(const std::string& text) {
    return parseName(kPrecisions, text);
}
std::optional<DeviceKind> parseDeviceKind(const std::string& text) {
    return parseName(kDevices, text);
}
const std::vector<std::string>& runModeNames() {
    static const auto names = namesOf(kModes);
    return names;
}
const std::vector<std::string>& precisionNames() {
    static const auto names = namesOf(kPrecisions);
    return names;
}
const std::vector<std::string>& deviceNames() {
    static const auto names = namesOf(kDevices);
    return names;
}

bool hasBackward(RunMode mode) {
    return mode == RunMode::ForwardBackward || mode == RunMode::TrainStep;
}
bool hasOptimizer(RunMode mode) {
    return mode == RunMode::TrainStep;
}

std::vector<ConfigError> validate(const RunConfig& config, const ValidationContext& context) {
    std::vector<ConfigError> errors;
    auto fail = [&errors](const std::string& field, const std::string& message) {
        errors.push_back({field, message});
    };
    validateModelDims(config.model, fail);
    validateRunShape(config, fail);
    validateDevice(config, context, fail);
    validateEngineInputs(config, context, fail);
    validateMemoryLevers(config, fail);
    validateCudaGraph(config, fail);
    validateEngineOptions(config, fail);
    return errors;
}

std::string describe(const std::vector<ConfigError>& errors) {
    std::ostringstream out;
    for (const auto& error : errors) {
        out << error.field << ": " << error.message << "\n";
    }
    return out.str();
}

}  // namespace stepscope
