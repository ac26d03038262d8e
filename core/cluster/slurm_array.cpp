#include "cluster/slurm_array.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "util/atomic_file.h"
#include "util/strings.h"

namespace stepscope {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr int kArrayFileVersion = 1;

constexpr std::pair<SlurmRunner, const char*> kRunners[] = {{SlurmRunner::Cli, "cli"},
                                                            {SlurmRunner::Recorder, "recorder"}};

// The program a runner's tasks run, as the script and its messages name it.
const char* runnerProgram(SlurmRunner runner) {
    return runner == SlurmRunner::Recorder ? "stepscope-record" : "stepscope-cli";
}

// The logs' path as an #SBATCH value, read by sbatch itself (not bash): in
// double quotes, with \ and " escaped by a backslash, so that the directory
// may hold spaces and #; its % doubled, so that it is not read as one of
// Slurm's %x, %A… patterns as the file name's are.
std::string sbatchLogPath(const std::string& directory) {
    std::string quoted = "\"";
    for (char c : (fs::path(directory) / "logs/").string()) {
        quoted += c == '\\' || c == '"' ? std::string("\\") + c
                  : c == '%'            ? std::string("%%")
                                        : std::string(1, c);
    }
    return quoted + "%x-%A_%a.out\"";
}

void refuseNewline(const std::string& flag, const std::string& value) {
    if (value.find_first_of("\r\n") != std::string::npos) {
        throw SlurmError(flag + ": '" + value + "' holds a line break; one line is allowed");
    }
}

// The nodes field's bound: RunConfig::nodes's.
constexpr int64_t kMaxArrayNodes = 1024;

// What StepScope's own arrays export; a folder asking for any other variable
// (LD_PRELOAD, PATH…) was not written by StepScope.
constexpr const char* kExportedVariables[] = {"STEPSCOPE_PYTHON"};

void checkScriptName(const std::string& field, const std::string& value) {
    if (!isPlainName(value)) {
        throw SlurmError(field + ": '" + printableText(value) +
                         "' may hold only letters, digits, '.', '_' and '-' (it is written "
                         "into the job script)");
    }
}

// `path` is `folder`/NAME: relative, one level down, no "..", so that what
// the array reads or writes stays inside its directory.
void checkPathInFolder(const std::string& field, const std::string& path,
                       const std::string& folder) {
    const std::string prefix = folder + "/";
    const std::string name = path.rfind(prefix, 0) == 0 ? path.substr(prefix.size()) : "";
    if (!isPlainName(name) || name == "." || name == "..") {
        throw SlurmError(field + ": '" + printableText(path) + "' must be a file in the array's " +
                         folder + "/ folder (" + folder +
                         "/NAME, NAME of letters, digits, '.', '_' and '-')");
    }
}

// Whether `path` (absolute) is `directory` or lies inside it, links followed
// where they exist: a link out of the folder leads out, one into it in.
bool insideDirectory(const fs::path& path, const std::string& directory) {
    std::error_code error;
    const fs::path root = fs::weakly_canonical(fs::absolute(directory), error);
    const fs::path target = fs::weakly_canonical(path, error);
    const auto [rootEnd, targetAt] =
        std::mismatch(root.begin(), root.end(), target.begin(), target.end());
    return rootEnd == root.end() || (std::next(rootEnd) == root.end() && rootEnd->empty());
}

}  // namespace

void checkInterpreterOutside(const std::string& field, const std::string& program,
                             const std::string& directory) {
    if (program.empty() || program.find('/') == std::string::npos) {
        return;  // the node's default, or a name its PATH finds
    }
    if (program.front() != '/') {
        throw SlurmError(field + ": '" + printableText(program) +
                         "' is a path relative to the array's folder, where the task runs it; "
                         "an interpreter must be a name on PATH (python3) or an absolute path "
                         "outside the folder, never a program the folder brings");
    }
    if (insideDirectory(program, directory)) {
        throw SlurmError(field + ": '" + printableText(program) +
                         "' lies inside the array's folder; an interpreter must be a name on "
                         "PATH (python3) or an absolute path outside the folder, never a "
                         "program the folder brings");
    }
}

std::string absoluteProgram(const std::string& program) {
    if (program.find('/') == std::string::npos) {
        return program;
    }
    return fs::absolute(program).lexically_normal().string();
}

