#include "config/config_field.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "config/limits.h"
#include "util/strings.h"

namespace stepscope {

namespace {

// A field's key in the run file: its name with '_' for '-'.
std::string keyOf(const std::string& name) {
    std::string key = name;
    for (char& c : key) {
        c = c == '-' ? '_' : c;
    }
    return key;
}

ConfigField named(std::string name, FieldType type) {
    ConfigField field;
    field.key = keyOf(name);
    field.name = std::move(name);
    field.type = type;
    return field;
}

template <typename Integer>
Integer integerFrom(const std::string& field, const std::string& text) {
    Integer value{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
        // An unsigned field (the seed) says so: -1 is no seed, not 2^64 - 1.
        const std::string allowed =
            std::is_unsigned_v<Integer>
                ? "a whole number from 0 to " + std::to_string(std::numeric_limits<Integer>::max())
                : std::string("a whole number");
        rejectFieldText(field, "'" + text + "' is not allowed; allowed: " + allowed);
    }
    return value;
}

bool onOffFrom(const std::string& field, const std::string& text) {
    if (text != "on" && text != "off") {
        rejectFieldText(field, "'" + text + "' is not allowed; allowed: on, off");
    }
    return text == "on";
}

int64_t asInteger(const ConfigValue& value) {
    if (const auto* unsignedValue = std::get_if<uint64_t>(&value)) {
        return static_cast<int64_t>(*unsignedValue);
    }
    return std::get<int64_t>(value);
}

template <typename Integer>
ConfigField integerOf(std::string name, Integer RunConfig::*member) {
    ConfigField field = named(std::move(name), FieldType::Integer);
    field.min = std::numeric_limits<Integer>::min();
    field.max = int64_t(std::min<uint64_t>(std::numeric_limits<Integer>::max(),
                                           std::numeric_limits<int64_t>::max()));
    field.text = [member](const RunConfig& c) { return std::to_string(c.*member); };
    field.setText = [member, fieldName = field.name](RunConfig& c, const std::string& text) {
        c.*member = integerFrom<Integer>(fieldName, text);
    };
    if constexpr (std::is_unsigned_v<Integer>) {
        field.get = [member](const RunConfig& c) { return ConfigValue(uint64_t(c.*member)); };
        field.rangeElsewhere = true;  // every value of its type is allowed
    } else {
        field.get = [member](const RunConfig& c) { return ConfigValue(int64_t(c.*member)); };
    }
    field.set = [member](RunConfig& c, const ConfigValue& value) {
        c.*member = static_cast<Integer>(asInteger(value));
    };
    return field;
}

// "must be ≥ 1, got 0; allowed: 1..1024", as the CLI's flags say it, unless
// the field says it its own way.
std::optional<std::string> rangeProblem(const ConfigField& field, const RunConfig& config) {
    const int64_t value = asInteger(field.get(config));
    const int64_t maximum = field.maximum();
    if (value >= field.min && value <= maximum) {
        return std::nullopt;
    }
    if (field.rangeMessage) {
        return field.rangeMessage(value);
    }
    const std::string bound =
        value < field.min ? "≥ " + std::to_string(field.min) : "≤ " + std::to_string(maximum);
    return "must be " + bound + ", got " + std::to_string(value) + "; " +
           allowedRange(field.min, maximum);
}

// "allowed only with --engine pytorch or pytorch-compile, not libtorch".
std::string engineProblem(const ConfigField& field, Engine engine) {
    std::string engines;
    for (const auto& name : engineNames()) {
        if (field.takenBy(*parseEngine(name))) {
            engines += (engines.empty() ? "" : " or ") + name;
        }
    }
    return "allowed only with --engine " + engines + ", not " + toString(engine);
}

std::vector<ConfigField>& table() {
    static std::vector<ConfigField> fields = builtInConfigFields();
    return fields;
}

}  // namespace

void rejectFieldText(const std::string& field, const std::string& message) {
    throw InvalidConfigError(std::vector<ConfigError>{{field, message}});
}

bool runsInWorker(Engine engine) {
    return (engineBit(engine) & kWorkerEngines) != 0;
}

ConfigField& ConfigField::withHelp(std::string text) {
    help = std::move(text);
    return *this;
}
ConfigField& ConfigField::withLabel(std::string text) {
    label = std::move(text);
    return *this;
}
ConfigField& ConfigField::in(FieldSection where) {
    section = where;
    return *this;
}
ConfigField& ConfigField::forEngines(unsigned engineBits) {
    engines = engineBits;
    return *this;
}
ConfigField& ConfigField::sweepAxis() {
    sweep = true;
    return *this;
}
ConfigField& ConfigField::namesCode() {
    code = true;
    return *this;
}
ConfigField& ConfigField::required() {
    requiredInFile = true;
    return *this;
}
ConfigField& ConfigField::fileKey(std::string runFileKey) {
    key = std::move(runFileKey);
    return *this;
}
ConfigField& ConfigField::onlyWhenSet() {
    writtenWhenDefault = false;
    return *this;
}
ConfigField& ConfigField::checkedByConfig() {
    flagChecked = false;
    return *this;
}
ConfigField& ConfigField::range(int64_t minimum, int64_t maximum) {
    min = minimum;
    max = maximum;
    maxNow = nullptr;
    return *this;
}
ConfigField& ConfigField::range(int64_t minimum, std::function<int64_t()> maximum) {
    min = minimum;
    maxNow = std::move(maximum);
    return *this;
}
ConfigField& ConfigField::rangeCheckedElsewhere() {
    rangeElsewhere = true;
    return *this;
}
ConfigField& ConfigField::outOfRange(std::function<std::string(int64_t value)> message) {
    rangeMessage = std::move(message);
    return *this;
}
ConfigField& ConfigField::withWorkerValues(std::vector<std::string> served) {
    workerValues = std::move(served);
    return *this;
}
ConfigField& ConfigField::withAllowedText(std::string text) {
    allowedText = std::move(text);
    return *this;
}
ConfigField& ConfigField::withValueName(std::string text) {
    valueName = std::move(text);
    return *this;
}
ConfigField& ConfigField::withCheck(
    std::function<std::optional<std::string>(const RunConfig&)> hook) {
    check = std::move(hook);
    return *this;
}
ConfigField& ConfigField::withEngineMessage(
    std::function<std::optional<std::string>(const RunConfig&)> hook) {
    engineMessage = std::move(hook);
    return *this;
}

namespace {

// A RunConfig as it is made: what each field is when nothing sets it.
const RunConfig& defaults() {
    static const RunConfig made;
    return made;
}

}  // namespace

ConfigValue ConfigField::defaultValue() const {
    return get(defaults());
}

std::string ConfigField::defaultText() const {
    return text(defaults());
}

std::string ConfigField::allowed() const {
    return allowedText.empty() ? joinNames(values) : allowedText;
}

std::string ConfigField::helpText() const {
    std::string out = help;
    const size_t at = out.find("{max}");
    if (at != std::string::npos) {
        out.replace(at, 5, std::to_string(maximum()));
    }
    return out;
}

ConfigField integerField(std::string name, int RunConfig::*member) {
    return integerOf(std::move(name), member);
}
ConfigField integerField(std::string name, int64_t RunConfig::*member) {
    return integerOf(std::move(name), member);
}
ConfigField integerField(std::string name, uint64_t RunConfig::*member) {
    return integerOf(std::move(name), member);
}

ConfigField switchField(std::string name, bool RunConfig::*member) {
    ConfigField field = named(std::move(name), FieldType::Switch);
    field.text = [member](const RunConfig& c) { return std::string(c.*member ? "on" : "off"); };
    field.setText = [member, fieldName = field.name](RunConfig& c, const std::string& text) {
        c.*member = onOffFrom(fieldName, text);
    };
    field.get = [member](const RunConfig& c) { return ConfigValue(c.*member); };
    field.set = [member](RunConfig& c, const ConfigValue& value) {
        c.*member = std::get<bool>(value);
    };
    return field;
}

std::string numberText(double value) {
    std::array<char, 32> buffer{};
    const auto written = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    return std::string(buffer.data(), written.ptr);
}

ConfigField numberField(std::string name, double RunConfig::*member) {
    ConfigField field = named(std::move(name), FieldType::Number);
    field.text = [member](const RunConfig& c) { return numberText(c.*member); };
    field.setText = [member, fieldName = field.name](RunConfig& c, const std::string& text) {
        double value = 0;
        const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || parsed.ec != std::errc() || parsed.ptr != text.data() + text.size() ||
            !std::isfinite(value)) {
            rejectFieldText(fieldName, "'" + text + "' is not a number (for example 25 or 0.5)");
        }
        c.*member = value;
    };
    field.get = [member](const RunConfig& c) { return ConfigValue(c.*member); };
    field.set = [member](RunConfig& c, const ConfigValue& value) {
        c.*member = std::get<double>(value);
    };
    return field;
}

