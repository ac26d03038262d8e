#include "cli/commands.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/guarded.h"
#include "cli/stderr_progress.h"
#include "config/config_field.h"
#include "engines/environment.h"
#include "engines/isolated_run.h"
#include "engines/runner.h"
#include "estimate/cost_model.h"
#include "estimate/fit_check.h"
#include "estimate/memory_estimate.h"
#include "experiments/accumulation_lab.h"
#include "experiments/attention_benchmark.h"
#include "experiments/dtype_flow.h"
#include "experiments/sweep.h"
#include "interop/chrome_trace.h"
#include "interop/memviz_export.h"
#include "model/evaluate.h"
#include "results/attention_file.h"
#include "results/breakdown.h"
#include "results/memory_report.h"
#include "results/report.h"
#include "results/run_file.h"
#include "util/atomic_file.h"
#include "util/strings.h"

namespace stepscope::cli {

namespace {

namespace fs = std::filesystem;

// `run --events`: progress and steps on stdout, one JSON object per line,
// flushed as they happen (the parent of an isolated run reads them live).
class EventPrinter final : public RunObserver {
public:
    void onStep(const StepRecord& step) override { print(stepEventLine(step)); }
    void onProgress(const RunProgress& progress) override { print(progressEventLine(progress)); }

private:
    static void print(const std::string& line) {
        std::fwrite(line.data(), 1, line.size(), stdout);
        std::fputc('\n', stdout);
        std::fflush(stdout);
    }
};

// A run file, or a JSON object that is a run file's "config". The code it
// names (a Python model, attention, the folder they come from) runs only with
// the user's say-so: --trust-code, as trust_remote_code is the ecosystem's.
RunConfig readConfigFile(const std::string& path, bool trustCode) {
    std::string text;
    try {
        text = readFile(path);
    } catch (const std::exception& error) {
        throw RunFileError("--config: " + std::string(error.what()));
    }
    const nlohmann::json document = nlohmann::json::parse(text, nullptr, false);
    if (document.is_discarded() || !document.is_object()) {
        throw RunFileError("--config '" + path + "': not a JSON object");
    }
    RunConfig config;
    try {
        config = runConfigFromJson(document.contains("config") ? document["config"].dump() : text);
    } catch (const RunFileError& error) {
        throw RunFileError("--config '" + path + "': " + error.what());
    }
    if (const auto code = codeNamedBy(config); !code.empty() && !trustCode) {
        throw RunFileError("--config '" + path +
                           "' names Python code that would run: " + describeNamedCode(code) +
                           "; code a file names runs only with your say-so: read it, then pass "
                           "--trust-code");
    }
    return config;
}

int exitCodeFor(const RunResult& result) {
    return result.status == RunStatus::Ok ? kExitOk : kExitRunFailed;
}

}  // namespace

std::atomic<bool>& cancelRequested() {
    static std::atomic<bool> flag{false};
    return flag;
}

std::atomic<bool>& cancelChecked() {
    static std::atomic<bool> checked{false};
    return checked;
}

const std::atomic<bool>* checkedCancel() {
    cancelChecked().store(true);
    return &cancelRequested();
}

SweepControl cliSweepControl(StderrProgress& progress, bool isolate) {
    SweepControl control;
    control.observer = &progress;
    control.runObserver = &progress;
    control.cancel = checkedCancel();
    if (isolate) {
        control.runPoint = freshProcessRunner(currentExecutablePath());
    }
    return control;
}

int commandInfo(bool json) {
    const DeviceInventory inventory = probeDevices();
    if (json) {
        nlohmann::json out = {{"stepscope_version", STEPSCOPE_VERSION},
                              {"libtorch_version", inventory.libtorchVersion},
                              {"libtorch_cuda_version", inventory.libtorchCudaVersion},
                              {"cuda_available", inventory.cudaAvailable},
                              {"cuda_devices", inventory.cudaDevices},
                              {"cuda_kernels_built", inventory.cudaKernelsBuilt},
                              {"cupti_available", inventory.cuptiAvailable},
                              {"cupti", inventory.cuptiLibrary},
                              {"cpu_model", inventory.cpuModel},
                              {"cpu_threads", inventory.cpuThreads}};
        std::cout << out.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << "StepScope " << STEPSCOPE_VERSION << "\n"
              << "LibTorch     " << inventory.libtorchVersion
              << (inventory.libtorchCudaVersion.empty()
                      ? " (CPU build)"
                      : " (CUDA " + inventory.libtorchCudaVersion + " build)")
              << "\n"
              << "CPU          " << inventory.cpuModel << ", " << inventory.cpuThreads
              << " intra-op threads\n"
              << "CUDA         "
              << (inventory.cudaAvailable
                      ? std::to_string(inventory.cudaDevices.size()) + " device(s)"
                      : std::string("no device available"))
              << "\n";
    for (size_t i = 0; i < inventory.cudaDevices.size(); ++i) {
        std::cout << "  cuda:" << i << "     " << inventory.cudaDevices[i] << "\n";
    }
    std::cout << "CUDA kernels " << (inventory.cudaKernelsBuilt ? "built" : "not built (no nvcc)")
              << "\n"
              << "CUPTI        "
              << (inventory.cuptiAvailable ? "loads (" + inventory.cuptiLibrary + ")"
                                           : "not available: " + inventory.cuptiLibrary)
              << "\n"
              << "attention    ";
    for (const auto& name : validationContext().attentionBackends) {
        std::cout << name << " ";
    }
    std::cout << "\n";
    return kExitOk;
}

int commandParams(const ConfigFlags& flags, bool all, bool json) {
    return guarded([&] {
        std::vector<ModelDims> models;
        if (all) {
            models = modelPresets();
        } else {
            models = flags.toSweepSpec("").models;
        }
        nlohmann::json out = nlohmann::json::object();
        for (auto dims : models) {
            if (flags.vocab > 0) {
                dims.vocabSize = flags.vocab;
            }
            out[dims.name] = parameterCount(dims);
            if (!json) {
                std::printf(
                    "%-8s %14lld parameters (d_model %lld, d_ff %lld, %lld layers, %lld "
                    "heads, vocab %lld)\n",
                    dims.name.c_str(), static_cast<long long>(parameterCount(dims)),
                    static_cast<long long>(dims.dModel), static_cast<long long>(dims.dFf),
                    static_cast<long long>(dims.layers), static_cast<long long>(dims.heads),
                    static_cast<long long>(dims.vocabSize));
            }
        }
        if (json) {
            std::cout << out.dump(2) << "\n";
        }
        return kExitOk;
    });
}

namespace {

// A --py-attention the worker cannot load (its message starts "py_attention: ")
// is bad input, like a bad flag: no run file, exit 2.
void throwIfPyAttentionUnloadable(const RunResult& result) {
    const std::string prefix = "py_attention: ";
    if (result.status == RunStatus::Failed && result.message.rfind(prefix, 0) == 0) {
        const std::string why = result.message.substr(prefix.size());
        throw InvalidConfigError(
            std::vector<ConfigError>{{"py-attention", why.substr(0, why.find('\n'))}});
    }
}

// A distributed run's strategy that failed the correctness gate was never
// timed: bad input (exit 2) naming what was checked, as the worker's message
// begins ("py_ddp: 'students:SummingDDP' fails …", else "parallel: …"), and
// no run file.
void throwIfGateRefused(const RunResult& result) {
    if (result.status != RunStatus::Incorrect) {
        return;
    }
    std::string field = "parallel";
    std::string why = result.message;
    if (const size_t colon = why.find(": "); colon != std::string::npos) {
        std::string named = why.substr(0, colon);
        std::replace(named.begin(), named.end(), '_', '-');
        if (const ConfigField* found = findConfigField(named);
            found && found->section == FieldSection::Distributed) {
            field = named;
            why = why.substr(colon + 2);
        }
    }
    throw InvalidConfigError(std::vector<ConfigError>{{field, why.substr(0, why.find('\n'))}});
}

// The files a config reads, before the run: one that is not there, or is a
// FIFO or a device, is bad input (exit 2), not a failed run. --weights may
// also name a from_pretrained folder.
void checkInputFiles(const RunConfig& config) {
    const std::pair<const char*, const std::string&> inputs[] = {{"weights", config.weightsPath},
                                                                 {"tokens", config.tokensPath}};
    for (const auto& [field, path] : inputs) {
        std::error_code error;
        if (path.empty() || (field == std::string("weights") && fs::is_directory(path, error))) {
            continue;
        }
        if (const auto why = whyNotARegularFile(path)) {
            throw InvalidConfigError(std::vector<ConfigError>{{field, *why}});
        }
    }
}

// Where a run's file goes: `outFile`, unless the run did not end ok and
// `outFile` holds an ok run (a refusal or a failure must not replace a good
// measurement): then beside it, NAME.failed.json.
std::string runFileDestination(const RunResult& result, const std::string& outFile) {
    if (result.status == RunStatus::Ok) {
        return outFile;
    }
    try {
        if (whyNotARegularFile(outFile) || readRunFile(outFile).status != RunStatus::Ok) {
            return outFile;
        }
    } catch (const std::exception&) {
        return outFile;  // no good run there to keep
    }
    const std::filesystem::path path(outFile);
    const std::string stem =
        path.extension() == ".json" ? path.stem().string() : path.filename().string();
    return (path.parent_path() / (stem + ".failed.json")).string();
}

}  // namespace

int commandRun(const ConfigFlags& flags, const std::string& configFile, const std::string& outFile,
               bool json, bool events, bool trustCode) {
    return guarded([&] {
        const RunConfig config =
            configFile.empty() ? flags.toRunConfig() : readConfigFile(configFile, trustCode);
        // Before the run, not after it: a run can take hours.
        checkInputFiles(config);
        if (const auto reason = outFile.empty() ? std::nullopt : whyCannotWriteFile(outFile)) {
            throw InvalidConfigError(std::vector<ConfigError>{{"--out", *reason}});
        }
        StderrProgress progress;
        EventPrinter printer;
        RunControl control;
        control.observer = events ? static_cast<RunObserver*>(&printer) : &progress;
        control.cancel = checkedCancel();
        if (!events) {
            std::fprintf(stderr, "stepscope: %s, batch %lld × ctx %lld, %s, %s on %s\n",
                         config.model.name.c_str(), static_cast<long long>(config.batchSize),
                         static_cast<long long>(config.contextLength),
                         toString(config.mode).c_str(), toString(config.precision).c_str(),
                         toString(config.device).c_str());
        }
        const RunResult result = runBenchmark(config, control);
        throwIfPyAttentionUnloadable(result);
        throwIfGateRefused(result);
        if (!outFile.empty()) {
            const std::string written = runFileDestination(result, outFile);
            writeRunFile(result, written);
            if (!events) {
                std::fprintf(
                    stderr, "stepscope: run file written to %s%s\n", written.c_str(),
                    written == outFile ? "" : ("; the ok run in " + outFile + " is kept").c_str());
            }
        }
        if (!events) {
            std::cout << (json ? runResultToJson(result) : formatRunReport(result));
        }
        if (result.status != RunStatus::Ok) {
            std::cerr << "stepscope-cli: run " << toString(result.status) << ": " << result.message
                      << (result.status == RunStatus::Refused ? "; or pass --force to run anyway"
                                                              : "")
                      << "\n";
        }
        return exitCodeFor(result);
    });
}

int commandEstimate(const ConfigFlags& flags, bool json) {
    return guarded([&] {
        const RunConfig config = flags.toRunConfig();
        if (auto errors = validate(config, validationContext()); !errors.empty()) {
            throw InvalidConfigError(std::move(errors));
        }
        const MemoryPrediction prediction = predictMemory(config);
        const int64_t needed = preflightBytes(config);
        // The rule the app and the runner's pre-flight use: free memory, not the total.
        const FitCheck fit = checkFit(config, availableSystemMemory());
        if (json) {
            nlohmann::json categories = nlohmann::json::object();
            for (size_t c = 0; c < kMemoryCategories; ++c) {
                categories[toString(MemoryCategory(c))] = prediction.maxByCategory[c];
            }
            const nlohmann::json out = {
                {"peak_bytes", prediction.peakBytes},
                {"peak_phase", phaseName(prediction.peakPhase)},
                {"preflight_bytes", needed},
                {"by_category", categories},
                {"device_bytes", prediction.deviceBytes ? nlohmann::json(*prediction.deviceBytes)
                                                        : nlohmann::json(nullptr)},
                {"free_bytes", fit.fits ? nlohmann::json(fit.freeBytes) : nlohmann::json(nullptr)},
                {"compared_with",
                 fit.fits ? nlohmann::json(kFreeMemoryName) : nlohmann::json(nullptr)},
                {"fits", fit.fits ? nlohmann::json(*fit.fits) : nlohmann::json(nullptr)},
                {"explanation", prediction.explanation}};
            std::cout << out.dump(2) << "\n";
            return kExitOk;
        }
        std::cout << "predicted peak " << formatBytes(double(prediction.peakBytes)) << " in "
                  << phaseName(prediction.peakPhase) << " (with the " << int(kPreflightMargin * 100)
                  << "% margin " << formatBytes(double(needed)) << ")";
        if (fit.fits) {
            std::cout << "; " << kFreeMemoryName << " " << formatBytes(double(fit.freeBytes))
                      << ": " << (*fit.fits ? "fits" : "does not fit");
        }
        std::cout << "\n\n| category | max |\n|---|---:|\n";
        for (size_t c = 0; c < kMemoryCategories; ++c) {
            std::cout << "| " << toString(MemoryCategory(c)) << " | "
                      << formatBytes(double(prediction.maxByCategory[c])) << " |\n";
        }
        std::cout << "\n";
        for (const auto& line : prediction.explanation) {
            std::cout << "- " << line << "\n";
        }
        return kExitOk;
    });
}

int commandSweep(const ConfigFlags& flags, const std::string& outDir, bool resume, bool isolate) {
    return guarded([&] {
        SweepSpec spec = flags.toSweepSpec(outDir);
        checkInputFiles(spec.base);
        spec.resume = resume;
        StderrProgress progress;
        progress.setAxes(spec.axes);
        const std::vector<RunResult> results = runSweep(spec, cliSweepControl(progress, isolate));
        std::cout << formatSweepMarkdown(results, varyingAxisFields(spec.axes));
        if (spec.base.traceMemory) {
            std::cout << "\n" << formatMemorySweepTable(results);
        }
        std::fprintf(stderr, "stepscope: %zu of %zu points, tables in %s/sweep.csv and sweep.md\n",
                     results.size(), expandSweep(spec).size(), outDir.c_str());
        // Ctrl-C during the last point leaves every point with a file, the last cancelled.
        const bool cancelled =
            cancelRequested().load() || std::any_of(results.begin(), results.end(), [](auto& r) {
                return r.status == RunStatus::Cancelled;
            });
        if (cancelled) {
            std::fprintf(stderr, "stepscope: sweep cancelled; --resume runs what is left\n");
        }
        const bool complete = results.size() == expandSweep(spec).size();
        return complete && !cancelled ? kExitOk : kExitRunFailed;
    });
}

int commandEval(const ConfigFlags& flags, const std::string& weights, const std::string& tokens,
                bool json) {
    return guarded([&] {
        const RunConfig config = flags.toRunConfig();
        auto errors = validate(config, validationContext());
        // The context and batch flags do not apply: the token file gives them.
        std::erase_if(errors, [](const ConfigError& e) { return e.field == "ctx"; });
        if (!errors.empty()) {
            throw InvalidConfigError(errors);
        }
        EvalResult result;
        try {
            // The tokens give the batch and context: held to the limits and
            // the pre-flight that `run` has, before any tensor of the model.
            const at::Tensor batch = readTokenBatch(tokens, config.model);
            const RunConfig evalRun = evalConfig(config, batch);
            if (auto limits = validate(evalRun, validationContext()); !limits.empty()) {
                throw InvalidConfigError(limits);
            }
            if (const auto refusal = preflightRefusal(evalRun, availableSystemMemory())) {
                std::cerr << "stepscope-cli: eval refused: " << *refusal
                          << "; or pass --force to run anyway\n";
                return kExitRunFailed;
            }
            result = evaluateTokens(evalRun, weights, batch);
        } catch (const std::runtime_error& error) {
            std::cerr << "stepscope-cli: " << error.what() << "\n";
            return kExitBadInput;
        }
        if (!std::isfinite(result.loss)) {
            std::cerr << "stepscope-cli: eval: the loss is "
                      << (std::isnan(result.loss) ? "NaN" : "infinite")
                      << ": the weights or the tokens hold NaN or Inf\n";
            return kExitRunFailed;
        }
        if (json) {
            std::cout
                << nlohmann::json{{"loss", result.loss}, {"predictions", result.predictions}}.dump()
                << "\n";
        } else {
            std::printf("loss %.6f nats over %lld predictions\n", result.loss,
                        static_cast<long long>(result.predictions));
        }
        return kExitOk;
    });
}

int commandShow(const std::string& file, bool json) {
    return guarded([&] {
        const RunResult result = readRunFile(file);
        std::cout << (json ? runResultToJson(result) : formatRunReport(result));
        return kExitOk;
    });
}

AttentionBenchSpec attentionSpecFromFlags(const AttentionFlags& flags) {
    AttentionBenchSpec spec;
    const auto engine = parseEngine(flags.engine);
    if (!engine) {
        throw InvalidConfigError(std::vector<ConfigError>{
            {"engine", "'" + flags.engine + "' is not allowed; allowed: libtorch, pytorch"}});
    }
    spec.engine = *engine;
    spec.backends = flags.backends.empty() ? defaultAttentionBackends(spec.engine) : flags.backends;
    spec.pyAttention = flags.pyAttention;
    spec.pyPath = flags.pyPath;
    spec.pyAttentionName = flags.pyAttentionName;
    spec.headDims = flags.headDims;
    spec.seqLens = flags.seqLens;
    spec.batch = flags.batch;
    spec.heads = flags.heads;
    spec.python = flags.python;
    spec.causal = flags.causal;
    spec.warmup = flags.warmup;
    spec.repeats = flags.repeats;
    spec.options.queryTile = flags.queryTile;
    spec.options.keyTile = flags.keyTile;
    const auto device = parseDeviceKind(flags.device);
    if (!device) {
        throw InvalidConfigError(std::vector<ConfigError>{
            {"device", "'" + flags.device + "' is not allowed; allowed: cpu, cuda"}});
    }
    spec.device = *device;
    spec.precisions = parsePrecisionNames(flags.precisions);
    return spec;
}

int commandAttention(const AttentionFlags& flags, bool json) {
    return guarded([&] {
        return runAttentionGrid(attentionSpecFromFlags(flags), flags.outDir, flags.outFile, json);
    });
}

int runAttentionGrid(const AttentionBenchSpec& spec, const std::string& outDir,
                     const std::string& outFile, bool json) {
    return guarded([&] {
        AttentionBenchControl control;
        control.cancel = checkedCancel();
        control.onPoint = [](const AttentionPoint& p, int index, int total) {
            std::fprintf(stderr, "[%d/%d] %s d=%lld seq=%lld %s: %s%s\n", index + 1, total,
                         p.backend.c_str(), static_cast<long long>(p.d),
                         static_cast<long long>(p.seq), toString(p.precision).c_str(),
                         p.status.c_str(),
                         p.message.empty() ? "" : (" (" + p.message + ")").c_str());
        };
        if (const auto why = outFile.empty() ? std::nullopt : whyCannotWriteFile(outFile)) {
            throw InvalidConfigError(std::vector<ConfigError>{{"--out-file", *why}});
        }
        const std::vector<AttentionPoint> points = runAttentionBenchmark(spec, control);
        RunConfig environmentConfig;
        environmentConfig.device = spec.device;
        const std::string file =
            attentionResultToJson(points, captureEnvironment(environmentConfig));
        if (!outDir.empty()) {
            const std::string dir = outDir + "/";
            writeFileAtomically(dir + "attention.json", file);
            writeFileAtomically(dir + "attention.csv", formatAttentionCsv(points));
            std::fprintf(stderr, "stepscope: attention.json and attention.csv written to %s\n",
                         outDir.c_str());
        }
        if (!outFile.empty()) {
            writeFileAtomically(outFile, file);
            std::fprintf(stderr, "stepscope: %s written\n", outFile.c_str());
        }
        std::cout << (json ? attentionPointsToJson(points) : formatAttentionTable(points));
        return kExitOk;
    });
}

int commandBreakdown(const std::string& file, const std::string& phase, const std::string& by,
                     bool flops, bool json, bool runFlagsGiven) {
    return guarded([&] {
        if (const std::optional<int> traced = commandTraceBreakdown(file, runFlagsGiven, json)) {
            return *traced;
        }
        const RunResult result = readRunFile(file);
        if (flops) {
            if (result.flopGroups.empty()) {
                std::cerr << "stepscope-cli: '" << file
                          << "' has no FLOP groups; make the run with --ops or --kernels\n";
                return kExitBadInput;
            }
            if (json) {
                std::cout << flopGroupsJson(result.flopGroups).dump(2) << "\n";
            } else {
                std::cout << formatFlopGroupTable(result.flopGroups);
            }
            return kExitOk;
        }
        std::vector<BreakdownRow> rows;
        try {
            rows = breakdown(result, phase, by);
        } catch (const std::invalid_argument& error) {
            std::cerr << "stepscope-cli: " << error.what() << " ('" << file << "')\n";
            return kExitBadInput;
        }
        if (json) {
            std::cout << breakdownRowsJson(rows).dump(2) << "\n";
        } else {
            std::cout << formatBreakdownTable(rows);
        }
        return kExitOk;
    });
}

int commandExport(const std::string& file, const std::string& chromeTrace,
                  const std::string& memviz) {
    return guarded([&] {
        if (chromeTrace.empty() && memviz.empty()) {
            std::cerr << "stepscope-cli: export: name what to write: --chrome-trace OUT.json "
                         "and/or --memviz OUT.pickle\n";
            return kExitBadInput;
        }
        // Before anything is read or built: a device, FIFO or folder is refused.
        for (const auto& [flag, path] :
             {std::pair<const char*, const std::string&>{"--chrome-trace", chromeTrace},
              {"--memviz", memviz}}) {
            if (const auto why = path.empty() ? std::nullopt : whyCannotWriteFile(path)) {
                throw InvalidConfigError(std::vector<ConfigError>{{flag, *why}});
            }
        }
        const RunResult result = readRunFile(file);
        try {
            // Both are built before either is written: nothing half-done on bad input.
            const std::string trace = chromeTrace.empty() ? "" : chromeTraceJson(result);
            const std::string pickle = memviz.empty() ? "" : memvizPickle(result.memory);
            if (!chromeTrace.empty()) {
                writeFileAtomically(chromeTrace, trace);
                std::fprintf(stderr, "stepscope: Chrome trace of step %d written to %s\n",
                             result.timeline.step, chromeTrace.c_str());
            }
            if (!memviz.empty()) {
                writeFileAtomically(memviz, pickle);
                std::fprintf(stderr,
                             "stepscope: memory_viz pickle (%zu events) written to %s; open it "
                             "at https://pytorch.org/memory_viz\n",
                             result.memory.size(), memviz.c_str());
            }
        } catch (const std::invalid_argument& error) {
            std::cerr << "stepscope-cli: " << error.what() << " ('" << file << "')\n";
            return kExitBadInput;
        }
        return kExitOk;
    });
}

int commandMemory(const std::string& file, size_t top, bool json) {
    return guarded([&] {
        const RunResult result = readRunFile(file);
        try {
            if (json) {
                std::cout << memoryReportJson(result, top).dump(2) << "\n";
            } else {
                std::cout << formatMemoryReport(result, top);
            }
        } catch (const std::invalid_argument& error) {
            std::cerr << "stepscope-cli: " << error.what() << " ('" << file << "')\n";
            return kExitBadInput;
        }
        return kExitOk;
    });
}

int commandDtypes(const ConfigFlags& flags, bool json) {
    return guarded([&] {
        const std::vector<DtypeRow> rows = inspectDtypeFlow(flags.toRunConfig());
        if (json) {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& row : rows) {
                out.push_back({{"what", row.what}, {"kind", row.kind}, {"dtype", row.dtype}});
            }
            std::cout << out.dump(2) << "\n";
        } else {
            std::cout << "| tensor | module | dtype |\n|---|---|---|\n";
            for (const auto& row : rows) {
                std::cout << "| " << row.what << " | " << row.kind << " | " << row.dtype << " |\n";
            }
        }
        return kExitOk;
    });
}

int commandAccumulate(int64_t count, bool json) {
    return guarded([&] {
        if (count < 1) {
            throw InvalidConfigError(std::vector<ConfigError>{
                {"count", "must be at least 1, got " + std::to_string(count)}});
        }
        const std::vector<AccumulationRow> rows = runAccumulationLab(0.01, count);
        if (json) {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& row : rows) {
                out.push_back({{"accumulator", row.accumulator},
                               {"addend", row.addend},
                               {"result", row.result},
                               {"exact", row.exact},
                               {"abs_error", row.absoluteError}});
            }
            std::cout << out.dump(2) << "\n";
        } else {
            std::cout << "Adding 0.01 " << count << " times (exact: " << 0.01 * double(count)
                      << "):\n\n"
                      << "| accumulator | addend | result | abs error |\n|---|---|---:|---:|\n";
            for (const auto& row : rows) {
                std::printf("| %s | %s | %.6f | %.6f |\n", row.accumulator.c_str(),
                            row.addend.c_str(), row.result, row.absoluteError);
            }
            std::cout << "\n" << accumulationNote(rows) << "\n";
        }
        return kExitOk;
    });
}

}  // namespace stepscope::cli
