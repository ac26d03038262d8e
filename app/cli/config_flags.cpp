#include "cli/config_flags.h"

#include <algorithm>
#include <charconv>

#include "attention/attention_registry.h"
#include "config/config_field.h"
#include "config/limits.h"
#include "engines/runner.h"
#include "model/checkpoint.h"
#include "model/evaluate.h"
#include "model/pretrained_folder.h"
#include "util/strings.h"

namespace stepscope::cli {

namespace {

// An on/off field: in `run` a flag; where fields take lists, a list of on
// and off (the flag alone, as in `run`, means on).
void addOnOff(CLI::App& command, bool lists, const std::string& name, const std::string& help,
              bool& flag, std::vector<std::string>& values) {
    if (!lists) {
        command.add_flag(name, flag, help);
        return;
    }
    command.add_option(name, values, help + ": on, off or off,on")
        ->expected(0, 2)
        ->delimiter(',')
        ->default_str("on")  // the value of the flag given alone
        ->check(CLI::IsMember({"on", "off"}))
        ->option_text("{off,on} ...  (alone: on; default: off)");
}

}  // namespace

CLI::Validator integerIn(int64_t min, int64_t max) {
    const std::string range = allowedRange(min, max);
    return CLI::Validator(
        [min, max, range](std::string& text) -> std::string {
            // Read here, before CLI11's own reading clamps what overflows to INT64_MAX.
            int64_t value = 0;
            const char* end = text.data() + text.size();
            const auto [stop, error] = std::from_chars(text.data(), end, value);
            if (error == std::errc::result_out_of_range) {
                return text + " is out of range; " + range;
            }
            if (error != std::errc() || stop != end) {
                return "'" + text + "' is not a whole number; " + range;
            }
            if (value < min) {
                return "must be ≥ " + std::to_string(min) + ", got " + text + "; " + range;
            }
            if (value > max) {
                return "must be ≤ " + std::to_string(max) + ", got " + text + "; " + range;
            }
            return {};
        },
        "INT in " + std::to_string(min) + ".." + std::to_string(max));
}

CLI::Validator integerIn(const IntegerLimit& limit) {
    return integerIn(limit.min, limit.max);
}

void ConfigFlags::addTo(CLI::App& command, bool lists, unsigned groups,
                        const std::vector<std::string>& listFlags) {
    // One value in a single run; a comma list in a sweep, or where a study
    // varies that flag.
    auto multi = [lists, &listFlags](CLI::Option* option) {
        const bool list = lists || std::find(listFlags.begin(), listFlags.end(),
                                             option->get_name()) != listFlags.end();
        if (list) {
            option->delimiter(',');
        } else {
            option->expected(1);
        }
        return option;
    };
    if (groups & kModelFlags) {
        multi(command.add_option("--model", models,
                                 "preset: " + joinNames(presetNames()) +
                                     " (default nano; or give the dims; with --weights and "
                                     "neither, the weights' shape). The course's newer edition "
                                     "calls the 2560-wide model xl: that is 2.7B here"));
        command
            .add_option("--d-model", dModel, "custom model width (with --d-ff --layers --heads)")
            ->check(integerIn(kDModelLimit));
        command.add_option("--d-ff", dFf, "custom MLP width")->check(integerIn(kDFfLimit));
        command.add_option("--layers", layers, "custom number of blocks")
            ->check(integerIn(kLayersLimit));
        command.add_option("--heads", heads, "custom number of attention heads")
            ->check(integerIn(kHeadsLimit));
        command
            .add_option("--vocab", vocab,
                        "vocabulary size (default: the preset's; 10000 for all but "
                        "leaderboard's 151936)")
            ->check(integerIn(kVocabLimit));
    }
    if (groups & kWorkloadFlags) {
        command
            .add_option("--max-ctx", maxContext,
                        "the model's maximum context length (default: the preset's; 2048 "
                        "for all but leaderboard's 32768)")
            ->check(integerIn(kMaxContextLimit));
        multi(command.add_option("--ctx", contexts, "context length"))
            ->check(integerIn(kContextLimit))
            ->capture_default_str();
        multi(command.add_option("--batch", batches, "batch size"))
            ->check(integerIn(kBatchLimit))
            ->capture_default_str();
        multi(command.add_option("--mode", modes, "mode: " + joinNames(runModeNames())))
            ->capture_default_str();
        multi(command.add_option("--precision", precisions,
                                 "precision: " + joinNames(precisionNames()) + " (autocast)"))
            ->capture_default_str();
        addOnOff(command, lists, "--tf32", "TF32 tensor cores for fp32 matmuls (CUDA)", tf32,
                 tf32Values);
        // The registry's names (what validationContext() allows), in the help
        // and checked at parsing with a message that lists them.
        // flash-pytorch and flash-triton are the worker's (validate() says which engine has which).
        std::vector<std::string> backends = attentionBackendNames();
        backends.insert(backends.end(), pythonAttentionBackends().begin(),
                        pythonAttentionBackends().end());
        multi(command.add_option("--attention", attentions,
                                 "attention backend (default naive; flash-pytorch and "
                                 "flash-triton with the pytorch engines)"))
            ->check(CLI::IsMember(backends));
        multi(command.add_option(
                  "--activation-checkpoint", activationCheckpoints,
                  "recompute blocks in backward instead of keeping their "
                  "activations: off, K (blocks per checkpointed group) or nested "
                  "(recursive halving: the fewest kept tensors, the most recomputation)"))
            ->capture_default_str();
        multi(command.add_option("--loss", losses,
                                 "loss: full (all logits at once) or chunked (the LM head and "
                                 "cross-entropy chunk by chunk, recomputed in backward)"))
            ->check(CLI::IsMember(lossNames()))
            ->capture_default_str();
        multi(command.add_option("--loss-chunk", lossChunks, "chunked loss: tokens per chunk"))
            ->capture_default_str();
        multi(command.add_option("--optimizer", optimizers,
                                 "train-step's AdamW: adamw (LibTorch's per-parameter loop), "
                                 "adamw-foreach (multi-tensor ops, PyTorch's default) or "
                                 "adamw-fused (ATen's fused kernel); the same update"))
            ->check(CLI::IsMember(optimizerNames()))
            ->capture_default_str();
    }
    if (groups & kStepFlags) {
        multi(command.add_option("--warmup", warmups, "warm-up steps (recorded, not summarised)"))
            ->capture_default_str();
        multi(command.add_option("--steps", steps, "measured steps"))->capture_default_str();
        multi(command.add_option("--device", devices, "device: " + joinNames(deviceNames())))
            ->capture_default_str();
        multi(command.add_option("--seed", seeds, "random seed"))->capture_default_str();
        multi(command.add_option("--threads", threads,
                                 "CPU threads (0: LibTorch's default); at most 4 × this "
                                 "machine's hardware threads, " +
                                     std::to_string(maxCpuThreads()) +
                                     ": more only adds switching, and a huge count exhausts the "
                                     "process table"))
            ->check(integerIn(0, maxCpuThreads()))
            ->capture_default_str();
        command.add_flag("--force", force, "run even when the CPU pre-flight says it will not fit");
    }
    if (groups & kTraceFlags) {
        command.add_flag("--ops", traceOps,
                         "record each operator's time per phase into the run file");
        command.add_flag("--kernels", traceKernels,
                         "record each CUDA kernel's device time per phase (CUPTI; --device cuda)");
        command.add_flag("--memory", traceMemory,
                         "record every allocation and free, attributed to phase, module and "
                         "category");
        command.add_option("--cuda-snapshot", cudaSnapshot,
                           "CUDA: also record the caching allocator's own history; pickle it "
                           "here (opens in memory_viz)");
    }
    if (groups & kEngineFlags) {
        multi(command.add_option(
                  "--engine", engines,
                  "what runs the step: libtorch (this process), pytorch (PyTorch eager "
                  "in a Python worker) or pytorch-compile (torch.compile in the worker)"))
            ->check(CLI::IsMember(engineNames()))
            ->capture_default_str();
        multi(command.add_option("--compile-mode", compileModes,
                                 "pytorch-compile: " + joinNames(compileModeNames())))
            ->check(CLI::IsMember(compileModeNames()))
            ->capture_default_str();
        command.add_option("--py-model", pyModel,
                           "pytorch engines: MODULE:CALLABLE building your model from the course's "
                           "keyword arguments (vocab_size, context_length, d_model, num_layers, "
                           "num_heads, d_ff, rope_theta)");
        command.add_option("--py-attention", pyAttention,
                           "pytorch engines: MODULE:NAME, your attention called in every block "
                           "of the reference model: a torch.autograd.Function "
                           "(NAME.apply(q, k, v, is_causal)) or a function (q, k, v, is_causal) "
                           "-> o, given (batch·heads, seq, d) tensors");
        command.add_option("--py-path", pyPath,
                           "pytorch engines: a directory to import --py-model or --py-attention "
                           "from");
        const std::string graphHelp =
            "CUDA: capture the step once as a CUDA graph and replay it per measured step (needs "
            "--warmup 1+, --optimizer adamw-fused for train; not with --ops or --memory)";
        addOnOff(command, lists, "--cuda-graph", graphHelp, cudaGraph, cudaGraphValues);
        command.add_option("--python", python,
                           "pytorch engines: the Python with torch (default: $STEPSCOPE_PYTHON, "
                           "then the one StepScope was built against)");
    }
    if (groups & kDataFlags) {
        command.add_option("--weights", weights,
                           "torch.save'd state dict loaded into the model, or the course's "
                           "from_pretrained folder (model_config.json + model.pt); without "
                           "--model or dims the model's shape comes from it");
        command.add_option("--tokens", tokens,
                           "torch.save'd int64 (batch, ctx+1) tensor used as the batch (sets "
                           "--batch and --ctx)");
    }
}

RunConfig ConfigFlags::toRunConfig() const {
    SweepSpec spec = toSweepSpec("");
    return expandSweep(spec).front();
}

SweepSpec ConfigFlags::toSweepSpec(const std::string& outDir) const {
    RunConfig base;
    // Without --model or dims the weights give the shape: a from_pretrained
    // folder's config, or the state dict's tensors (and --heads).
    const bool shapeFromWeights = !weights.empty() && models.empty() && !(dModel || dFf || layers);
    const bool customDims = !shapeFromWeights && (dModel || dFf || layers || heads);
    const std::vector<std::string> presets = customDims || shapeFromWeights
                                                 ? std::vector<std::string>{}
                                             : models.empty() ? std::vector<std::string>{"nano"}
                                                              : models;
    // A value the flags leave to the model: the presets' own (one for all), or
    // ModelDims' default for custom dims.
    auto presetsOwn = [&](const char* flag, int64_t ModelDims::*field) {
        std::optional<int64_t> own;
        std::string owners;
        for (const auto& name : presets) {
            if (const auto preset = findPreset(name)) {
                if (own && *own != (*preset).*field) {
                    throw InvalidConfigError(std::vector<ConfigError>{
                        {flag, "the presets " + owners + " and " + name + " differ in it; give --" +
                                   flag + " for them all, or sweep them apart"}});
                }
                own = (*preset).*field;
                owners += (owners.empty() ? "" : ", ") + name;
            }
        }
        return own.value_or(ModelDims{}.*field);
    };
    if (customDims && !models.empty() && dModel && dFf && layers && heads) {
        // The dims make their own model: the preset would be dropped without a word.
        throw InvalidConfigError(
            {{"model", "--model " + joinNames(models) +
                           " and custom dims (--d-model, --d-ff, --layers, --heads) were both "
                           "given, and the dims make their own model; give --model NAME alone, "
                           "or the four dims without --model"}});
    }
    if (customDims && !(dModel && dFf && layers && heads)) {
        // Half a custom model would run with zeros for the rest.
        std::vector<std::string> missing;
        for (const auto& [flag, value] : {std::pair<const char*, int64_t>{"--d-model", dModel},
                                          {"--d-ff", dFf},
                                          {"--layers", layers},
                                          {"--heads", heads}}) {
            if (!value) {
                missing.push_back(flag);
            }
        }
        std::string list;
        for (const auto& flag : missing) {
            list += (list.empty() ? "" : ", ") + flag;
        }
        throw InvalidConfigError(
            {{"model", "custom dims need --d-model, --d-ff, --layers and --heads together; " +
                           list + " missing (or use --model NAME alone)"}});
    }
    if (customDims) {
        base.model.dModel = dModel;
        base.model.dFf = dFf;
        base.model.layers = layers;
        base.model.heads = heads;
        base.model.name = customModelName(base.model);
    }
    if (shapeFromWeights) {
        try {
            base.model = weightsShape(weights, heads);
        } catch (const std::runtime_error& error) {
            throw InvalidConfigError(std::vector<ConfigError>{{"weights", error.what()}});
        }
    } else {
        base.model.vocabSize = presetsOwn("vocab", &ModelDims::vocabSize);
        base.model.maxContext = presetsOwn("max-ctx", &ModelDims::maxContext);
    }
    if (vocab > 0) {
        base.model.vocabSize = vocab;
    }
    if (maxContext > 0) {
        base.model.maxContext = maxContext;
    }
    base.tf32 = tf32;
    base.cudaGraph = cudaGraph;
    base.force = force;
    base.traceOps = traceOps;
    base.traceKernels = traceKernels;
    base.traceMemory = traceMemory;
    base.cudaSnapshotPath = cudaSnapshot;
    base.pyModel = pyModel;
    base.pyPath = pyPath;
    base.pyAttention = pyAttention;
    if (!pyAttention.empty()) {
        // The user's attention is the run's attention; `attention` names it.
        if (!attentions.empty()) {
            throw InvalidConfigError(std::vector<ConfigError>{
                {"attention",
                 "--py-attention is this run's attention; leave --attention out "
                 "(or run ours without --py-attention)"}});
        }
        base.attention = pythonTargetName(pyAttention);
    }
    base.python = python;
    base.weightsPath = weights;
    base.tokensPath = tokens;
    std::vector<int64_t> runContexts = contexts;
    if (!tokens.empty()) {
        try {
            ModelDims limits;  // what the file is checked against: the vocab and context flags
            limits.vocabSize = base.model.vocabSize;
            limits.maxContext = base.model.maxContext;
            const at::Tensor batchTokens = readTokenBatch(tokens, limits);
            base.batchSize = batchTokens.size(0);
            runContexts = {batchTokens.size(1) - 1};
        } catch (const std::runtime_error& error) {
            throw InvalidConfigError(std::vector<ConfigError>{{"tokens", error.what()}});
        }
    }
    // Every other list: its first value in the base, and an axis where it
    // has more than one (the order of the axes is that of the file names).
    std::vector<SweepAxis> axes;
    auto field = [&](const std::string& name, std::vector<std::string> values) {
        if (values.empty()) {
            return;
        }
        setConfigField(base, name, values.front());
        if (values.size() > 1) {
            axes.push_back({name, std::move(values)});
        }
    };
    auto texts = [](const auto& values) {
        std::vector<std::string> out;
        for (const auto& value : values) {
            out.push_back(std::to_string(value));
        }
        return out;
    };
    if (tokens.empty()) {
        field("batch", texts(batches));
    }
    field("attention", attentions);
    field("activation-checkpoint", activationCheckpoints);
    field("loss", losses);
    field("loss-chunk", texts(lossChunks));
    field("optimizer", optimizers);
    field("cuda-graph", cudaGraphValues);
    field("tf32", tf32Values);
    field("warmup", texts(warmups));
    field("steps", texts(steps));
    field("engine", engines);
    field("compile-mode", compileModes);
    field("device", devices);
    field("seed", texts(seeds));
    field("threads", texts(threads));
    SweepSpec spec = makeSweepSpec(base, presets, runContexts, modes, precisions, outDir);
    checkSweepAxes(axes);
    spec.axes = std::move(axes);
    return spec;
}

}  // namespace stepscope::cli
