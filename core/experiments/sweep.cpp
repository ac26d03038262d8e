#include "experiments/sweep.h"

#include <algorithm>
#include <filesystem>

#include "config/config_field.h"
#include "engines/environment.h"
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

// The four fields SweepSpec lists with their types.
bool isTypedAxis(const std::string& field) {
    return field == "model" || field == "ctx" || field == "mode" || field == "precision";
}

// How a point's value of an axis reads in its file name: "batch8", "sdpa",
// "tf32-on"; names (backends, engines, devices, optimizers) stand alone, numbers carry
// the field.
std::string axisLabel(const std::string& field, const std::string& value) {
    if (field == "attention" || field == "engine" || field == "device" || field == "optimizer") {
        return value;
    }
    if (field == "tf32" || field == "compile-mode" || field == "cuda-graph") {
        return (field == "tf32"         ? "tf32-"
                : field == "cuda-graph" ? "cuda-graph-"
                                        : "compile-") +
               value;
    }
    return field + value;
}

// The order sweeps have always named their axes in, kept so that --resume
// finds an earlier sweep's files; any other field follows in the table's.
std::vector<std::string> axisNamingOrder() {
    std::vector<std::string> names = {"batch",      "attention",  "activation-checkpoint",
                                      "loss",       "loss-chunk", "optimizer",
                                      "cuda-graph", "tf32",       "warmup",
                                      "steps",      "engine",     "compile-mode",
                                      "device",     "seed",       "threads"};
    for (const auto& field : configFieldNames()) {
        if (std::find(names.begin(), names.end(), field) == names.end()) {
            names.push_back(field);
        }
    }
    return names;
}

}  // namespace

std::vector<std::string> sweepAxisFields() {
    std::vector<std::string> names;
    for (const auto& field : configFieldNames()) {
        if (!isTypedAxis(field)) {
            names.push_back(field);
        }
    }
    return names;
}

void checkSweepAxes(const std::vector<SweepAxis>& axes) {
    std::vector<ConfigError> errors;
    const auto& known = configFieldNames();
    for (size_t i = 0; i < axes.size(); ++i) {
        const SweepAxis& axis = axes[i];
        if (std::find(known.begin(), known.end(), axis.field) == known.end()) {
            errors.push_back({axis.field, "is not a config field a sweep can vary; allowed: " +
                                              joinNames(sweepAxisFields())});
            continue;
        }
        if (isTypedAxis(axis.field)) {
            errors.push_back({axis.field,
                              "is swept through its own list (models, contexts, "
                              "modes, precisions), not as an axis"});
            continue;
        }
        for (size_t j = 0; j < i; ++j) {
            if (axes[j].field == axis.field) {
                errors.push_back({axis.field, "is given as an axis twice"});
            }
        }
        if (axis.values.empty()) {
            errors.push_back({axis.field, "needs at least one value"});
        }
        for (size_t v = 0; v < axis.values.size(); ++v) {
            if (std::find(axis.values.begin(), axis.values.begin() + long(v), axis.values[v]) !=
                axis.values.begin() + long(v)) {
                errors.push_back({axis.field, "'" + axis.values[v] + "' is listed twice"});
                continue;
            }
            try {
                RunConfig probe;
                setConfigField(probe, axis.field, axis.values[v]);
            } catch (const InvalidConfigError& error) {
                errors.insert(errors.end(), error.errors().begin(), error.errors().end());
            }
        }
    }
    if (!errors.empty()) {
        throw InvalidConfigError(errors);
    }
}

std::vector<std::string> varyingAxisFields(const std::vector<SweepAxis>& axes) {
    std::vector<std::string> fields;
    for (const auto& axis : axes) {
        if (axis.values.size() > 1) {
            fields.push_back(axis.field);
        }
    }
    return fields;
}

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
    checkSweepAxes(spec.axes);
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
    // Each axis multiplies the points so far, so the last one varies fastest.
    for (const auto& axis : spec.axes) {
        std::vector<RunConfig> crossed;
        crossed.reserve(points.size() * axis.values.size());
        for (const auto& point : points) {
            for (const auto& value : axis.values) {
                RunConfig config = point;
                setConfigField(config, axis.field, value);
                crossed.push_back(std::move(config));
            }
        }
        points = std::move(crossed);
    }
    return points;
}

std::string sweepPointFileName(const RunConfig& config, const std::vector<SweepAxis>& axes) {
    std::string name = config.model.name + "_ctx" + std::to_string(config.contextLength) + "_" +
                       toString(config.mode) + "_" + toString(config.precision);
    // In one order, whatever order the axes were given in: the CLI and the
    // app name one point alike, and --resume finds it.
    const std::vector<std::string> varying = varyingAxisFields(axes);
    for (const auto& field : axisNamingOrder()) {
        if (std::find(varying.begin(), varying.end(), field) != varying.end()) {
            name += '_';
            name += axisLabel(field, configFieldText(config, field));
        }
    }
    return name + ".json";
}

namespace {

// Empty when `file` holds an ok run of `point` (read into `result`), else
// why the point must run again.
std::string whyNotReused(const std::string& file, const RunConfig& point, RunResult& result) {
    try {
        result = readRunFile(file);
    } catch (const std::exception& unreadable) {
        return std::string("unreadable: ") + unreadable.what();
    }
    if (result.status != RunStatus::Ok) {
        return "it says " + toString(result.status);
    }
    const std::vector<std::string> differences = configDifferences(result.config, point);
    if (!differences.empty()) {
        std::string text = "it was made with another config (";
        for (size_t i = 0; i < differences.size(); ++i) {
            text += (i ? "; " : "") + differences[i];
        }
        return text + ")";
    }
    // The config says how many steps were run: a file whose steps are not
    // those (eleven steps all numbered 0 for --steps 1) was not made by it.
    const size_t expected = size_t(point.warmupSteps) + size_t(point.measuredSteps);
    bool inOrder = result.steps.size() == expected;
    for (size_t i = 0; inOrder && i < expected; ++i) {
        inOrder = result.steps[i].index == int(i) &&
                  result.steps[i].warmup == (i < size_t(point.warmupSteps));
    }
    if (!inOrder) {
        return "its steps are not the config's (" + std::to_string(result.steps.size()) +
               " steps; expected " + std::to_string(point.warmupSteps) + " warm-up and " +
               std::to_string(point.measuredSteps) + " measured, numbered 0.." +
               std::to_string(expected - 1) + ")";
    }
    return {};
}

}  // namespace

std::vector<RunResult> runSweep(const SweepSpec& spec, const SweepControl& control) {
    const std::vector<RunConfig> points = expandSweep(spec);
    const ValidationContext context = validationContext();
    for (const auto& point : points) {
        auto errors = validate(point, context);
        if (!errors.empty()) {
            for (auto& error : errors) {
                error.message += " (sweep point " + sweepPointFileName(point, spec.axes) + ")";
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
            (std::filesystem::path(spec.outDir) / sweepPointFileName(points[i], spec.axes))
                .string();
        if (control.observer) {
            control.observer->onPointStarted(i, total, points[i]);
        }
        RunResult result;
        bool reused = false;
        if (spec.resume && std::filesystem::exists(file)) {
            const std::string why = whyNotReused(file, points[i], result);
            reused = why.empty();
            if (!reused && control.observer) {
                control.observer->onPointRerun(i, file, why);
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
                            formatSweepMarkdown(results, varyingAxisFields(spec.axes)));
        if (control.observer) {
            control.observer->onPointFinished(i, total, result, file);
        }
    }
    return results;
}

}  // namespace stepscope
