#include "cluster/slurm_sweep.h"

#include "config/config_field.h"
#include "engines/environment.h"
#include "results/report.h"
#include "results/run_file.h"

namespace stepscope {

SlurmArray sweepSlurmArray(const SweepSpec& spec, SlurmRunner runner) {
    const std::vector<RunConfig> points = expandSweep(spec);
    // The points run on the cluster's nodes, which have the GPUs that
    // --gres asks for; a login node often has none.
    ValidationContext context = validationContext();
    context.cudaAvailable = true;
    SlurmArray array;
    array.kind = kSweepArrayKind;
    array.jobName = "stepscope-sweep";
    array.details = {{"varying_fields", varyingAxisFields(spec.axes)}};
    array.runner = runner;
    const bool recorder = runner == SlurmRunner::Recorder;
    std::vector<ConfigError> errors;
    if (recorder && !spec.base.python.empty()) {
        errors.push_back({"python",
                          "the recorder runs in the Python it was installed into; --python is "
                          "allowed only with --runner cli (STEPSCOPE_RECORD on the node picks "
                          "another stepscope-record)"});
    } else if (!spec.base.python.empty()) {  // not part of a run file's config
        array.environment.push_back("STEPSCOPE_PYTHON=" + spec.base.python);
    }
    for (const auto& point : points) {
        const std::string file = sweepPointFileName(point, spec.axes);
        std::vector<ConfigError> found = validate(point, context);
        if (recorder && point.engine == Engine::LibTorch) {
            found.push_back({"engine",
                             "'libtorch' is StepScope's C++ engine, which the recorder "
                             "(--runner recorder) does not have; allowed with --runner "
                             "recorder: pytorch, pytorch-compile"});
        }
        for (auto& error : found) {
            error.message += " (sweep point " + file + ")";
            errors.push_back(std::move(error));
        }
        SlurmTask task;
        task.name = file.substr(0, file.size() - std::string(".json").size());
        task.inputFile = "inputs/" + file;
        task.inputText = runConfigToJson(point);
        task.resultFile = "points/" + file;
        task.arguments = {"--config", task.inputFile, "--out", task.resultFile};
        if (!codeNamedBy(point).empty()) {
            // The user's own flags named the code (a sweep reads only flags):
            // their say-so, carried to the task that reads the config back.
            task.arguments.push_back("--trust-code");
        }
        if (!recorder) {
            task.arguments.insert(task.arguments.begin(), "run");
        }
        array.tasks.push_back(std::move(task));
    }
    if (!errors.empty()) {
        throw InvalidConfigError(std::move(errors));
    }
    return array;
}

SweepCollection readSlurmSweep(const std::string& directory, const std::string& flag) {
    const SlurmArray array = readSlurmArrayOfKind(directory, kSweepArrayKind, flag);
    SweepCollection collection;
    collection.varyingFields = array.details.value("varying_fields", std::vector<std::string>{});
    readEachResult(array, directory, collection,
                   [&](int index, const SlurmTask& task, const std::string& file) {
                       RunResult result = readRunFile(file);
                       if (result.status != RunStatus::Ok) {
                           collection.addFailed(directory, index, task,
                                                toString(result.status) + ": " + result.message);
                       }
                       collection.results.push_back(std::move(result));
                       collection.files.push_back(file);
                   });
    return collection;
}

SweepCollection collectSlurmSweep(const std::string& directory) {
    SweepCollection collection = readSlurmSweep(directory, "--collect");
    writeCollectedTables(
        directory,
        {{"sweep.csv", formatSweepCsv(collection.results, collection.files)},
         {"sweep.md", formatSweepMarkdown(collection.results, collection.varyingFields)}});
    return collection;
}

}  // namespace stepscope