void checkCodeFolderOutside(const std::string& field, const std::string& folder,
                            const std::string& directory) {
    if (folder.empty()) {
        return;
    }
    if (folder.front() != '/' || insideDirectory(folder, directory)) {
        throw SlurmError(field + ": '" + printableText(folder) + "' is " +
                         (folder.front() != '/' ? "relative to" : "inside") +
                         " the array's folder; code is imported only from an absolute folder "
                         "outside it, never from one the folder brings");
    }
}

std::string argumentsText(const std::vector<std::string>& arguments) {
    std::string text;
    for (const auto& argument : arguments) {
        if (!text.empty()) {
            text.push_back(' ');
        }
        text.append(printableText(argument));
    }
    return text;
}

std::map<std::string, std::string> storedFlagValues(const std::vector<std::string>& arguments,
                                                    size_t first,
                                                    const std::vector<std::string>& known,
                                                    const std::string& where,
                                                    const std::string& what) {
    std::map<std::string, std::string> flags;
    for (size_t i = first; i < arguments.size(); i += 2) {
        const std::string& flag = arguments[i];
        const bool isKnown = std::find(known.begin(), known.end(), flag) != known.end();
        if (!isKnown || i + 1 == arguments.size()) {
            throw SlurmError(
                where + "[" + std::to_string(i) + "]: '" + printableText(flag) +
                (isKnown ? "' has no value" : "' is not a flag StepScope writes for " + what));
        }
        if (!flags.emplace(flag, arguments[i + 1]).second) {
            throw SlurmError(where + "[" + std::to_string(i) + "]: '" + flag +
                             "' is given twice; StepScope writes each flag once");
        }
    }
    return flags;
}

int64_t storedWholeNumber(const std::string& field, const std::string& text) {
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
        throw SlurmError(field + ": '" + printableText(text) + "' is not a whole number");
    }
    return value;
}

void checkArrayForScript(const SlurmArray& array) {
    checkScriptName("kind", array.kind);
    checkScriptName("job_name", array.jobName);
    for (size_t i = 0; i < array.environment.size(); ++i) {
        const std::string& variable = array.environment[i];
        const std::string name = variable.substr(0, variable.find('='));
        const bool known = std::any_of(std::begin(kExportedVariables), std::end(kExportedVariables),
                                       [&](const char* exported) { return name == exported; });
        if (!known || name.size() == variable.size()) {
            throw SlurmError(
                "environment[" + std::to_string(i) + "]: '" + printableText(variable) +
                "' must be NAME=value with NAME one of " +
                joinNames({std::begin(kExportedVariables), std::end(kExportedVariables)}));
        }
    }
    for (size_t i = 0; i < array.tasks.size(); ++i) {
        const SlurmTask& task = array.tasks[i];
        const std::string where = "tasks[" + std::to_string(i) + "]";
        checkScriptName(where + ".name", task.name);
        checkPathInFolder(where + ".result", task.resultFile, "points");
        if (!task.inputFile.empty()) {
            checkPathInFolder(where + ".input", task.inputFile, "inputs");
        }
    }
}

