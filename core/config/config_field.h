#pragma once

// The run configuration's fields, each declared once in one table
// (run_config_fields.cpp): its name as the CLI and the run file spell it, its
// type, range or allowed values, default (RunConfig's), help, and the engines
// that take it. Everything that speaks a config reads the table: the CLI's
// flags and --help (app/cli/config_flags.cpp), the run file's keys and their
// messages (results/run_file.cpp), validate()'s checks of one field, sweep
// axes and tables (setConfigField, configFieldText), the configuration
// panel's rows (ui/pages/config_panel.cpp) and, through the schema that
// tst_config_fields holds to this table (python/stepscope/config_fields.json),
// the Python worker's parsing and the recorder's flags. docs/developing.md shows how to add one.

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"

namespace stepscope {

// What a field holds, and so its widget in the panel.
enum class FieldType {
    Integer,  // a whole number in min..max: a spin box
    Choice,   // one of `values`: a combo box
    Switch,   // on or off: a check box; `--flag` in a run, `--flag off,on` in a sweep
    Text,     // a name such as MODULE:NAME: a line edit
    Path,     // a file or folder: a line edit
    Number,   // a number with a fraction, checked by the field's check: a spin box
    Model,    // a preset or custom dims: its own flags, rows and run-file object
};

// Where a field's flag is listed; each command adds the sections it reads
// (the CLI's FlagGroups are 1 << section). The panel shows the engine's
// section first, then the others in this order.
enum class FieldSection { Model, Workload, Steps, Trace, Engine, Data, Distributed };

constexpr unsigned engineBit(Engine engine) {
    return 1u << static_cast<unsigned>(engine);
}
inline constexpr unsigned kWorkerEngines =
    engineBit(Engine::PyTorch) | engineBit(Engine::PyTorchCompile);
inline constexpr unsigned kAllEngines = engineBit(Engine::LibTorch) | kWorkerEngines;
// Whether `engine` runs its steps in the Python worker (docs/worker-protocol.md).
bool runsInWorker(Engine engine);

// One field of RunConfig. Built with the helpers below and the chained
// setters, as the table does:
//   integerField("loss-chunk", &RunConfig::lossChunkTokens).withHelp(...)...
struct ConfigField {
    std::string name;  // --name, the sweep axis, ConfigError::field: "loss-chunk"
    std::string key;   // the run file's config key ("loss_chunk"); empty: not in the file
    FieldType type = FieldType::Text;
    FieldSection section = FieldSection::Workload;
    std::string help;       // --help and the panel's tip; "{max}" stands for the maximum now
    std::string label;      // the panel's row (a check box's text); empty: no row
    std::string valueName;  // what --help shows for the value: "MODULE:NAME"; empty: by type
    // The engines that take a value other than the default; validate()
    // refuses one elsewhere, the panel disables the row, the worker refuses it.
    unsigned engines = kAllEngines;
    bool sweep = false;              // a sweep axis and a table column (configFieldNames())
    bool requiredInFile = false;     // in every run file since version 1; else defaulted
    bool writtenWhenDefault = true;  // false: the run file has the key only when set
    bool flagChecked = true;         // the CLI checks the range or values while parsing
    // It names code that runs (a module imported, a folder imported from, an
    // interpreter): a value from a file runs only with the user's say-so
    // (codeNamedBy(), --trust-code, the app's question).
    bool code = false;
    // Integer: what validate() allows; `maxNow` where the maximum is this machine's.
    int64_t min = 0;
    int64_t max = std::numeric_limits<int64_t>::max();
    std::function<int64_t()> maxNow;
    bool rangeElsewhere = false;  // checked with the model in mind (config/limits.h)
    std::function<std::string(int64_t value)> rangeMessage;  // empty: "must be ≥ 1, got 0; …"
    // Choice: the allowed values; empty with `anyText`: another layer's (the
    // attention registry), which validate() checks. `workerValues`: those the
    // Python worker serves, where it serves fewer.
    std::vector<std::string> values;
    std::vector<std::string> workerValues;
    std::string allowedText;  // messages' list of what is allowed; empty: the values
    bool anyText = false;     // held as text: setConfigField takes any, validate() checks

