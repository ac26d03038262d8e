#include "config/config_field.h"

#include <charconv>
#include <functional>

#include "util/strings.h"

namespace stepscope {

namespace {

[[noreturn]] void reject(const std::string& field, const std::string& message) {
    throw InvalidConfigError(std::vector<ConfigError>{{field, message}});
}

template <typename Integer>
Integer integerFrom(const std::string& field, const std::string& text) {
    Integer value{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
        reject(field, "'" + text + "' is not allowed; allowed: a whole number");
    }
    return value;
}

template <typename Enum>
Enum choiceFrom(const std::string& field, const std::string& text,
                std::optional<Enum> (*parse)(const std::string&),
                const std::vector<std::string>& allowed) {
    const auto value = parse(text);
    if (!value) {
        reject(field, "'" + text + "' is not allowed; allowed: " + joinNames(allowed));
    }
    return *value;
}

struct Field {
    const char* name;
    std::function<void(RunConfig&, const std::string&)> set;
    std::function<std::string(const RunConfig&)> text;
};

// What runs: the model, the shape of its input and the step taken.
void addModelFields(std::vector<Field>& table) {
    table.push_back({"model",
                     [](RunConfig& c, const std::string& text) {
                         const auto preset = findPreset(text);
                         if (!preset) {
                             reject("model", "unknown preset '" + text +
                                                 "'; allowed: " + joinNames(presetNames()));
                         }
                         const ModelDims kept = c.model;
                         c.model = *preset;
                         c.model.vocabSize = kept.vocabSize;
                         c.model.maxContext = kept.maxContext;
                     },
                     [](const RunConfig& c) { return c.model.name; }});
    table.push_back({"ctx",
                     [](RunConfig& c, const std::string& text) {
                         c.contextLength = integerFrom<int64_t>("ctx", text);
                     },
                     [](const RunConfig& c) { return std::to_string(c.contextLength); }});
    table.push_back({"batch",
                     [](RunConfig& c, const std::string& text) {
                         c.batchSize = integerFrom<int64_t>("batch", text);
                     },
                     [](const RunConfig& c) { return std::to_string(c.batchSize); }});
    table.push_back({"mode",
                     [](RunConfig& c, const std::string& text) {
                         c.mode = choiceFrom("mode", text, parseRunMode, runModeNames());
                     },
                     [](const RunConfig& c) { return toString(c.mode); }});
}

// How it computes: the precision and the attention backend.
void addNumericsFields(std::vector<Field>& table) {
    table.push_back({"precision",
                     [](RunConfig& c, const std::string& text) {
                         c.precision =
                             choiceFrom("precision", text, parsePrecision, precisionNames());
                     },
                     [](const RunConfig& c) { return toString(c.precision); }});
    table.push_back({"tf32",
                     [](RunConfig& c, const std::string& text) {
                         if (text != "on" && text != "off") {
                             reject("tf32", "'" + text + "' is not allowed; allowed: on, off");
                         }
                         c.tf32 = text == "on";
                     },
                     [](const RunConfig& c) { return std::string(c.tf32 ? "on" : "off"); }});
    table.push_back({"attention", [](RunConfig& c, const std::string& text) { c.attention = text; },
                     [](const RunConfig& c) { return c.attention; }});
}

// How it is measured: the steps, the device, the seed and the threads.
void addMeasurementFields(std::vector<Field>& table) {
    table.push_back({"warmup",
                     [](RunConfig& c, const std::string& text) {
                         c.warmupSteps = integerFrom<int>("warmup", text);
                     },
                     [](const RunConfig& c) { return std::to_string(c.warmupSteps); }});
    table.push_back({"steps",
                     [](RunConfig& c, const std::string& text) {
                         c.measuredSteps = integerFrom<int>("steps", text);
                     },
                     [](const RunConfig& c) { return std::to_string(c.measuredSteps); }});
    table.push_back({"device",
                     [](RunConfig& c, const std::string& text) {
                         c.device = choiceFrom("device", text, parseDeviceKind, deviceNames());
                     },
                     [](const RunConfig& c) { return toString(c.device); }});
    table.push_back({"seed",
                     [](RunConfig& c, const std::string& text) {
                         c.seed = integerFrom<uint64_t>("seed", text);
                     },
                     [](const RunConfig& c) { return std::to_string(c.seed); }});
    table.push_back({"threads",
                     [](RunConfig& c, const std::string& text) {
                         c.threads = integerFrom<int>("threads", text);
                     },
                     [](const RunConfig& c) { return std::to_string(c.threads); }});
}

// What runs it: the engine and torch.compile's mode.
void addEngineFields(std::vector<Field>& table) {
    table.push_back({"engine",
                     [](RunConfig& c, const std::string& text) {
                         c.engine = choiceFrom("engine", text, parseEngine, engineNames());
                     },
                     [](const RunConfig& c) { return toString(c.engine); }});
    table.push_back({"compile-mode",
                     [](RunConfig& c, const std::string& text) { c.compileMode = text; },
                     [](const RunConfig& c) { return c.compileMode; }});
}

// The levers that trade time for memory: checkpointing, the chunked loss,
// the optimizer's form and CUDA graphs.
void addLeverFields(std::vector<Field>& table) {
    table.push_back({"activation-checkpoint",
                     [](RunConfig& c, const std::string& text) {
                         const auto strategy = parseCheckpointStrategy(text);
                         if (!strategy) {
                             reject("activation-checkpoint",
                                    "'" + text +
                                        "' is not allowed; allowed: " + kCheckpointStrategyChoices);
                         }
                         c.activationCheckpoint = *strategy;
                     },
                     [](const RunConfig& c) { return toString(c.activationCheckpoint); }});
    table.push_back({"loss",
                     [](RunConfig& c, const std::string& text) {
                         c.loss = choiceFrom("loss", text, parseLossKind, lossNames());
                     },
                     [](const RunConfig& c) { return toString(c.loss); }});
    table.push_back({"loss-chunk",
                     [](RunConfig& c, const std::string& text) {
                         c.lossChunkTokens = integerFrom<int64_t>("loss-chunk", text);
                     },
                     [](const RunConfig& c) { return std::to_string(c.lossChunkTokens); }});
    table.push_back({"optimizer",
                     [](RunConfig& c, const std::string& text) {
                         c.optimizer =
                             choiceFrom("optimizer", text, parseOptimizerKind, optimizerNames());
                     },
                     [](const RunConfig& c) { return toString(c.optimizer); }});
    table.push_back({"cuda-graph",
                     [](RunConfig& c, const std::string& text) {
                         if (text != "on" && text != "off") {
                             reject("cuda-graph",
                                    "'" + text + "' is not allowed; allowed: on, off");
                         }
                         c.cudaGraph = text == "on";
                     },
                     [](const RunConfig& c) { return std::string(c.cudaGraph ? "on" : "off"); }});
}

// In the order configFieldNames() lists them.
const std::vector<Field>& fields() {
    static const std::vector<Field> table = [] {
        std::vector<Field> all;
        addModelFields(all);
        addNumericsFields(all);
        addMeasurementFields(all);
        addEngineFields(all);
        addLeverFields(all);
        return all;
    }();
    return table;
}

const Field& fieldNamed(const std::string& name) {
    for (const auto& field : fields()) {
        if (name == field.name) {
            return field;
        }
    }
    reject(name, "not a config field; allowed: " + joinNames(configFieldNames()));
}

}  // namespace

const std::vector<std::string>& configFieldNames() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& field : fields()) {
            out.emplace_back(field.name);
        }
        return out;
    }();
    return names;
}

void setConfigField(RunConfig& config, const std::string& field, const std::string& text) {
    fieldNamed(field).set(config, text);
}

std::string configFieldText(const RunConfig& config, const std::string& field) {
    return fieldNamed(field).text(config);
}

}  // namespace stepscope