namespace {

json taskJson(const SlurmTask& task) {
    return {{"name", task.name},
            {"result", task.resultFile},
            {"arguments", task.arguments},
            {"input", task.inputFile},
            {"input_text", task.inputText}};
}

json arrayJson(const SlurmArray& array) {
    json tasks = json::array();
    for (const auto& task : array.tasks) {
        tasks.push_back(taskJson(task));
    }
    return {{"format", "stepscope-slurm-array"},
            {"version", kArrayFileVersion},
            {"kind", array.kind},
            {"job_name", array.jobName},
            {"details", array.details},
            {"environment", array.environment},
            {"runner", toString(array.runner)},
            {"nodes", array.nodes},
            {"tasks", tasks}};
}

// `object[key]`, which must be there and of `type`; `where` names it in the
// message ("tasks[2].input").
const json& member(const json& object, const std::string& key, json::value_t type,
                   const std::string& where) {
    const auto found = object.find(key);
    if (found == object.end()) {
        throw SlurmError(where + " is missing");
    }
    const bool numberWanted = type == json::value_t::number_integer;
    if (numberWanted ? !found->is_number_integer() : found->type() != type) {
        throw SlurmError(where + " must be " +
                         (type == json::value_t::string   ? std::string("a string")
                          : type == json::value_t::array  ? std::string("a list")
                          : type == json::value_t::object ? std::string("an object")
                                                          : std::string("an integer")) +
                         ", not " + (found->is_null() ? "null" : found->type_name()));
    }
    return *found;
}

std::string textMember(const json& object, const std::string& key, const std::string& where) {
    return member(object, key, json::value_t::string, where).get<std::string>();
}

std::vector<std::string> textList(const json& object, const std::string& key,
                                  const std::string& where) {
    std::vector<std::string> texts;
    const json& list = member(object, key, json::value_t::array, where);
    for (size_t i = 0; i < list.size(); ++i) {
        if (!list[i].is_string()) {
            throw SlurmError(where + "[" + std::to_string(i) + "] must be a string, not " +
                             list[i].type_name());
        }
        texts.push_back(list[i].get<std::string>());
    }
    return texts;
}

SlurmTask taskFromJson(const json& task, const std::string& where) {
    if (!task.is_object()) {
        throw SlurmError(where + " must be an object, not " + std::string(task.type_name()));
    }
    return {textMember(task, "name", where + ".name"),
            textMember(task, "result", where + ".result"),
            textList(task, "arguments", where + ".arguments"),
            textMember(task, "input", where + ".input"),
            textMember(task, "input_text", where + ".input_text")};
}

SlurmArray arrayFromJson(const json& document) {
    SlurmArray array;
    array.kind = textMember(document, "kind", "kind");
    array.jobName = textMember(document, "job_name", "job_name");
    array.details = member(document, "details", json::value_t::object, "details");
    if (array.details.contains("varying_fields")) {
        textList(array.details, "varying_fields", "details.varying_fields");
    }
    array.environment = textList(document, "environment", "environment");
    const std::string runner =
        document.contains("runner") ? textMember(document, "runner", "runner") : "cli";
    if (const auto parsed = parseSlurmRunner(runner)) {
        array.runner = *parsed;
    } else {
        throw SlurmError("runner: '" + printableText(runner) +
                         "' is not known; this StepScope knows " + joinNames(slurmRunnerNames()));
    }
    if (document.contains("nodes")) {  // absent in a folder from before distributed points
        const json& nodes = member(document, "nodes", json::value_t::number_integer, "nodes");
        if (nodes.get<int64_t>() < 1 || nodes.get<int64_t>() > kMaxArrayNodes) {
            throw SlurmError("nodes: must be from 1 to " + std::to_string(kMaxArrayNodes) +
                             ", got " + nodes.dump());
        }
        array.nodes = nodes.get<int>();
    }
    const json& tasks = member(document, "tasks", json::value_t::array, "tasks");
    for (size_t i = 0; i < tasks.size(); ++i) {
        array.tasks.push_back(taskFromJson(tasks[i], "tasks[" + std::to_string(i) + "]"));
    }
    checkArrayForScript(array);
    return array;
}

// slurm-array.json's text as a document of our format and version; every
// refusal in our words, naming the field (no parser's own message).
json parseArrayFile(const std::string& text) {
    json document;
    try {
        document = json::parse(text);
    } catch (const json::parse_error& error) {
        throw SlurmError("not valid JSON (byte " + std::to_string(error.byte) + ")");
    } catch (const json::exception&) {  // 1e999: beyond a double
        throw SlurmError("a number is out of range");
    }
    if (!document.is_object()) {
        throw SlurmError(std::string("the file must hold a JSON object, not ") +
                         (document.is_null() ? "null" : document.type_name()));
    }
    const auto format = document.find("format");
    if (format == document.end() || !format->is_string() ||
        format->get<std::string>() != "stepscope-slurm-array") {
        throw SlurmError(
            "format: not a StepScope Slurm array file (expected \"stepscope-slurm-array\", got " +
            (format == document.end() ? std::string("none")
                                      : printableText(format->dump().substr(0, 60))) +
            ")");
    }
    const auto version = document.find("version");
    if (version == document.end() || !version->is_number_integer() ||
        version->get<int64_t>() != kArrayFileVersion) {
        throw SlurmError(
            "version: " +
            (version == document.end() ? std::string("missing")
                                       : printableText(version->dump().substr(0, 60))) +
            " is not supported; this StepScope reads version " + std::to_string(kArrayFileVersion));
    }
    return document;
}

// The same experiment: the same points with the same inputs, read the same way.
bool sameExperiment(const SlurmArray& a, const SlurmArray& b) {
    return a.kind == b.kind && a.details == b.details && a.runner == b.runner && a.tasks == b.tasks;
}

// "sweep", "attention grid": how messages name an array's kind.
std::string kindName(const std::string& kind) {
    return kind == "attention"    ? "attention grid"
           : kind == "collective" ? "collective benchmark"
                                  : kind;
}

std::string aKindName(const std::string& kind) {
    const std::string name = kindName(kind);
    return (name.find_first_of("aeiou") == 0 ? "an " : "a ") + name;
}

std::string differenceText(const SlurmArray& held, const SlurmArray& wanted) {
    if (held.kind != wanted.kind) {
        return "it holds " + aKindName(held.kind) + ", not " + aKindName(wanted.kind);
    }
    if (held.runner != wanted.runner) {
        return std::string("its points run with ") + runnerProgram(held.runner) + " (--runner " +
               toString(held.runner) + "), here with " + runnerProgram(wanted.runner) +
               " (--runner " + toString(wanted.runner) + ")";
    }
    if (held.tasks.size() != wanted.tasks.size()) {
        return "it holds " + std::to_string(held.tasks.size()) + " points, this " +
               kindName(wanted.kind) + " has " + std::to_string(wanted.tasks.size());
    }
    for (size_t i = 0; i < held.tasks.size(); ++i) {
        if (!(held.tasks[i] == wanted.tasks[i])) {
            return "its point " + std::to_string(i) + " is " + held.tasks[i].name +
                   (held.tasks[i].name == wanted.tasks[i].name ? " with another config"
                                                               : ", here " + wanted.tasks[i].name);
        }
    }
    return "its tables are made differently";
}

}  // namespace

