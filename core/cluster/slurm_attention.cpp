#include "cluster/slurm_attention.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <utility>

#include "results/attention_file.h"
#include "results/run_file.h"
#include "util/strings.h"

namespace stepscope {

namespace {

// "naive_d64_seq1024_fp32": the point's result file and log say it.
std::string pointName(const AttentionPoint& point) {
    return point.backend + "_d" + std::to_string(point.d) + "_seq" + std::to_string(point.seq) +
           "_" + toString(point.precision);
}

// The `attention` command line that measures `point` of `spec` alone.
std::vector<std::string> pointArguments(const AttentionBenchSpec& spec, const AttentionPoint& point,
                                        const std::string& resultFile) {
    // The user's attention only where it is the point's backend: with it, the
    // grid of any other point would hold the user's too.
    const bool users = !spec.pyAttention.empty() && point.backend == userAttentionName(spec);
    const std::pair<const char*, std::string> options[] = {
        {"--backends", point.backend},
        {"--engine", spec.engine == Engine::LibTorch ? "" : toString(spec.engine)},
        {"--py-attention", users ? spec.pyAttention : ""},
        {"--py-path", users ? spec.pyPath : ""},
        {"--py-attention-name", users ? spec.pyAttentionName : ""},
        {"--d", std::to_string(point.d)},
        {"--seq", std::to_string(point.seq)},
        {"--precision", toString(point.precision)},
        {"--batch", std::to_string(spec.batch)},
        {"--heads", std::to_string(spec.heads)},
        {"--device", toString(spec.device)},
        {"--warmup", std::to_string(spec.warmup)},
        {"--repeats", std::to_string(spec.repeats)},
        {"--tile-q", std::to_string(spec.options.queryTile)},
        {"--tile-k", std::to_string(spec.options.keyTile)},
        {"--python", spec.python},
        {"--out-file", resultFile}};
    std::vector<std::string> arguments = {"attention", spec.causal ? "--causal" : "--no-causal"};
    for (const auto& [flag, value] : options) {
        if (!value.empty()) {  // no --python: the node's default; no --engine: libtorch
            arguments.insert(arguments.end(), {flag, value});
        }
    }
    return arguments;
}

// The flags pointArguments writes with a value; "--causal" and
// "--no-causal" stand alone after "attention".
constexpr const char* kValueFlags[] = {
    "--backends", "--engine",  "--py-attention", "--py-path", "--py-attention-name",
    "--d",        "--seq",     "--precision",    "--batch",   "--heads",
    "--device",   "--warmup",  "--repeats",      "--tile-q",  "--tile-k",
    "--python",   "--out-file"};

// The flags of a task's stored arguments and their values, each flag once.
std::map<std::string, std::string> taskFlags(const SlurmTask& task, const std::string& where,
                                             bool& causal) {
    const auto& arguments = task.arguments;
    if (arguments.size() < 2 || arguments[0] != "attention" ||
        (arguments[1] != "--causal" && arguments[1] != "--no-causal")) {
        throw SlurmError(where + ": '" + argumentsText(arguments) +
                         "' does not start 'attention --causal' or 'attention --no-causal', as "
                         "StepScope writes an attention point");
    }
    causal = arguments[1] == "--causal";
    return storedFlagValues(arguments, 2, {std::begin(kValueFlags), std::end(kValueFlags)}, where,
                            "an attention point");
}

// The one-point grid a task's stored arguments describe, read as data.
AttentionBenchSpec taskSpec(const SlurmTask& task, const std::string& where) {
    bool causal = true;
    const auto flags = taskFlags(task, where, causal);
    auto text = [&](const char* flag) {
        const auto found = flags.find(flag);
        return found == flags.end() ? std::string() : found->second;
    };
    auto number = [&](const char* flag) {
        return storedWholeNumber(where + " " + flag, text(flag));
    };
    AttentionBenchSpec spec;
    spec.causal = causal;
    spec.backends = {text("--backends")};
    const auto engine = parseEngine(text("--engine").empty() ? "libtorch" : text("--engine"));
    const auto precision = parsePrecision(text("--precision"));
    const auto device = parseDeviceKind(text("--device"));
    if (!engine || !precision || !device) {
        throw SlurmError(where + ": " +
                         (!engine      ? "--engine '" + printableText(text("--engine"))
                          : !precision ? "--precision '" + printableText(text("--precision"))
                                       : "--device '" + printableText(text("--device"))) +
                         "' is not one StepScope knows");
    }
    spec.engine = *engine;
    spec.precisions = {*precision};
    spec.device = *device;
    spec.pyAttention = text("--py-attention");
    spec.pyPath = text("--py-path");
    spec.pyAttentionName = text("--py-attention-name");
    spec.headDims = {number("--d")};
    spec.seqLens = {number("--seq")};
    spec.batch = number("--batch");
    spec.heads = number("--heads");
    const int64_t warmup = number("--warmup");
    const int64_t repeats = number("--repeats");
    if (warmup < 0 || warmup > std::numeric_limits<int>::max() || repeats < 0 ||
        repeats > std::numeric_limits<int>::max()) {
        throw SlurmError(where + ": --warmup " + std::to_string(warmup) + " or --repeats " +
                         std::to_string(repeats) + " is out of range");
    }
    spec.warmup = int(warmup);
    spec.repeats = int(repeats);
    spec.options.queryTile = number("--tile-q");
    spec.options.keyTile = number("--tile-k");
    spec.python = text("--python");
    return spec;
}

}  // namespace

SlurmArray replannedSlurmAttention(const SlurmArray& held, const std::string& directory) {
    SlurmArray array = held;
    for (size_t i = 0; i < array.tasks.size(); ++i) {
        SlurmTask& task = array.tasks[i];
        const std::string where = "tasks[" + std::to_string(i) + "].arguments";
        AttentionBenchSpec spec = taskSpec(task, where);
        checkInterpreterOutside(where + " --python", spec.python, directory);
        checkCodeFolderOutside(where + " --py-path", spec.pyPath, directory);
        try {
            AttentionBenchSpec here = spec;
            here.device = DeviceKind::Cpu;  // the nodes have the GPUs
            validateAttentionSpec(here);
        } catch (const std::exception& error) {
            throw SlurmError(where + ": " + error.what());
        }
        const std::vector<AttentionPoint> points = attentionGridPoints(spec);
        const std::vector<std::string> planned =
            points.size() == 1 ? pointArguments(spec, points.front(), task.resultFile)
                               : std::vector<std::string>{};
        if (points.size() != 1 || pointName(points.front()) != task.name ||
            planned != task.arguments) {
            throw SlurmError(
                where + ": '" + argumentsText(task.arguments) +
                "' is not what StepScope writes for point " + task.name +
                (planned.empty() ? std::string() : " ('" + argumentsText(planned) + "')") +
                "; the folder was changed after it was written. Write the grid "
                "again into a new folder.");
        }
        task.arguments = planned;
    }
    return array;
}

SlurmArray attentionSlurmArray(const AttentionBenchSpec& spec) {
    // The points run on the cluster's nodes, which have the GPUs that --gres
    // asks for; a login node often has none.
    AttentionBenchSpec here = spec;
    here.device = DeviceKind::Cpu;
    validateAttentionSpec(here);
    // The tasks run in the array's folder: a relative path would lead there.
    AttentionBenchSpec planned = spec;
    if (!spec.pyPath.empty()) {
        planned.pyPath = std::filesystem::absolute(spec.pyPath).lexically_normal().string();
    }
    planned.python = absoluteProgram(spec.python);
    SlurmArray array;
    array.kind = kAttentionArrayKind;
    array.jobName = "stepscope-attention";
    for (const AttentionPoint& point : attentionGridPoints(spec)) {
        SlurmTask task;
        task.name = pointName(point);
        task.resultFile = "points/" + task.name + ".json";
        task.arguments = pointArguments(planned, point, task.resultFile);
        array.tasks.push_back(std::move(task));
    }
    return array;
}

AttentionCollection readSlurmAttention(const std::string& directory, const std::string& flag) {
    const SlurmArray array = readSlurmArrayOfKind(directory, kAttentionArrayKind, flag);
    AttentionCollection collection;
    readEachResult(
        array, directory, collection,
        [&](int index, const SlurmTask& task, const std::string& file) {
            const AttentionFile result = readAttentionFile(file);
            if (result.points.size() != 1) {
                throw RunFileError("'" + file + "' holds " + std::to_string(result.points.size()) +
                                   " points, not this one point");
            }
            const AttentionPoint& point = result.points.front();
            if (point.status == "failed") {
                collection.addFailed(directory, index, task, "failed: " + point.message);
            }
            if (collection.points.empty()) {
                // The collected file stands for every task: no one task's Slurm ids.
                EnvironmentInfo& environment = collection.environment = result.environment;
                environment.slurmJobId = environment.slurmArrayJobId = "";
                environment.slurmArrayTaskId = environment.slurmNode = "";
            }
            collection.points.push_back(point);
        });
    return collection;
}

AttentionCollection collectSlurmAttention(const std::string& directory) {
    AttentionCollection collection = readSlurmAttention(directory, "--collect");
    writeCollectedTables(
        directory,
        {{"attention.json", attentionResultToJson(collection.points, collection.environment)},
         {"attention.csv", formatAttentionCsv(collection.points)}});
    return collection;
}

}  // namespace stepscope
