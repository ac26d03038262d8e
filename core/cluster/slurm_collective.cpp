#include "cluster/slurm_collective.h"

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>

#include "util/strings.h"

namespace stepscope {

namespace {

// What a task's command line holds, in this order: each flag once.
constexpr const char* kValueFlags[] = {"--op",      "--sizes",  "--ranks",  "--nodes",
                                       "--backend", "--dtype",  "--device", "--warmup",
                                       "--repeats", "--python", "--out"};

std::string commaList(const std::vector<std::string>& values) {
    std::string out;
    for (const auto& value : values) {
        out += (out.empty() ? "" : ",") + value;
    }
    return out;
}

std::vector<std::string> splitCommas(const std::string& text) {
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, ',');) {
        parts.push_back(part);
    }
    return parts;
}

std::string taskName(int ranks) {
    return "ranks" + std::to_string(ranks);
}

// One rank count's command line: sizes in bytes, every setting spelt out.
std::vector<std::string> taskArguments(const CollectiveSpec& spec, int ranks,
                                       const std::string& resultFile) {
    std::vector<std::string> sizes;
    for (const int64_t bytes : spec.sizesBytes) {
        sizes.push_back(std::to_string(bytes));
    }
    std::vector<std::string> arguments = {"collective",
                                          "--op",
                                          commaList(spec.ops),
                                          "--sizes",
                                          commaList(sizes),
                                          "--ranks",
                                          std::to_string(ranks),
                                          "--nodes",
                                          std::to_string(spec.nodes),
                                          "--backend",
                                          spec.backend,
                                          "--dtype",
                                          spec.dtype,
                                          "--device",
                                          spec.device,
                                          "--warmup",
                                          std::to_string(spec.warmup),
                                          "--repeats",
                                          std::to_string(spec.repeats)};
    if (!spec.python.empty()) {
        arguments.insert(arguments.end(), {"--python", spec.python});
    }
    arguments.insert(arguments.end(), {"--out", resultFile});
    return arguments;
}

// A stored count: a whole number that fits an int (the spec's check bounds it).
int storedCount(const std::string& field, const std::string& text) {
    const int64_t value = storedWholeNumber(field, text);
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
        throw SlurmError(field + ": " + std::to_string(value) + " is out of range");
    }
    return int(value);
}

// The one-count benchmark a task's stored arguments describe, read as data.
CollectiveSpec taskSpec(const SlurmTask& task, const std::string& where) {
    const auto& arguments = task.arguments;
    if (arguments.empty() || arguments[0] != "collective") {
        throw SlurmError(where + ": '" + argumentsText(arguments) +
                         "' does not start 'collective', as StepScope writes a rank count");
    }
    const auto flags = storedFlagValues(
        arguments, 1, {std::begin(kValueFlags), std::end(kValueFlags)}, where, "a rank count");
    auto text = [&](const char* flag) {
        const auto found = flags.find(flag);
        return found == flags.end() ? std::string() : found->second;
    };
    CollectiveSpec spec;
    spec.ops = splitCommas(text("--op"));
    for (const std::string& size : splitCommas(text("--sizes"))) {
        const auto bytes = parseByteSize(size);
        if (!bytes) {
            throw SlurmError(where + " --sizes: '" + printableText(size) + "' is not a size");
        }
        spec.sizesBytes.push_back(*bytes);
    }
    spec.ranks = {storedCount(where + " --ranks", text("--ranks"))};
    spec.nodes = storedCount(where + " --nodes", text("--nodes"));
    spec.backend = text("--backend");
    spec.dtype = text("--dtype");
    spec.device = text("--device");
    spec.warmup = storedCount(where + " --warmup", text("--warmup"));
    spec.repeats = storedCount(where + " --repeats", text("--repeats"));
    spec.python = text("--python");
    return spec;
}

void checkSpec(const CollectiveSpec& spec, const std::string& where) {
    if (const auto problem = collectiveSpecProblem(spec)) {
        throw SlurmError(where + *problem);
    }
}

}  // namespace

