#include "bench/slurm_sweep.h"

#include <algorithm>
#include <filesystem>

#include "bench/environment.h"
#include "results/report.h"
#include "results/run_file.h"
#include "util/atomic_file.h"

namespace stepscope {

namespace {

namespace fs = std::filesystem;

constexpr const char* kSweepKind = "sweep";

}  // namespace

SlurmArray sweepSlurmArray(const SweepSpec& spec) {
    const std::vector<RunConfig> points = expandSweep(spec);
    // The points run on the cluster's nodes, which have the GPUs that
    // --gres asks for; a login node often has none.
    ValidationContext context = validationContext();
    context.cudaAvailable = true;
    SlurmArray array;
    array.kind = kSweepKind;
    array.jobName = "stepscope-sweep";
    array.details = {{"varying_fields", varyingAxisFields(spec.axes)}};
    if (!spec.base.python.empty()) {  // not part of a run file's config
        array.environment.push_back("STEPSCOPE_PYTHON=" + spec.base.python);
    }
    std::vector<ConfigError> errors;
    for (const auto& point : points) {
        const std::string file = sweepPointFileName(point, spec.axes);
        for (auto error : validate(point, context)) {
            error.message += " (sweep point " + file + ")";
            errors.push_back(std::move(error));
        }
        SlurmTask task;
        task.name = file.substr(0, file.size() - std::string(".json").size());
        task.inputFile = "inputs/" + file;
        task.inputText = runConfigToJson(point);
        task.resultFile = "points/" + file;
        task.arguments = {"run", "--config", task.inputFile, "--out", task.resultFile};
        array.tasks.push_back(std::move(task));
    }
    if (!errors.empty()) {
        throw InvalidConfigError(std::move(errors));
    }
    return array;
}

SweepCollection readSlurmSweep(const std::string& directory, const std::string& flag) {
    const auto array = readSlurmArray(directory);
    if (!array) {
        throw SlurmError(flag + ": '" + directory + "' holds no " + kSlurmArrayFile +
                         "; make it with sweep --slurm DIR");
    }
    if (array->kind != kSweepKind) {
        throw SlurmError(flag + ": '" + directory + "' holds a " + array->kind +
                         " array, not a sweep");
    }
    SweepCollection collection;
    collection.total = array->tasks.size();
    collection.varyingFields = array->details.value("varying_fields", std::vector<std::string>{});
    for (size_t i = 0; i < array->tasks.size(); ++i) {
        const SlurmTask& task = array->tasks[i];
        const std::string file = (fs::path(directory) / task.resultFile).string();
        UnfinishedPoint point{int(i), task.name, "", ""};
        std::error_code error;
        if (!fs::exists(file, error)) {
            point.why = "no run file yet";
            point.logTail = slurmLogTail(directory, point.index);
            collection.missing.push_back(std::move(point));
            continue;
        }
        try {
            RunResult result = readRunFile(file);
            if (result.status != RunStatus::Ok) {
                point.why = toString(result.status) + ": " + result.message;
                point.logTail = slurmLogTail(directory, point.index);
                collection.failed.push_back(std::move(point));
            }
            collection.results.push_back(std::move(result));
            collection.files.push_back(file);
        } catch (const RunFileError& unreadable) {
            point.why = std::string("unreadable: ") + unreadable.what();
            point.logTail = slurmLogTail(directory, point.index);
            collection.failed.push_back(std::move(point));
        }
    }
    return collection;
}

SweepCollection collectSlurmSweep(const std::string& directory) {
    SweepCollection collection = readSlurmSweep(directory, "--collect");
    try {
        writeFileAtomically((fs::path(directory) / "sweep.csv").string(),
                            formatSweepCsv(collection.results, collection.files));
        writeFileAtomically((fs::path(directory) / "sweep.md").string(),
                            formatSweepMarkdown(collection.results, collection.varyingFields));
    } catch (const std::exception& failure) {
        throw SlurmError("--collect: cannot write the tables into '" + directory +
                         "': " + failure.what());
    }
    return collection;
}

std::vector<int> unfinishedPointIndices(const SweepCollection& collection) {
    std::vector<int> indices;
    for (const auto* list : {&collection.missing, &collection.failed}) {
        for (const auto& point : *list) {
            indices.push_back(point.index);
        }
    }
    std::sort(indices.begin(), indices.end());
    return indices;
}

}  // namespace stepscope
