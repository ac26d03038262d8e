#include "bench/sweep.h"

#include <filesystem>

#include "bench/environment.h"
#include "results/report.h"
#include "results/run_file.h"
#include "util/atomic_file.h"
#include "util/strings.h"

namespace stepscope {

namespace {

template <typename Enum>
std::vector<Enum> parseAll(const std::string& field, const std::vector<std::string>& texts,
                           std::optional<Enum> (*parse)(const std::string&),
                           const std::vector<std::string>& allowed,
                           std::vector<ConfigError>& errors) {
    std::vector<Enum> values;
    for (const auto& text : texts) {
        if (const auto value = parse(text)) {
            values.push_back(*value);
        } else {
            errors.push_back(
                {field, "'" + text + "' is not allowed; allowed: " + joinNames(allowed)});
        }
    }
    return values;
}

}  // namespace

SweepSpec makeSweepSpec(const RunConfig& base, const std::vector<std::string>& models,
                        const std::vector<int64_t>& contexts, const std::vector<std::string>& modes,
                        const std::vector<std::string>& precisions, const std::string& outDir) {
    std::vector<ConfigError> errors;
    SweepSpec spec;
    spec.base = base;
    spec.outDir = outDir;
    spec.contexts = contexts;
    if (models.empty()) {
        spec.models.push_back(base.model);
    }
    for (const auto& name : models) {
        if (const auto preset = findPreset(name)) {
            spec.models.push_back(*preset);
        } else {
            errors.push_back({"model", "unknown preset '" + name +
                                           "'; allowed: " + joinNames(presetNames()) +
                                           ", or --d-model/--d-ff/--layers/--heads"});
        }
    }
    spec.modes = parseAll<RunMode>("mode", modes, parseRunMode, runModeNames(), errors);
    spec.precisions =
        parseAll<Precision>("precision", precisions, parsePrecision, precisionNames(), errors);
    if (errors.empty() && (spec.models.empty() || spec.contexts.empty() || spec.modes.empty() ||
                           spec.precisions.empty())) {
        errors.push_back({"sweep",
                          "every list (models, context lengths, modes, precisions) "
                          "needs at least one value"});
    }
    if (!errors.empty()) {
        throw InvalidConfigError(errors);
    }
    return spec;
}

std::vector<RunConfig> expandSweep(const SweepSpec& spec) {
    std::vector<RunConfig> points;
    for (const auto& model : spec.models) {
        for (int64_t context : spec.contexts) {
            for (RunMode mode : spec.modes) {
                for (Precision precision : spec.precisions) {
                    RunConfig config = spec.base;
                    config.model = model;
                    config.model.vocabSize = spec.base.model.vocabSize;
                    config.model.maxContext = spec.base.model.maxContext;
                    config.contextLength = context;
                    config.mode = mode;
                    config.precision = precision;
                    points.push_back(config);
                }
            }
        }
    }
    return points;
}

std::string sweepPointFileName(const RunConfig& config) {
    return config.model.name + "_ctx" + std::to_string(config.contextLength) + "_" +
           toString(config.mode) + "_" + toString(config.precision) + ".json";
}

std::vector<RunResult> runSweep(const SweepSpec& spec, const SweepControl& control) {
    const std::vector<RunConfig> points = expandSweep(spec);
    const ValidationContext context = validationContext();
    for (const auto& point : points) {
        auto errors = validate(point, context);
        if (!errors.empty()) {
            for (auto& error : errors) {
                error.message += " (sweep point " + sweepPointFileName(point) + ")";
            }
            throw InvalidConfigError(std::move(errors));
        }
    }
    std::filesystem::create_directories(spec.outDir);
    const std::function<RunResult(const RunConfig&, const RunControl&)> runPoint =
        control.runPoint ? control.runPoint : [](const RunConfig& c, const RunControl& r) {
            return runBenchmark(c, r);
        };

    std::vector<RunResult> results;
    std::vector<std::string> files;
    const int total = static_cast<int>(points.size());
    for (int i = 0; i < total; ++i) {
        if (control.cancel && control.cancel->load()) {
            break;
        }
        const std::string file =
            (std::filesystem::path(spec.outDir) / sweepPointFileName(points[i])).string();
        if (control.observer) {
            control.observer->onPointStarted(i, total, points[i]);
        }
        RunResult result;
        bool reused = false;
        if (spec.resume && std::filesystem::exists(file)) {
            try {
                result = readRunFile(file);
                reused = result.status == RunStatus::Ok;
            } catch (const RunFileError&) {
                reused = false;  // unreadable: run the point again
            }
        }
        if (!reused) {
            RunControl runControl;
            runControl.observer = control.runObserver;
            runControl.cancel = control.cancel;
            result = runPoint(points[i], runControl);
            writeRunFile(result, file);
        }
        results.push_back(result);
        files.push_back(file);
        writeFileAtomically((std::filesystem::path(spec.outDir) / "sweep.csv").string(),
                            formatSweepCsv(results, files));
        writeFileAtomically((std::filesystem::path(spec.outDir) / "sweep.md").string(),
                            formatSweepMarkdown(results));
        if (control.observer) {
            control.observer->onPointFinished(i, total, result, file);
        }
    }
    return results;
}

}  // namespace stepscope