ConfigField textField(std::string name, std::string RunConfig::*member, FieldType type) {
    ConfigField field = named(std::move(name), type);
    field.text = [member](const RunConfig& c) { return c.*member; };
    field.setText = [member](RunConfig& c, const std::string& text) { c.*member = text; };
    field.get = [member](const RunConfig& c) { return ConfigValue(c.*member); };
    field.set = [member](RunConfig& c, const ConfigValue& value) {
        c.*member = std::get<std::string>(value);
    };
    return field;
}

ConfigField textChoiceField(std::string name, std::string RunConfig::*member,
                            std::vector<std::string> values) {
    ConfigField field = textField(std::move(name), member, FieldType::Choice);
    field.values = std::move(values);
    field.anyText = true;
    return field;
}

ConfigField registeredField(std::string name, ConfigValue initial, FieldType type) {
    const FieldType held = std::holds_alternative<bool>(initial)      ? FieldType::Switch
                           : std::holds_alternative<int64_t>(initial) ? FieldType::Integer
                                                                      : type;
    ConfigField field = named(std::move(name), held);
    field.get = [fieldName = field.name, initial](const RunConfig& c) {
        const auto found = c.registered.find(fieldName);
        return found == c.registered.end() ? initial : found->second;
    };
    field.set = [fieldName = field.name](RunConfig& c, const ConfigValue& value) {
        c.registered[fieldName] = value;
    };
    field.text = [get = field.get](const RunConfig& c) {
        const ConfigValue value = get(c);
        if (const auto* on = std::get_if<bool>(&value)) {
            return std::string(*on ? "on" : "off");
        }
        if (const auto* text = std::get_if<std::string>(&value)) {
            return *text;
        }
        return std::to_string(asInteger(value));
    };
    field.setText = [fieldName = field.name, held](RunConfig& c, const std::string& text) {
        const ConfigField& self = *findConfigField(fieldName);
        if (held == FieldType::Switch) {
            self.set(c, onOffFrom(fieldName, text));
        } else if (held == FieldType::Integer) {
            self.set(c, integerFrom<int64_t>(fieldName, text));
        } else if (held == FieldType::Choice && !self.anyText &&
                   std::find(self.values.begin(), self.values.end(), text) == self.values.end()) {
            rejectFieldText(fieldName, "'" + text + "' is not allowed; allowed: " + self.allowed());
        } else {
            self.set(c, text);
        }
    };
    return field;
}