std::string toString(SlurmRunner runner) {
    for (const auto& [value, name] : kRunners) {
        if (value == runner) {
            return name;
        }
    }
    return "cli";
}

std::optional<SlurmRunner> parseSlurmRunner(const std::string& text) {
    for (const auto& [value, name] : kRunners) {
        if (text == name) {
            return value;
        }
    }
    return std::nullopt;
}

const std::vector<std::string>& slurmRunnerNames() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> all;
        for (const auto& runner : kRunners) {
            all.emplace_back(runner.second);
        }
        return all;
    }();
    return names;
}

// Why an --sbatch-arg is StepScope's own.
constexpr const char* kArrayAndLogs =
    "the array is one task per point, logs go to DIR/logs; use --array-limit for the throttle";
constexpr const char* kNodes =
    "from the points' --nodes: one srun task a node, a torchrun each; --gpus-per-node for GPUs";

void checkSlurmOptions(const SlurmOptions& options) {
    const std::pair<const char*, const std::string*> texts[] = {{"--partition", &options.partition},
                                                                {"--gres", &options.gres},
                                                                {"--time", &options.time},
                                                                {"--mem", &options.mem}};
    for (const auto& [flag, value] : texts) {
        refuseNewline(flag, *value);
    }
    if (options.cpusPerTask < 0) {
        throw SlurmError("--cpus-per-task: must be at least 1 (or left out), got " +
                         std::to_string(options.cpusPerTask));
    }
    if (options.gpusPerNode < 0) {
        throw SlurmError("--gpus-per-node: must be at least 1 (or left out), got " +
                         std::to_string(options.gpusPerNode));
    }
    if (options.arrayLimit < 0) {
        throw SlurmError("--array-limit: must be at least 1 (or left out), got " +
                         std::to_string(options.arrayLimit));
    }
    for (const auto& argument : options.extraArguments) {
        refuseNewline("--sbatch-arg", argument);
        if (argument.rfind("-", 0) != 0) {
            throw SlurmError("--sbatch-arg: '" + argument +
                             "' is not an sbatch option; pass one option each, e.g. "
                             "--sbatch-arg=--account=course");
        }
        const std::pair<const char*, const char*> owned[] = {
            {"--array", kArrayAndLogs},   {"-a", kArrayAndLogs},
            {"--output", kArrayAndLogs},  {"-o", kArrayAndLogs},
            {"--error", kArrayAndLogs},   {"-e", kArrayAndLogs},
            {"--nodes", kNodes},          {"-N", kNodes},
            {"--ntasks-per-node", kNodes}};
        for (const auto& [own, why] : owned) {
            const std::string prefix(own);
            if (argument == prefix || argument.rfind(prefix + "=", 0) == 0 ||
                (prefix.size() == 2 && argument.rfind(prefix, 0) == 0)) {
                throw SlurmError("--sbatch-arg: '" + argument + "' is set by StepScope (" + why +
                                 ")");
            }
        }
    }
}

