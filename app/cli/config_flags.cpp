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

bool contains(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

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

// The registry's names (what validationContext() allows) and ours in Python
// (validate() says which engine has which): --attention's, in the help and
// checked at parsing with a message that lists them.
std::vector<std::string> attentionFlagValues() {
    std::vector<std::string> backends = attentionBackendNames();
    backends.insert(backends.end(), pythonAttentionBackends().begin(),
                    pythonAttentionBackends().end());
    return backends;
}

std::string typeNameOf(const ConfigField& field) {
    if (!field.valueName.empty()) {
        return field.valueName;
    }
    if (field.type != FieldType::Integer) {
        return "TEXT";
    }
    return std::holds_alternative<uint64_t>(field.defaultValue()) ? "UINT" : "INT";
}

// What the CLI checks of a value while parsing, with CLI11's message.
void addChecks(CLI::Option* option, const ConfigField& field) {
    if (field.name == "attention") {
        option->check(CLI::IsMember(attentionFlagValues()));
    } else if (!field.flagChecked) {
        return;
    } else if (field.type == FieldType::Integer) {
        option->check(integerIn(field.min, field.maximum()));
    } else if (field.type == FieldType::Choice && !field.values.empty()) {
        option->check(CLI::IsMember(field.values));
    }
}

// One field's flag, from its declaration: a comma list where `list`.
void addFieldFlag(ConfigFlags& flags, CLI::App& command, const ConfigField& field, bool list) {
    const std::string flag = "--" + field.name;
    if (field.type == FieldType::Switch) {
        if (field.sweep) {
            addOnOff(command, list, flag, field.helpText(), flags.switches[field.name],
                     flags.values[field.name]);
        } else {
            command.add_flag(flag, flags.switches[field.name], field.helpText());
        }
        return;
    }
    std::vector<std::string>& values = flags.values[field.name];
    CLI::Option* option = command.add_option(flag, values, field.helpText());
    if (list) {
        option->delimiter(',');
    } else {
        option->expected(1);
    }
    option->type_name(typeNameOf(field));
    addChecks(option, field);
    // Not where another layer has the values (the attention backends).
    const bool showsDefault =
        field.type == FieldType::Integer || field.type == FieldType::Number ||
        (field.type == FieldType::Choice && (!field.values.empty() || !field.anyText));
    if (!values.empty()) {
        option->capture_default_str();  // the command's own
    } else if (showsDefault) {
        option->default_str("[" + field.defaultText() + "]");  // as CLI11 shows a list's
    }
}

// The model field's flags: a preset list or custom dims, and the vocabulary.
void addModelFlags(ConfigFlags& flags, CLI::App& command, bool list) {
    CLI::Option* model =
        command.add_option("--model", flags.models, findConfigField("model")->helpText());
    if (list) {
        model->delimiter(',');
    } else {
        model->expected(1);
    }
    command
        .add_option("--d-model", flags.dModel, "custom model width (with --d-ff --layers --heads)")
        ->check(integerIn(kDModelLimit));
    command.add_option("--d-ff", flags.dFf, "custom MLP width")->check(integerIn(kDFfLimit));
    command.add_option("--layers", flags.layers, "custom number of blocks")
        ->check(integerIn(kLayersLimit));
    command.add_option("--heads", flags.heads, "custom number of attention heads")
        ->check(integerIn(kHeadsLimit));
    command
        .add_option("--vocab", flags.vocab,
                    "vocabulary size (default: the preset's; 10000 for all but "
                    "leaderboard's 151936)")
        ->check(integerIn(kVocabLimit));
}

void addMaxContextFlag(ConfigFlags& flags, CLI::App& command) {
    command
        .add_option("--max-ctx", flags.maxContext,
                    "the model's maximum context length (default: the preset's; 2048 "
                    "for all but leaderboard's 32768)")
        ->check(integerIn(kMaxContextLimit));
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

void ConfigFlags::setDefault(const std::string& field, std::vector<std::string> texts) {
    values[field] = std::move(texts);
}

std::string ConfigFlags::text(const std::string& field) const {
    const auto found = values.find(field);
    return found == values.end() || found->second.empty() ? std::string() : found->second.front();
}

std::vector<int> ConfigFlags::integers(const std::string& field) const {
    std::vector<int> out;
    if (const auto found = values.find(field); found != values.end()) {
        for (const auto& value : found->second) {
            RunConfig probe;
            setConfigField(probe, field, value);  // refuses what is not a whole number
            out.push_back(std::stoi(value));
        }
    }
    return out;
}

void ConfigFlags::addTo(CLI::App& command, bool lists, unsigned groups,
                        const std::vector<std::string>& listFlags) {
    for (const FieldSection section :
         {FieldSection::Model, FieldSection::Workload, FieldSection::Steps, FieldSection::Trace,
          FieldSection::Engine, FieldSection::Distributed, FieldSection::Data}) {
        if ((groups & (1u << unsigned(section))) == 0) {
            continue;
        }
        if (section == FieldSection::Model) {
            addModelFlags(*this, command, lists || contains(listFlags, "--model"));
        } else if (section == FieldSection::Workload) {
            addMaxContextFlag(*this, command);
        }
        for (const ConfigField& field : configFields()) {
            if (field.section == section && field.type != FieldType::Model) {
                // One value in a single run; a comma list in a sweep, or where
                // a study varies that flag.
                const bool list = field.sweep && (lists || contains(listFlags, "--" + field.name));
                addFieldFlag(*this, command, field, list);
            }
        }
    }
}

RunConfig ConfigFlags::toRunConfig() const {
    SweepSpec spec = toSweepSpec("");
    return expandSweep(spec).front();
}

namespace {

// A value the flags leave to the model: the presets' own (one for all), or
// ModelDims' default for custom dims.
int64_t presetsOwn(const std::vector<std::string>& presets, const char* flag,
                   int64_t ModelDims::*field) {
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
}

// Custom dims come four together, and not beside a preset.
void checkCustomDims(const ConfigFlags& flags) {
    const bool all = flags.dModel && flags.dFf && flags.layers && flags.heads;
    if (!flags.models.empty() && all) {
        // The dims make their own model: the preset would be dropped without a word.
        throw InvalidConfigError(
            {{"model", "--model " + joinNames(flags.models) +
                           " and custom dims (--d-model, --d-ff, --layers, --heads) were both "
                           "given, and the dims make their own model; give --model NAME alone, "
                           "or the four dims without --model"}});
    }
    if (!all) {
        // Half a custom model would run with zeros for the rest.
        std::string list;
        for (const auto& [flag, value] :
             {std::pair<const char*, int64_t>{"--d-model", flags.dModel},
              {"--d-ff", flags.dFf},
              {"--layers", flags.layers},
              {"--heads", flags.heads}}) {
            if (!value) {
                list += (list.empty() ? "" : ", ") + std::string(flag);
            }
        }
        throw InvalidConfigError(
            {{"model", "custom dims need --d-model, --d-ff, --layers and --heads together; " +
                           list + " missing (or use --model NAME alone)"}});
    }
}

// The model field: `base.model` and the presets to sweep (empty: base's).
std::vector<std::string> modelFromFlags(const ConfigFlags& flags, RunConfig& base) {
    // Without --model or dims the weights give the shape: a from_pretrained
    // folder's config, or the state dict's tensors (and --heads).
    const std::string weights = flags.text("weights");
    const bool shapeFromWeights =
        !weights.empty() && flags.models.empty() && !(flags.dModel || flags.dFf || flags.layers);
    const bool customDims =
        !shapeFromWeights && (flags.dModel || flags.dFf || flags.layers || flags.heads);
    const std::vector<std::string> presets =
        customDims || shapeFromWeights ? std::vector<std::string>{}
        : flags.models.empty()         ? std::vector<std::string>{"nano"}
                                       : flags.models;
    if (customDims) {
        checkCustomDims(flags);
        base.model.dModel = flags.dModel;
        base.model.dFf = flags.dFf;
        base.model.layers = flags.layers;
        base.model.heads = flags.heads;
        base.model.name = customModelName(base.model);
    }
    if (shapeFromWeights) {
        try {
            base.model = weightsShape(weights, flags.heads);
        } catch (const std::runtime_error& error) {
            throw InvalidConfigError(std::vector<ConfigError>{{"weights", error.what()}});
        }
    } else {
        base.model.vocabSize = presetsOwn(presets, "vocab", &ModelDims::vocabSize);
        base.model.maxContext = presetsOwn(presets, "max-ctx", &ModelDims::maxContext);
    }
    if (flags.vocab > 0) {
        base.model.vocabSize = flags.vocab;
    }
    if (flags.maxContext > 0) {
        base.model.maxContext = flags.maxContext;
    }
    return presets;
}

// Every field that takes one value (not a sweep's list), as given; and a
// sweep switch given alone as a flag (--tf32 in a run).
void applySingleValues(const ConfigFlags& flags, RunConfig& base) {
    for (const ConfigField& field : configFields()) {
        if (const auto on = flags.switches.find(field.name); on != flags.switches.end()) {
            if (on->second || !field.sweep) {
                setConfigField(base, field.name, on->second ? "on" : "off");
            }
        } else if (!field.sweep && !flags.text(field.name).empty()) {
            setConfigField(base, field.name, flags.text(field.name));
        }
    }
    if (!base.pyAttention.empty()) {
        // The user's attention is the run's attention; `attention` names it.
        if (!flags.text("attention").empty()) {
            throw InvalidConfigError(std::vector<ConfigError>{
                {"attention",
                 "--py-attention is this run's attention; leave --attention out "
                 "(or run ours without --py-attention)"}});
        }
        base.attention = pythonTargetName(base.pyAttention);
    }
}

// The batch and context of a --tokens file: base.batchSize, and the contexts.
std::vector<int64_t> tokenShape(RunConfig& base) {
    try {
        ModelDims limits;  // what the file is checked against: the vocab and context flags
        limits.vocabSize = base.model.vocabSize;
        limits.maxContext = base.model.maxContext;
        const at::Tensor batchTokens = readTokenBatch(base.tokensPath, limits);
        base.batchSize = batchTokens.size(0);
        return {batchTokens.size(1) - 1};
    } catch (const std::runtime_error& error) {
        throw InvalidConfigError(std::vector<ConfigError>{{"tokens", error.what()}});
    }
}

// A list the flags give, or the field's default alone.
std::vector<std::string> listOf(const ConfigFlags& flags, const std::string& field) {
    const auto found = flags.values.find(field);
    if (found != flags.values.end() && !found->second.empty()) {
        return found->second;
    }
    return {findConfigField(field)->defaultText()};
}

// Every other list: its first value in the base, and an axis where it has
// more than one, in the table's order (file names order them themselves).
std::vector<SweepAxis> axesFromFlags(const ConfigFlags& flags, RunConfig& base) {
    std::vector<SweepAxis> axes;
    for (const auto& name : sweepAxisFields()) {
        const auto found = flags.values.find(name);
        if (found == flags.values.end() || found->second.empty() ||
            (name == "batch" && !base.tokensPath.empty())) {
            continue;
        }
        setConfigField(base, name, found->second.front());
        if (found->second.size() > 1) {
            axes.push_back({name, found->second});
        }
    }
    return axes;
}

}  // namespace

SweepSpec ConfigFlags::toSweepSpec(const std::string& outDir) const {
    RunConfig base;
    const std::vector<std::string> presets = modelFromFlags(*this, base);
    applySingleValues(*this, base);
    std::vector<int64_t> contexts;
    if (!base.tokensPath.empty()) {
        contexts = tokenShape(base);
    } else {
        for (const auto& text : listOf(*this, "ctx")) {
            RunConfig probe;
            setConfigField(probe, "ctx", text);
            contexts.push_back(probe.contextLength);
        }
    }
    std::vector<SweepAxis> axes = axesFromFlags(*this, base);
    SweepSpec spec = makeSweepSpec(base, presets, contexts, listOf(*this, "mode"),
                                   listOf(*this, "precision"), outDir);
    checkSweepAxes(axes);
    spec.axes = std::move(axes);
    return spec;
}

}  // namespace stepscope::cli