const std::vector<ConfigField>& configFields() {
    return table();
}

const ConfigField* findConfigField(const std::string& name) {
    for (const auto& field : table()) {
        if (field.name == name) {
            return &field;
        }
    }
    return nullptr;
}

void registerConfigField(ConfigField field) {
    for (const auto& known : table()) {
        if (known.name == field.name || (!field.key.empty() && known.key == field.key)) {
            throw std::invalid_argument("config field '" + field.name +
                                        "': its name or run-file key is taken by '" + known.name +
                                        "'");
        }
    }
    table().push_back(std::move(field));
}

std::vector<std::string> configFieldNames() {
    std::vector<std::string> names;
    for (const auto& field : table()) {
        if (field.sweep) {
            names.push_back(field.name);
        }
    }
    return names;
}

void setConfigField(RunConfig& config, const std::string& field, const std::string& text) {
    const ConfigField* found = findConfigField(field);
    if (!found) {
        rejectFieldText(field, "not a config field; allowed: " + joinNames(configFieldNames()));
    }
    found->setText(config, text);
}

std::vector<NamedCode> codeNamedBy(const RunConfig& config) {
    std::vector<NamedCode> named;
    for (const ConfigField& field : configFields()) {
        if (field.code && field.get(config) != field.defaultValue()) {
            named.push_back(
                {field.name, field.key.empty() ? field.name : field.key, field.text(config)});
        }
    }
    return named;
}

std::string describeNamedCode(const std::vector<NamedCode>& code) {
    std::string text;
    for (const NamedCode& item : code) {
        text += (text.empty() ? "" : ", ") + item.key + " '" + printableText(item.value) + "'";
        const ConfigField* field = findConfigField(item.field);
        std::error_code error;
        if (field && field->type == FieldType::Path) {
            std::string absolute =
                std::filesystem::absolute(item.value, error).lexically_normal().string();
            if (absolute.size() > 1 && absolute.back() == '/') {
                absolute.pop_back();
            }
            if (!error && absolute != item.value) {
                text += " (" + printableText(absolute) + ")";
            }
        }
    }
    return text;
}

std::string configFieldText(const RunConfig& config, const std::string& field) {
    const ConfigField* found = findConfigField(field);
    if (!found) {
        rejectFieldText(field, "not a config field; allowed: " + joinNames(configFieldNames()));
    }
    return found->text(config);
}

void checkDeclaredFields(const RunConfig& config,
                         const std::function<void(const std::string&, const std::string&)>& fail) {
    for (const auto& field : table()) {
        std::optional<std::string> problem;
        if (field.check) {
            problem = field.check(config);
        } else if (field.type == FieldType::Integer && !field.rangeElsewhere) {
            problem = rangeProblem(field, config);
        }
        if (problem) {
            fail(field.name, *problem);
            continue;
        }
        if (field.takenBy(config.engine) || field.get(config) == field.defaultValue()) {
            continue;
        }
        const auto message =
            field.engineMessage ? field.engineMessage(config) : engineProblem(field, config.engine);
        if (message) {
            fail(field.name, *message);
        }
    }
}

}  // namespace stepscope
