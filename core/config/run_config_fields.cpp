// The table: every field of RunConfig, declared once (config_field.h says
// who reads it). A field's place here is its place in --help within its
// section, in the panel within its section and in sweep tables. A new field
// is a member of RunConfig (its default) and one entry here; see
// docs/developing.md, "Adding a run-configuration field".

#include <algorithm>
#include <climits>

#include "config/config_field.h"
#include "config/limits.h"
#include "util/strings.h"

namespace stepscope {

namespace {

constexpr unsigned kLibTorch = engineBit(Engine::LibTorch);

std::string got(int64_t value) {
    return ", got " + std::to_string(value);
}

// "the pytorch engine", as messages name the engine a config asks for.
std::string theEngine(const RunConfig& config) {
    return "the " + toString(config.engine) + " engine";
}

ConfigField modelField() {
    ConfigField field;
    field.name = field.key = "model";
    field.type = FieldType::Model;
    field.section = FieldSection::Model;
    field.text = [](const RunConfig& c) { return c.model.name; };
    // A preset by name; the vocabulary and maximum context stay.
    field.setText = [](RunConfig& c, const std::string& text) {
        const auto preset = findPreset(text);
        if (!preset) {
            rejectFieldText("model",
                            "unknown preset '" + text + "'; allowed: " + joinNames(presetNames()));
        }
        const ModelDims kept = c.model;
        c.model = *preset;
        c.model.vocabSize = kept.vocabSize;
        c.model.maxContext = kept.maxContext;
    };
    field.get = [](const RunConfig& c) { return ConfigValue(c.model.name); };
    field.set = [](RunConfig& c, const ConfigValue& v) { c.model.name = std::get<std::string>(v); };
    field.values = presetNames();
    field.withLabel("Model")
        .withHelp("preset: " + joinNames(presetNames()) +
                  " (default nano; or give the dims; with --weights and neither, the weights' "
                  "shape). The course's newer edition calls the 2560-wide model xl: that is 2.7B "
                  "here")
        .required()
        .sweepAxis()
        .checkedByConfig();
    return field;
}

// What runs: the model, the shape of its input, the step taken and how it computes.
void addWorkload(std::vector<ConfigField>& table) {
    table.push_back(modelField());
    table.push_back(integerField("ctx", &RunConfig::contextLength)
                        .range(kContextLimit.min, kContextLimit.max)
                        .rangeCheckedElsewhere()  // against the model's maximum context too
                        .withHelp("context length")
                        .withLabel("Context length")
                        .required()
                        .sweepAxis());
    table.push_back(integerField("batch", &RunConfig::batchSize)
                        .range(kBatchLimit.min, kBatchLimit.max)
                        .rangeCheckedElsewhere()  // with the tensors it makes
                        .withHelp("batch size")
                        .withLabel("Batch")
                        .required()
                        .sweepAxis());
    table.push_back(enumField("mode", &RunConfig::mode, parseRunMode, toString, runModeNames())
                        .withHelp("mode: " + joinNames(runModeNames()))
                        .withLabel("Mode")
                        .required()
                        .sweepAxis()
                        .checkedByConfig());
    table.push_back(
        enumField("precision", &RunConfig::precision, parsePrecision, toString, precisionNames())
            .withHelp("precision: " + joinNames(precisionNames()) + " (autocast)")
            .withLabel("Precision")
            .required()
            .sweepAxis()
            .checkedByConfig());
    table.push_back(switchField("tf32", &RunConfig::tf32)
                        .withHelp("TF32 tensor cores for fp32 matmuls (CUDA)")
                        .withLabel("TF32 matmuls (CUDA)")
                        .required()
                        .sweepAxis());
    // The backends are the attention registry's (a layer above): validate()
    // checks them, the CLI and the panel list them.
    table.push_back(textChoiceField("attention", &RunConfig::attention, {})
                        .withWorkerValues(workerAttentionBackends())
                        .withHelp("attention backend (default naive; flash-pytorch and "
                                  "flash-triton with the pytorch engines)")
                        .withLabel("Attention")
                        .required()
                        .sweepAxis());
}

// How it is measured: the steps, the device, the seed, the threads.
void addSteps(std::vector<ConfigField>& table) {
    table.push_back(integerField("warmup", &RunConfig::warmupSteps)
                        .range(0, INT_MAX)
                        .outOfRange([](int64_t v) { return "must be 0 or more" + got(v); })
                        .withHelp("warm-up steps (recorded, not summarised)")
                        .withLabel("Warm-up steps")
                        .in(FieldSection::Steps)
                        .required()
                        .sweepAxis()
                        .checkedByConfig());
    table.push_back(integerField("steps", &RunConfig::measuredSteps)
                        .range(1, INT_MAX)
                        .outOfRange([](int64_t v) { return "must be at least 1" + got(v); })
                        .withHelp("measured steps")
                        .withLabel("Measured steps")
                        .in(FieldSection::Steps)
                        .required()
                        .sweepAxis()
                        .checkedByConfig());
    table.push_back(
        enumField("device", &RunConfig::device, parseDeviceKind, toString, deviceNames())
            .withHelp("device: " + joinNames(deviceNames()))
            .withLabel("Device")
            .in(FieldSection::Steps)
            .required()
            .sweepAxis()
            .checkedByConfig());
    table.push_back(integerField("seed", &RunConfig::seed)
                        .withHelp("random seed")
                        .withLabel("Seed")
                        .in(FieldSection::Steps)
                        .required()
                        .sweepAxis()
                        .checkedByConfig());
    table.push_back(
        integerField("threads", &RunConfig::threads)
            .range(0, maxCpuThreads)
            .outOfRange([](int64_t v) {
                return "must be 0 (LibTorch's default) up to 4 × this machine's hardware "
                       "threads" +
                       got(v) + "; " + allowedRange(0, maxCpuThreads());
            })
            .withHelp("CPU threads (0: LibTorch's default); at most 4 × this machine's hardware "
                      "threads, {max}: more only adds switching, and a huge count exhausts the "
                      "process table")
            .withLabel("CPU threads")
            .in(FieldSection::Steps)
            .required()
            .sweepAxis());
    table.push_back(switchField("force", &RunConfig::force)
                        .withHelp("run even when the CPU pre-flight says it will not fit")
                        .in(FieldSection::Steps)
                        .required());
}

// What is recorded beside the steps.
void addTracing(std::vector<ConfigField>& table) {
    table.push_back(switchField("ops", &RunConfig::traceOps)
                        .fileKey("trace_ops")
                        .withHelp("record each operator's time per phase into the run file")
                        .withLabel("Trace operators")
                        .in(FieldSection::Trace));
    table.push_back(
        switchField("kernels", &RunConfig::traceKernels)
            .fileKey("trace_kernels")
            .withHelp("record each CUDA kernel's device time per phase (CUPTI; --device cuda)")
            .withLabel("Trace CUDA kernels")
            .in(FieldSection::Trace));
    table.push_back(switchField("memory", &RunConfig::traceMemory)
                        .fileKey("trace_memory")
                        .withHelp("record every allocation and free, attributed to phase, module "
                                  "and category")
                        .withLabel("Trace memory")
                        .in(FieldSection::Trace));
    table.push_back(
        textField("cuda-snapshot", &RunConfig::cudaSnapshotPath, FieldType::Path)
            .fileKey("")  // a file this run writes, not what it ran
            .forEngines(kLibTorch)
            .withEngineMessage([](const RunConfig& c) -> std::optional<std::string> {
                return theEngine(c) +
                       " records CUDA memory through --memory; allowed only with --engine "
                       "libtorch";
            })
            .withValueName("FILE")
            .withHelp("CUDA: also record the caching allocator's own history; pickle it here "
                      "(opens in memory_viz)")
            .in(FieldSection::Trace));
}

// What runs it: the engine and torch.compile's mode.
void addEngine(std::vector<ConfigField>& table) {
    std::vector<std::string> workerEngines;
    for (const auto& name : engineNames()) {
        if (runsInWorker(*parseEngine(name))) {
            workerEngines.push_back(name);
        }
    }
    table.push_back(enumField("engine", &RunConfig::engine, parseEngine, toString, engineNames())
                        .withWorkerValues(workerEngines)
                        .withHelp("what runs the step: libtorch (this process), pytorch (PyTorch "
                                  "eager in a Python worker) or pytorch-compile (torch.compile "
                                  "in the worker)")
                        .withLabel("Engine")
                        .in(FieldSection::Engine)
                        .sweepAxis());
    table.push_back(
        textChoiceField("compile-mode", &RunConfig::compileMode, compileModeNames())
            .forEngines(engineBit(Engine::PyTorchCompile))
            .withCheck([](const RunConfig& c) -> std::optional<std::string> {
                const auto& modes = compileModeNames();
                if (std::find(modes.begin(), modes.end(), c.compileMode) != modes.end()) {
                    return std::nullopt;
                }
                return "'" + c.compileMode + "' is not allowed; allowed: " + joinNames(modes);
            })
            .withEngineMessage([](const RunConfig&) -> std::optional<std::string> {
                return "applies to torch.compile; allowed only with --engine pytorch-compile";
            })
            .withHelp("pytorch-compile: " + joinNames(compileModeNames()))
            .withLabel("Compile mode")
            .in(FieldSection::Engine)
            .sweepAxis());
}

// The levers that trade time for memory: checkpointing, the chunked loss, the
// optimizer's form. The worker runs the reference model as the course's
// PyTorch code does, without them.
ConfigField checkpointField() {
    ConfigField field;
    field.name = "activation-checkpoint";
    field.key = "activation_checkpoint";
    field.type = FieldType::Choice;
    field.allowedText = kCheckpointStrategyChoices;
    field.text = [](const RunConfig& c) { return toString(c.activationCheckpoint); };
    field.setText = [](RunConfig& c, const std::string& text) {
        const auto strategy = parseCheckpointStrategy(text);
        if (!strategy) {
            rejectFieldText("activation-checkpoint", "'" + text + "' is not allowed; allowed: " +
                                                         kCheckpointStrategyChoices);
        }
        c.activationCheckpoint = *strategy;
    };
    field.get = [text = field.text](const RunConfig& c) { return ConfigValue(text(c)); };
    field.set = [setText = field.setText](RunConfig& c, const ConfigValue& value) {
        setText(c, std::get<std::string>(value));
    };
    field.forEngines(kLibTorch)
        .withEngineMessage([](const RunConfig& c) -> std::optional<std::string> {
            return theEngine(c) +
                   " runs the model without checkpointing; allowed only with --engine libtorch "
                   "(or off)";
        })
        .withHelp(
            "recompute blocks in backward instead of keeping their activations: off, K "
            "(blocks per checkpointed group) or nested (recursive halving: the fewest kept "
            "tensors, the most recomputation)")
        .withLabel("Activation checkpoint")
        .sweepAxis()
        .checkedByConfig();
    return field;
}

void addLevers(std::vector<ConfigField>& table) {
    table.push_back(checkpointField());
    table.push_back(enumField("loss", &RunConfig::loss, parseLossKind, toString, lossNames())
                        .withEngineMessage([](const RunConfig& c) -> std::optional<std::string> {
                            return theEngine(c) +
                                   " computes the full logits; 'chunked' is allowed only with "
                                   "--engine libtorch";
                        })
                        .forEngines(kLibTorch)
                        .withHelp("loss: full (all logits at once) or chunked (the LM head and "
                                  "cross-entropy chunk by chunk, recomputed in backward)")
                        .withLabel("Loss")
                        .sweepAxis());
    table.push_back(
        // Every engine takes it and only the chunked loss reads it: a sweep of
        // engines with --loss-chunk runs the pytorch points with the full
        // loss, as it always did ('chunked' itself is LibTorch's alone).
        integerField("loss-chunk", &RunConfig::lossChunkTokens)
            .range(1, std::numeric_limits<int64_t>::max())
            .outOfRange([](int64_t v) { return "must be a positive number of tokens" + got(v); })
            .withHelp("chunked loss: tokens per chunk")  // no label: its row is the loss's
            .sweepAxis()
            .checkedByConfig());
    table.push_back(
        enumField("optimizer", &RunConfig::optimizer, parseOptimizerKind, toString,
                  optimizerNames())
            .forEngines(kLibTorch)
            .withEngineMessage([](const RunConfig& c) -> std::optional<std::string> {
                // The worker steps torch.optim.AdamW's per-parameter loop (foreach=False).
                return theEngine(c) + " runs AdamW's per-parameter loop; '" +
                       toString(c.optimizer) + "' is allowed only with --engine libtorch";
            })
            .withHelp("train-step's AdamW: adamw (LibTorch's per-parameter loop), adamw-foreach "
                      "(multi-tensor ops, PyTorch's default) or adamw-fused (ATen's fused "
                      "kernel); the same update")
            .withLabel("Optimizer")
            .sweepAxis());
}

// The Python worker's: the user's model and attention, where to import them from.
void addPython(std::vector<ConfigField>& table) {
    const std::string inWorker =
        "runs in the Python worker; allowed only with --engine pytorch "
        "or pytorch-compile";
    table.push_back(
        textField("py-model", &RunConfig::pyModel)
            .namesCode()
            .forEngines(kWorkerEngines)
            .withEngineMessage([inWorker](const RunConfig&) -> std::optional<std::string> {
                return "a Python model " + inWorker;
            })
            .withValueName("MODULE:CALLABLE")
            .withHelp("pytorch engines: MODULE:CALLABLE building your model from the course's "
                      "keyword arguments (vocab_size, context_length, d_model, num_layers, "
                      "num_heads, d_ff, rope_theta)")
            .withLabel("Python model")
            .in(FieldSection::Engine));
    table.push_back(
        textField("py-attention", &RunConfig::pyAttention)
            .namesCode()
            .onlyWhenSet()  // files without the user's attention stay as before
            .forEngines(kWorkerEngines)
            .withEngineMessage([inWorker](const RunConfig&) -> std::optional<std::string> {
                return "your attention " + inWorker;
            })
            .withValueName("MODULE:NAME")
            .withHelp("pytorch engines: MODULE:NAME, your attention called in every block of "
                      "the reference model: a torch.autograd.Function (NAME.apply(q, k, v, "
                      "is_causal)) or a function (q, k, v, is_causal) -> o, given "
                      "(batch·heads, seq, d) tensors")
            .withLabel("Your attention")
            .in(FieldSection::Engine));
    table.push_back(
        textField("py-path", &RunConfig::pyPath, FieldType::Path)
            .namesCode()  // what is imported from it
            .forEngines(kWorkerEngines)
            .withEngineMessage([inWorker](const RunConfig& c) -> std::optional<std::string> {
                if (!c.pyModel.empty()) {
                    return std::nullopt;  // py-model's message says it
                }
                return "a Python model " + inWorker;
            })
            .withValueName("DIR")
            .withHelp("pytorch engines: a directory to import --py-model, --py-attention, "
                      "--py-ddp, --py-fsdp or --py-sharded-optimizer from")
            .withLabel("Python path")
            .in(FieldSection::Engine));
}

// CUDA graphs, the worker's Python, and the files a run loads.
void addRest(std::vector<ConfigField>& table) {
    table.push_back(
        switchField("cuda-graph", &RunConfig::cudaGraph)
            .forEngines(kLibTorch)
            .withEngineMessage([](const RunConfig& c) -> std::optional<std::string> {
                return "--cuda-graph captures StepScope's own step; not allowed with --engine " +
                       toString(c.engine) +
                       " (torch.compile's --compile-mode reduce-overhead captures its own)";
            })
            .withHelp("CUDA: capture the step once as a CUDA graph and replay it per measured "
                      "step (needs --warmup 1+, --optimizer adamw-fused for train; not with --ops "
                      "or --memory)")
            .in(FieldSection::Engine)
            .sweepAxis());
    // A property of this machine, not of the run: not in the run file, and
    // carried unchanged when the engine changes.
    table.push_back(textField("python", &RunConfig::python, FieldType::Path)
                        .fileKey("")
                        .namesCode()  // an interpreter runs
                        .forEngines(kWorkerEngines)
                        .withEngineMessage([](const RunConfig&) -> std::optional<std::string> {
                            return std::nullopt;
                        })
                        .withValueName("PYTHON")
                        .withHelp("pytorch engines: the Python with torch (default: "
                                  "$STEPSCOPE_PYTHON, then the one StepScope was built against)")
                        .in(FieldSection::Engine));
    table.push_back(textField("weights", &RunConfig::weightsPath, FieldType::Path)
                        .withValueName("FILE")
                        .withHelp("torch.save'd state dict loaded into the model, or the course's "
                                  "from_pretrained folder (model_config.json + model.pt); without "
                                  "--model or dims the model's shape comes from it")
                        .in(FieldSection::Data));
    table.push_back(textField("tokens", &RunConfig::tokensPath, FieldType::Path)
                        .withValueName("FILE")
                        .withHelp("torch.save'd int64 (batch, ctx+1) tensor used as the batch "
                                  "(sets --batch and --ctx)")
                        .in(FieldSection::Data));
}

// A step on several ranks (the pytorch engine, ranks started by torchrun):
// how many, the strategy, the backend, the buckets, and the user's own.
const std::vector<std::string>& parallelNames() {
    static const std::vector<std::string> names = {"none",    "naive",     "flat",
                                                   "overlap", "bucketed",  "sharded-optimizer",
                                                   "fsdp",    "torch-ddp", "torch-fsdp"};
    return names;
}

// The strategies a user's class of `field` stands in for.
std::vector<std::string> strategiesFor(const std::string& field) {
    if (field == "py-fsdp") {
        return {"fsdp"};
    }
    if (field == "py-sharded-optimizer") {
        return {"sharded-optimizer"};
    }
    return {"naive", "flat", "overlap", "bucketed", "sharded-optimizer"};
}

ConfigField userStrategyField(const std::string& name, std::string RunConfig::*member,
                              const std::string& what, const std::string& shape) {
    return textField(name, member)
        .namesCode()
        .onlyWhenSet()
        .forEngines(engineBit(Engine::PyTorch))
        .withCheck([name, member](const RunConfig& c) -> std::optional<std::string> {
            const std::string& target = c.*member;
            if (target.empty()) {
                return std::nullopt;
            }
            if (!isPythonTarget(target)) {
                return "'" + target + "' is not MODULE:NAME with Python names";
            }
            const auto with = strategiesFor(name);
            if (c.engine == Engine::PyTorch &&
                std::find(with.begin(), with.end(), c.parallel) == with.end()) {
                std::string strategies;
                for (const auto& strategy : with) {
                    strategies += (strategies.empty() ? "" : " or ") + strategy;
                }
                return "stands in for ours with --parallel " + strategies + ", not " + c.parallel;
            }
            return std::nullopt;
        })
        .withValueName("MODULE:NAME")
        .withHelp("pytorch engine: MODULE:NAME, your " + what + " in place of ours: " + shape)
        .withLabel("Your " + what)
        .in(FieldSection::Distributed);
}

std::optional<std::string> ranksRunInTheWorker(const RunConfig&) {
    return "the ranks run in the Python worker; allowed only with --engine pytorch";
}

void addDistributed(std::vector<ConfigField>& table) {
    constexpr unsigned kPyTorch = engineBit(Engine::PyTorch);
    table.push_back(
        integerField("ranks", &RunConfig::ranks)
            .range(1, 1024)
            .forEngines(kPyTorch)
            .onlyWhenSet()
            .withCheck([](const RunConfig& c) -> std::optional<std::string> {
                if (c.ranks < 1 || c.ranks > 1024) {
                    return "must be from 1 to 1024" + got(c.ranks);
                }
                // Elsewhere the engine's message says what is wrong.
                if (c.engine == Engine::PyTorch && c.batchSize % c.ranks != 0) {
                    return "batch " + std::to_string(c.batchSize) + " does not divide by ranks " +
                           std::to_string(c.ranks) + " (the global batch is split evenly)";
                }
                return std::nullopt;
            })
            .withEngineMessage(ranksRunInTheWorker)
            .withHelp("pytorch engine: processes that share the step, started by torchrun on "
                      "this machine; --batch is the global batch, split evenly")
            .withLabel("Ranks")
            .in(FieldSection::Distributed)
            .sweepAxis());
    table.push_back(
        integerField("nodes", &RunConfig::nodes)
            .range(1, 1024)
            .forEngines(kPyTorch)
            .onlyWhenSet()
            .withCheck([](const RunConfig& c) -> std::optional<std::string> {
                if (c.nodes < 1 || c.nodes > 1024) {
                    return "must be from 1 to 1024" + got(c.nodes);
                }
                if (c.engine == Engine::PyTorch && c.ranks % c.nodes != 0) {
                    return "ranks " + std::to_string(c.ranks) + " do not divide by nodes " +
                           std::to_string(c.nodes) + " (each node runs ranks / nodes)";
                }
                return std::nullopt;
            })
            .withEngineMessage(ranksRunInTheWorker)
            .withHelp("pytorch engine, inside a Slurm allocation: the ranks spread over this "
                      "many of its nodes (ranks / nodes on each), started by srun with the "
                      "rendezvous on the first; 1: this machine, by torchrun")
            .withLabel("Nodes")
            .in(FieldSection::Distributed));
    table.push_back(
        textChoiceField("parallel", &RunConfig::parallel, parallelNames())
            .forEngines(kPyTorch)
            .onlyWhenSet()
            .withCheck([](const RunConfig& c) -> std::optional<std::string> {
                const auto& names = parallelNames();
                if (std::find(names.begin(), names.end(), c.parallel) == names.end()) {
                    return "'" + c.parallel + "' is not allowed; allowed: " + joinNames(names);
                }
                if (c.engine != Engine::PyTorch) {
                    return std::nullopt;  // the engine's message says what is wrong
                }
                if (c.ranks > 1 && c.parallel == "none") {
                    return std::to_string(c.ranks) + " ranks need a strategy; allowed: " +
                           joinNames(std::vector<std::string>(names.begin() + 1, names.end()));
                }
                if (c.ranks == 1 && c.parallel != "none") {
                    return "'" + c.parallel +
                           "' shares the step between ranks: give --ranks 2 "
                           "or more";
                }
                return std::nullopt;
            })
            .withHelp("how the ranks share the step: naive, flat, overlap, bucketed, "
                      "sharded-optimizer, fsdp (ours), torch-ddp, torch-fsdp (torch's); none "
                      "with one rank")
            .withLabel("Strategy")
            .in(FieldSection::Distributed)
            .sweepAxis());
}

// How the ranks talk: torch.distributed's backend, and the DDP buckets' size.
void addCommunication(std::vector<ConfigField>& table) {
    constexpr unsigned kPyTorch = engineBit(Engine::PyTorch);
    table.push_back(
        textChoiceField("backend", &RunConfig::backend, {"gloo", "nccl"})
            .forEngines(kPyTorch)
            .onlyWhenSet()
            .withCheck([](const RunConfig& c) -> std::optional<std::string> {
                if (c.backend != "gloo" && c.backend != "nccl") {
                    return "'" + c.backend + "' is not allowed; allowed: gloo, nccl";
                }
                if (c.engine == Engine::PyTorch && c.backend == "nccl" &&
                    c.device != DeviceKind::Cuda) {
                    return "nccl needs --device cuda; allowed on the CPU: gloo";
                }
                return std::nullopt;
            })
            .withHelp("torch.distributed's backend: gloo (CPU tensors, or CUDA ones) or nccl "
                      "(--device cuda, a GPU per rank)")
            .withLabel("Backend")
            .in(FieldSection::Distributed));
    table.push_back(
        numberField("bucket-mb", &RunConfig::bucketMb)
            .forEngines(kPyTorch)
            .onlyWhenSet()
            .withCheck([](const RunConfig& c) -> std::optional<std::string> {
                if (!(c.bucketMb > 0) || c.bucketMb > 1e6) {
                    return "must be above 0 and at most 1000000, got " + numberText(c.bucketMb);
                }
                return std::nullopt;
            })
            .withValueName("MB")
            .withHelp("bucketed and torch-ddp: the gradient buckets' size in MB (above 0)")
            .withLabel("Bucket size (MB)")
            .in(FieldSection::Distributed)
            .sweepAxis());
}

// The user's own classes, in place of ours: the course's shapes.
void addUserStrategies(std::vector<ConfigField>& table) {
    table.push_back(userStrategyField("py-ddp", &RunConfig::pyDdp, "DDP",
                                      "NAME(module), with finish_gradient_synchronization()"));
    table.push_back(userStrategyField("py-fsdp", &RunConfig::pyFsdp, "FSDP",
                                      "NAME(module, compute_dtype), with "
                                      "finish_gradient_synchronization() and "
                                      "gather_full_params()"));
    table.push_back(userStrategyField("py-sharded-optimizer", &RunConfig::pyShardedOptimizer,
                                      "sharded optimizer",
                                      "NAME(params, optimizer_cls, **kwargs)"));
}

}  // namespace

std::vector<ConfigField> builtInConfigFields() {
    std::vector<ConfigField> table;
    addWorkload(table);
    addSteps(table);
    addTracing(table);
    addEngine(table);
    addLevers(table);
    addPython(table);
    addRest(table);
    addDistributed(table);
    addCommunication(table);
    addUserStrategies(table);
    return table;
}

}  // namespace stepscope