    // Accessors into RunConfig: the value as the run file holds it, and as the
    // CLI spells it ("8", "sdpa", "on"). setText throws InvalidConfigError
    // naming the field for text no config can hold.
    std::function<ConfigValue(const RunConfig&)> get;
    std::function<void(RunConfig&, const ConfigValue&)> set;
    std::function<std::string(const RunConfig&)> text;
    std::function<void(RunConfig&, const std::string&)> setText;
    // validate()'s word on this field alone (a range with its own message);
    // without it, an Integer is held to min..max.
    std::function<std::optional<std::string>(const RunConfig&)> check;
    // validate()'s message for a value this engine does not take (nothing: no
    // error); without it, a message naming the engines that take it.
    std::function<std::optional<std::string>(const RunConfig&)> engineMessage;

    // Chained setters for the table.
    ConfigField& withHelp(std::string text);
    ConfigField& withLabel(std::string text);
    ConfigField& in(FieldSection where);
    ConfigField& forEngines(unsigned engineBits);
    ConfigField& sweepAxis();
    ConfigField& namesCode();
    ConfigField& required();
    ConfigField& fileKey(std::string runFileKey);  // "" for a property of this machine
    ConfigField& onlyWhenSet();
    ConfigField& checkedByConfig();  // the CLI leaves it to setConfigField and validate()
    ConfigField& range(int64_t minimum, int64_t maximum);
    ConfigField& range(int64_t minimum, std::function<int64_t()> maximum);
    ConfigField& rangeCheckedElsewhere();
    ConfigField& outOfRange(std::function<std::string(int64_t value)> message);
    ConfigField& withWorkerValues(std::vector<std::string> served);
    ConfigField& withAllowedText(std::string text);
    ConfigField& withValueName(std::string text);
    ConfigField& withCheck(std::function<std::optional<std::string>(const RunConfig&)> hook);
    ConfigField& withEngineMessage(
        std::function<std::optional<std::string>(const RunConfig&)> hook);