SlurmArray collectiveSlurmArray(const CollectiveSpec& spec) {
    checkSpec(spec, "");
    CollectiveSpec planned = spec;
    planned.python = absoluteProgram(spec.python);  // the tasks run in the array's folder
    SlurmArray array;
    array.kind = kCollectiveArrayKind;
    array.jobName = "stepscope-collective";
    array.nodes = spec.nodes;
    for (const int ranks : spec.ranks) {
        SlurmTask task;
        task.name = taskName(ranks);
        task.resultFile = "points/" + task.name + ".json";
        task.arguments = taskArguments(planned, ranks, task.resultFile);
        array.tasks.push_back(std::move(task));
    }
    return array;
}

SlurmArray replannedSlurmCollective(const SlurmArray& held, const std::string& directory) {
    SlurmArray array = held;
    for (size_t i = 0; i < array.tasks.size(); ++i) {
        SlurmTask& task = array.tasks[i];
        const std::string where = "tasks[" + std::to_string(i) + "].arguments";
        const CollectiveSpec spec = taskSpec(task, where);
        checkInterpreterOutside(where + " --python", spec.python, directory);
        checkSpec(spec, where + ": ");
        if (spec.nodes != array.nodes) {
            throw SlurmError(where + ": --nodes " + std::to_string(spec.nodes) +
                             " is not the array's nodes (" + std::to_string(array.nodes) + ")");
        }
        const std::vector<std::string> planned =
            taskArguments(spec, spec.ranks.front(), task.resultFile);
        if (taskName(spec.ranks.front()) != task.name || planned != task.arguments) {
            throw SlurmError(where + ": '" + argumentsText(task.arguments) +
                             "' is not what StepScope writes for " + task.name + " ('" +
                             argumentsText(planned) +
                             "'); the folder was changed after it was written. Write the "
                             "benchmark again into a new folder.");
        }
    }
    return array;
}

CollectiveCollection readSlurmCollective(const std::string& directory, const std::string& flag) {
    const SlurmArray array = readSlurmArrayOfKind(directory, kCollectiveArrayKind, flag);
    CollectiveCollection collection;
    readEachResult(array, directory, collection,
                   [&](int index, const SlurmTask& task, const std::string& file) {
                       const CollectiveSpec spec =
                           taskSpec(task, "tasks[" + std::to_string(index) + "]");
                       CollectiveFile result;
                       try {
                           result = readCollectiveFile(file);
                       } catch (const std::runtime_error& error) {
                           throw RunFileError(error.what());
                       }
                       const size_t expected = spec.ops.size() * spec.sizesBytes.size();
                       const auto failedRow =
                           std::find_if(result.rows.begin(), result.rows.end(),
                                        [](const auto& row) { return row.status == "failed"; });
                       if (failedRow != result.rows.end()) {
                           collection.addFailed(directory, index, task,
                                                "failed: " + failedRow->op + " " +
                                                    std::to_string(failedRow->sizeBytes) +
                                                    " bytes: " + failedRow->message);
                       } else if (result.rows.size() != expected) {
                           collection.addFailed(directory, index, task,
                                                "failed: " + std::to_string(result.rows.size()) +
                                                    " of " + std::to_string(expected) +
                                                    " rows (the ranks ended without finishing)");
                       }
                       if (collection.file.torchVersion.empty()) {
                           collection.file.torchVersion = result.torchVersion;
                           collection.file.cores = result.cores;
                       }
                       collection.file.rows.insert(collection.file.rows.end(), result.rows.begin(),
                                                   result.rows.end());
                   });
    return collection;
}

CollectiveCollection collectSlurmCollective(const std::string& directory) {
    CollectiveCollection collection = readSlurmCollective(directory, "--collect");
    writeCollectedTables(directory, {{"collective.json", collectiveFileToJson(collection.file)}});
    return collection;
}

}  // namespace stepscope
