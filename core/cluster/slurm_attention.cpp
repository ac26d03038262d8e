#include "cluster/slurm_attention.h"

#include <utility>

#include "results/attention_file.h"
#include "results/run_file.h"

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

}  // namespace

SlurmArray attentionSlurmArray(const AttentionBenchSpec& spec) {
    // The points run on the cluster's nodes, which have the GPUs that --gres
    // asks for; a login node often has none.
    AttentionBenchSpec here = spec;
    here.device = DeviceKind::Cpu;
    validateAttentionSpec(here);
    SlurmArray array;
    array.kind = kAttentionArrayKind;
    array.jobName = "stepscope-attention";
    for (const AttentionPoint& point : attentionGridPoints(spec)) {
        SlurmTask task;
        task.name = pointName(point);
        task.resultFile = "points/" + task.name + ".json";
        task.arguments = pointArguments(spec, point, task.resultFile);
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