    ConfigValue defaultValue() const;  // of a RunConfig as it is made
    std::string defaultText() const;
    int64_t maximum() const { return maxNow ? maxNow() : max; }
    bool takenBy(Engine engine) const { return (engines & engineBit(engine)) != 0; }
    // The values as messages list them ("a, b, c" or allowedText).
    std::string allowed() const;
    // `help` with "{max}" replaced by the maximum now.
    std::string helpText() const;
};

// Fields held in a RunConfig member, for the table. The key is the name with
// '_' for '-' (fileKey() says otherwise).
ConfigField integerField(std::string name, int RunConfig::*member);
ConfigField integerField(std::string name, int64_t RunConfig::*member);
ConfigField integerField(std::string name, uint64_t RunConfig::*member);
ConfigField switchField(std::string name, bool RunConfig::*member);
// Its text is the shortest that reads back the same ("25", "0.5"); NaN and
// infinities are refused while parsing, the range is the field's check.
ConfigField numberField(std::string name, double RunConfig::*member);
std::string numberText(double value);  // "25", "0.5": the shortest that reads back the same
// A choice held as text: setConfigField takes any text, validate() checks it.
ConfigField textChoiceField(std::string name, std::string RunConfig::*member,
                            std::vector<std::string> values);
ConfigField textField(std::string name, std::string RunConfig::*member,
                      FieldType type = FieldType::Text);
// A choice held as an enum: text that names none is refused.
template <typename Enum>
ConfigField enumField(std::string name, Enum RunConfig::*member,
                      std::optional<Enum> (*parse)(const std::string&), std::string (*format)(Enum),
                      const std::vector<std::string>& values);

// A field held by name in RunConfig::registered (for registerConfigField):
// `initial` is its default and says its type's value (bool: Switch, int64_t:
// Integer, string: `type`, Text unless Choice or Path).
ConfigField registeredField(std::string name, ConfigValue initial,
                            FieldType type = FieldType::Text);

// Every field: the table's, then any registered, in the order the CLI lists
// their flags within a section and the run file reads them.
const std::vector<ConfigField>& configFields();
// The field called `name`; nullptr when there is none.
const ConfigField* findConfigField(const std::string& name);

// Declares one more field, held by name in RunConfig::registered, without a
// member of its own: a test's, or one a layer above owns. Every reader of the
// table sees it from then on. Register before any thread reads the table.
// Throws std::invalid_argument for a name or key already taken.
void registerConfigField(ConfigField field);

// One value of a field that names code (ConfigField::code), set in a config.
struct NamedCode {
    std::string field;  // "py-model"
    std::string key;    // as the run file spells it: "py_model"
    std::string value;  // "evilmod:build", "." (a folder as written)
};
// What `config` would import or run besides StepScope's own code: each field
// declared namesCode() whose value is set, in the table's order. A config a
// file gives (run --config, a run opened in the app) runs only when this is
// empty or the user has said yes to it.
std::vector<NamedCode> codeNamedBy(const RunConfig& config);
// "py_model 'evilmod:build', py_path '.' (/home/me/x)": a folder also as an
// absolute path, from this process's working folder; for messages and the
// app's question.
std::string describeNamedCode(const std::vector<NamedCode>& code);

// The fields a sweep can vary and a table shows, by name, in the table's
// order: model (a preset name; the vocabulary and maximum context stay),
// ctx, batch, mode, precision, tf32 (on, off), attention, warmup, steps,
// device, seed, threads, engine, compile-mode, activation-checkpoint (off, K,
// nested), loss (full, chunked), loss-chunk, optimizer (adamw, adamw-foreach,
// adamw-fused), cuda-graph (on, off), then any registered sweep field.
std::vector<std::string> configFieldNames();

// Sets `field` of `config` from `text` as the CLI spells it ("8", "sdpa",
// "on"). Throws InvalidConfigError naming the field and what is allowed for
// text that no config can hold; whether the value suits the rest of the
// config (a backend of this engine, a context within the maximum) is
// validate()'s to say.
void setConfigField(RunConfig& config, const std::string& field, const std::string& text);

// The field's value as setConfigField takes it ("8", "sdpa", "on").
std::string configFieldText(const RunConfig& config, const std::string& field);

// validate()'s checks of each field alone: its range (or its own check), and
// a value other than the default under an engine that does not take it.
// Each failure calls fail(field, message), at most once per field.
void checkDeclaredFields(const RunConfig& config,
                         const std::function<void(const std::string&, const std::string&)>& fail);

// The table itself, without registered fields (run_config_fields.cpp).
std::vector<ConfigField> builtInConfigFields();

[[noreturn]] void rejectFieldText(const std::string& field, const std::string& message);

template <typename Enum>
ConfigField enumField(std::string name, Enum RunConfig::*member,
                      std::optional<Enum> (*parse)(const std::string&), std::string (*format)(Enum),
                      const std::vector<std::string>& values) {
    ConfigField field;
    field.key = name;
    for (char& c : field.key) {
        c = c == '-' ? '_' : c;
    }
    field.name = std::move(name);
    field.type = FieldType::Choice;
    field.values = values;
    field.text = [member, format](const RunConfig& c) { return format(c.*member); };
    field.setText = [member, parse, fieldName = field.name, allowed = field.allowed()](
                        RunConfig& c, const std::string& text) {
        const auto value = parse(text);
        if (!value) {
            rejectFieldText(fieldName, "'" + text + "' is not allowed; allowed: " + allowed);
        }
        c.*member = *value;
    };
    field.get = [text = field.text](const RunConfig& c) { return ConfigValue(text(c)); };
    field.set = [setText = field.setText](RunConfig& c, const ConfigValue& value) {
        setText(c, std::get<std::string>(value));
    };
    return field;
}

}  // namespace stepscope
