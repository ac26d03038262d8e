#pragma once

// core/config: what a user asks for. The run's configuration and its
// validation (here; validate.cpp), its fields, each declared once in one
// table (config_field.h, run_config_fields.cpp), model dims and presets, the
// checkpoint strategy, the attention options and the attention grid's spec.
// Plain data without LibTorch; includes only util/.

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "config/checkpoint_strategy.h"
#include "config/model_dims.h"

namespace stepscope {

enum class RunMode { Inference, Forward, ForwardBackward, TrainStep };
enum class Precision { Fp32, Bf16, Fp16 };
enum class DeviceKind { Cpu, Cuda };
// What runs the step: StepScope's LibTorch engine in this process, or PyTorch
// eager / torch.compile in a Python worker process (docs/worker-protocol.md).
enum class Engine { LibTorch, PyTorch, PyTorchCompile };
// How the loss meets the LM head: all logits at once, or chunk by chunk with
// each chunk's logits recomputed in backward (model/chunked_loss.h).
enum class LossKind { Full, Chunked };
// Which AdamW steps the parameters (model/optimizers.h): LibTorch's per-parameter
// loop, PyTorch's multi-tensor (foreach) form, or ATen's fused kernel. The
// same update and hyper-parameters in each.
enum class OptimizerKind { AdamW, AdamWForeach, AdamWFused };

std::string toString(RunMode mode);
std::string toString(Precision precision);
std::string toString(DeviceKind device);
std::string toString(Engine engine);
std::string toString(LossKind loss);
std::string toString(OptimizerKind optimizer);
std::optional<RunMode> parseRunMode(const std::string& text);
std::optional<Precision> parsePrecision(const std::string& text);
std::optional<DeviceKind> parseDeviceKind(const std::string& text);
std::optional<Engine> parseEngine(const std::string& text);
std::optional<LossKind> parseLossKind(const std::string& text);
std::optional<OptimizerKind> parseOptimizerKind(const std::string& text);
const std::vector<std::string>& runModeNames();
const std::vector<std::string>& precisionNames();
const std::vector<std::string>& deviceNames();
const std::vector<std::string>& engineNames();
const std::vector<std::string>& lossNames();
const std::vector<std::string>& optimizerNames();
const std::vector<std::string>& compileModeNames();  // torch.compile's modes
// The attention backends the Python worker's model has: naive, sdpa and the
// Python ones.
const std::vector<std::string>& workerAttentionBackends();
// StepScope's FlashAttention-2 in Python (python/stepscope/attention), run by
// the worker only: flash-pytorch (PyTorch ops) and flash-triton (Triton kernels).
const std::vector<std::string>& pythonAttentionBackends();

// "package.module:NAME" with Python names, as Python's import system can
// resolve it (--py-model, --py-attention).
bool isPythonTarget(const std::string& target);
// The NAME of MODULE:NAME; empty when there is no colon.
std::string pythonTargetName(const std::string& target);

bool hasBackward(RunMode mode);
bool hasOptimizer(RunMode mode);

// One field's value as the run file holds it: a switch, a whole number (the
// seed unsigned), text (a choice, a path, a name) or a number (a size in MB).
using ConfigValue = std::variant<bool, int64_t, uint64_t, std::string, double>;

// Everything that defines one run. Plain data: the CLI, the GUI and the run
// file all speak it. Each field is declared once, with its flag, run-file
// key, range and help, in the table of config/config_field.h.
struct RunConfig {
    ModelDims model;
    int64_t contextLength = 128;
    int64_t batchSize = 4;
    RunMode mode = RunMode::TrainStep;
    Precision precision = Precision::Fp32;
    bool tf32 = false;  // CUDA only: TF32 tensor cores for fp32 matmuls
    int warmupSteps = 2;
    int measuredSteps = 5;
    DeviceKind device = DeviceKind::Cpu;
    uint64_t seed = 0;
    std::string attention = "naive";
    // Memory levers: blocks recomputed in backward instead of kept, and the loss chunk by chunk.
    CheckpointStrategy activationCheckpoint;
    LossKind loss = LossKind::Full;
    int64_t lossChunkTokens = 1024;  // chunked loss: tokens per chunk
    int threads = 0;                 // CPU intra-op threads; 0 keeps LibTorch's default
    bool force = false;              // run even when the CPU pre-flight says it will not fit
    bool traceOps = false;           // record every operator's host time per phase (OperatorTracer)
    bool traceKernels = false;       // every CUDA kernel's device time (KernelTracer, CUDA only)
    bool traceMemory = false;        // record every allocation and free (MemoryTracker)
    std::string cudaSnapshotPath;    // CUDA: the caching allocator's own history, pickled here
    // train-step: which AdamW steps the parameters (model/optimizers.h).
    OptimizerKind optimizer = OptimizerKind::AdamW;
    // CUDA: each measured step one replay of the step captured as a CUDA graph
    // (engines/cuda_graph_step.h); validate() names what it cannot be combined with.
    bool cudaGraph = false;
    Engine engine = Engine::LibTorch;
    std::string compileMode = "default";  // pytorch-compile: torch.compile's mode
    std::string pyModel;  // pytorch engines: MODULE:CALLABLE building the user's model
    std::string pyPath;   // pytorch engines: a directory put first on the import path
    // pytorch engines: MODULE:NAME, the user's attention (an autograd Function
    // or a callable (q, k, v, is_causal) -> o) called in every block of the
    // reference model instead of `attention`, which then only names it.
    std::string pyAttention;
    // pytorch engine: the step shared by `ranks` processes started by
    // torchrun (docs/worker-protocol.md, "Distributed runs"), `batchSize`
    // being the global batch; `parallel` names how (a strategy of
    // stepscope.distributed, or torch's), `backend` torch.distributed's.
    int ranks = 1;
    // Inside a Slurm allocation: the ranks spread over this many of its
    // nodes, ranks / nodes on each, started by srun; 1: this machine.
    int nodes = 1;
    std::string parallel = "none";
    std::string backend = "gloo";
    double bucketMb = 25.0;          // bucketed, torch-ddp: the gradient buckets' size
    std::string pyDdp;               // MODULE:NAME, the user's DDP in place of ours
    std::string pyFsdp;              // MODULE:NAME, the user's FSDP
    std::string pyShardedOptimizer;  // MODULE:NAME, the user's sharded optimizer
    std::string weightsPath;         // a torch.save'd state dict loaded into the model
    std::string tokensPath;          // a torch.save'd (batch, ctx+1) int64 tensor: the batch
    // The Python that runs the worker; empty: $STEPSCOPE_PYTHON, then the
    // build's. A property of this machine, so not part of the run file's config.
    std::string python;
    // Values of fields declared with registerConfigField() (config_field.h)
    // rather than as a member above, by field name; absent: the field's default.
    std::map<std::string, ConfigValue> registered;
};

// One problem with a config: the field (as the CLI and run file name it) and
// a message that says what is allowed.
struct ConfigError {
    std::string field;
    std::string message;
};

// What validation needs to know about the machine.
struct ValidationContext {
    bool cudaAvailable = false;
    std::vector<std::string> attentionBackends;
};

std::vector<ConfigError> validate(const RunConfig& config, const ValidationContext& context);
std::string describe(const std::vector<ConfigError>& errors);  // one line per error

// A config that fails validation; errors() names each field.
class InvalidConfigError : public std::invalid_argument {
public:
    explicit InvalidConfigError(std::vector<ConfigError> errors);
    const std::vector<ConfigError>& errors() const { return errors_; }

private:
    std::vector<ConfigError> errors_;
};

}  // namespace stepscope