std::string slurmArrayRange(const std::vector<int>& taskIndices, int limit) {
    std::ostringstream range;
    for (size_t i = 0; i < taskIndices.size();) {
        size_t end = i;
        while (end + 1 < taskIndices.size() && taskIndices[end + 1] == taskIndices[end] + 1) {
            ++end;
        }
        range << (i == 0 ? "" : ",") << taskIndices[i];
        if (end > i) {
            range << "-" << taskIndices[end];
        }
        i = end + 1;
    }
    if (limit > 0) {
        range << "%" << limit;
    }
    return range.str();
}

std::string slurmJobScript(const SlurmArray& array, const std::string& directory,
                           const std::string& cli, const SlurmOptions& options,
                           const std::vector<int>& taskIndices) {
    checkArrayForScript(array);  // names below go in unquoted
    std::ostringstream out;
    const int last = int(array.tasks.size()) - 1;
    out << "#!/bin/bash\n"
        << "# StepScope " << kindName(array.kind) << " as a Slurm job array: task i runs point i.\n"
        << "# Submit: sbatch " << shellQuote((fs::path(directory) / kSlurmScriptFile).string())
        << "\n"
        << "# One point alone: SLURM_ARRAY_TASK_ID=i bash " << kSlurmScriptFile << "\n"
        << "# Each point runs with " << runnerProgram(array.runner)
        << (array.runner == SlurmRunner::Recorder
                ? " ($STEPSCOPE_RECORD, else stepscope-record on PATH)\n"
                : " ($STEPSCOPE_CLI, else the one named below)\n")
        << "#SBATCH --job-name=" << array.jobName << "\n"
        << "#SBATCH --array=" << slurmArrayRange(taskIndices, options.arrayLimit) << "\n"
        << "#SBATCH --output=" << sbatchLogPath(directory) << "\n";
    const std::pair<const char*, std::string> lines[] = {
        {"--partition", options.partition},
        {"--gres", options.gres},
        {"--time", options.time},
        {"--cpus-per-task", options.cpusPerTask > 0 ? std::to_string(options.cpusPerTask) : ""},
        {"--gpus-per-node", options.gpusPerNode > 0 ? std::to_string(options.gpusPerNode) : ""},
        {"--mem", options.mem},
        // A distributed point's ranks go over the nodes by srun, a task each.
        {"--nodes", array.nodes > 1 ? std::to_string(array.nodes) : ""},
        {"--ntasks-per-node", array.nodes > 1 ? "1" : ""}};
    for (const auto& [flag, value] : lines) {
        if (!value.empty()) {
            out << "#SBATCH " << flag << "=" << value << "\n";
        }
    }
    for (const auto& argument : options.extraArguments) {
        out << "#SBATCH " << argument << "\n";
    }
    out << "set -eu\n"
        << "cd " << shellQuote(directory) << "\n";
    const bool recorder = array.runner == SlurmRunner::Recorder;
    if (recorder) {
        // The recorder is wherever the node's environment with torch has it.
        out << "run=${STEPSCOPE_RECORD:-stepscope-record}\n"
            << "command -v \"$run\" >/dev/null || { echo \"stepscope: cannot run '$run': "
               "pip install StepScope's python/ package into the environment that has torch "
               "(it gives stepscope-record), or set STEPSCOPE_RECORD to the recorder's path\" "
               ">&2; exit 127; }\n";
    } else {
        out << "run=${STEPSCOPE_CLI:-" << shellQuote(cli) << "}\n";
    }
    for (const auto& variable : array.environment) {
        const size_t equals = variable.find('=');
        out << "export " << variable.substr(0, equals) << "="
            << shellQuote(equals == std::string::npos ? "" : variable.substr(equals + 1)) << "\n";
    }
    out << "case \"${SLURM_ARRAY_TASK_ID:?run as an array task, or set SLURM_ARRAY_TASK_ID to a "
           "point (0-"
        << last << ")}\" in\n";
    for (size_t i = 0; i < array.tasks.size(); ++i) {
        out << "  " << i << ")  # " << array.tasks[i].name << "\n    exec \"$run\"";
        for (const auto& argument : array.tasks[i].arguments) {
            out << " " << shellQuote(argument);
        }
        out << " ;;\n";
    }
    out << "  *) echo \"stepscope: no point $SLURM_ARRAY_TASK_ID in this " << kindName(array.kind)
        << " (0-" << last << ")\" >&2; exit 2 ;;\n"
        << "esac\n";
    return out.str();
}

std::optional<SlurmArray> readSlurmArray(const std::string& directory) {
    const fs::path file = fs::path(directory) / kSlurmArrayFile;
    std::error_code error;
    if (!fs::exists(file, error)) {
        return std::nullopt;
    }
    try {
        return arrayFromJson(parseArrayFile(readFile(file.string())));
    } catch (const std::exception& failure) {
        throw SlurmError("'" + file.string() + "' cannot be read: " + failure.what());
    }
}

SlurmArray readSlurmArrayOfKind(const std::string& directory, const std::string& kind,
                                const std::string& flag) {
    const auto array = readSlurmArray(directory);
    if (!array) {
        throw SlurmError(flag + ": '" + directory + "' holds no " + kSlurmArrayFile +
                         "; make it with " + kind + " --slurm DIR");
    }
    if (array->kind != kind) {
        throw SlurmError(flag + ": '" + directory + "' holds " + aKindName(array->kind) + ", not " +
                         aKindName(kind));
    }
    return *array;
}

void checkSlurmDirectory(const std::string& directory, const SlurmArray& array,
                         const std::string& flag) {
    const fs::path root = fs::absolute(directory);
    std::error_code error;
    if (fs::exists(root, error) && !fs::is_directory(root, error)) {
        throw SlurmError(flag + ": '" + directory + "' is a file, not a directory");
    }
    if (const auto held = readSlurmArray(root.string())) {
        if (!sameExperiment(*held, array)) {
            const std::string what = held->kind == array.kind ? kindName(held->kind) : "experiment";
            throw SlurmError(flag + ": '" + directory + "' holds a different " + what + " (" +
                             differenceText(*held, array) +
                             "); nothing was written. Choose a new directory.");
        }
    } else if (fs::exists(root, error) && !fs::is_empty(root, error)) {
        throw SlurmError(flag + ": '" + directory +
                         "' is not empty and holds no StepScope Slurm array; nothing was "
                         "written. Choose a new or empty directory.");
    }
}

void writeSlurmArray(const std::string& directory, const SlurmArray& array, const std::string& cli,
                     const SlurmOptions& options, const std::vector<int>& taskIndices,
                     const std::string& flag) {
    checkSlurmOptions(options);
    checkArrayForScript(array);
    checkSlurmDirectory(directory, array, flag);
    const fs::path root = fs::absolute(directory);
    refuseNewline(flag, root.string());  // the script names it on one line
    try {
        for (const char* sub : {"inputs", "points", "logs"}) {
            fs::create_directories(root / sub);
            if (fs::is_symlink(root / sub)) {  // it would lead the files elsewhere
                throw SlurmError(std::string(sub) + "/ is a symbolic link");
            }
        }
        for (const auto& task : array.tasks) {
            if (!task.inputFile.empty()) {
                writeFileAtomically((root / task.inputFile).string(), task.inputText);
            }
        }
        const std::string script = (root / kSlurmScriptFile).string();
        writeFileAtomically(script,
                            slurmJobScript(array, root.string(), cli, options, taskIndices));
        fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec,
                        fs::perm_options::add);
        writeFileAtomically((root / kSlurmArrayFile).string(), arrayJson(array).dump(2) + "\n");
    } catch (const std::exception& failure) {
        throw SlurmError(flag + ": cannot write '" + directory + "': " + failure.what());
    }
}

std::string slurmLogTail(const std::string& directory, int index, size_t lines) {
    const fs::path logs = fs::path(directory) / "logs";
    const std::string suffix = std::string("_").append(std::to_string(index)).append(".out");
    std::error_code error;
    fs::path newest;
    fs::file_time_type newestTime{};
    for (fs::directory_iterator it(logs, error), end; !error && it != end; it.increment(error)) {
        const std::string name = it->path().filename().string();
        if (name.size() > suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            const auto time = fs::last_write_time(it->path(), error);
            if (!error && (newest.empty() || time > newestTime)) {
                newest = it->path();
                newestTime = time;
            }
        }
    }
    if (newest.empty()) {
        return {};
    }
    std::ifstream in(newest);
    std::deque<std::string> tail;
    for (std::string line; std::getline(in, line);) {
        tail.push_back(line);
        if (tail.size() > lines) {
            tail.pop_front();
        }
    }
    std::string text = newest.filename().string() + ":";
    for (const auto& line : tail) {
        text += "\n" + line;
    }
    return text;
}

}  // namespace stepscope
