#include "cluster/slurm_sweep.h"

#include "config/config_field.h"
#include "engines/environment.h"
#include "results/report.h"
#include "results/run_file.h"
#include "util/strings.h"

namespace stepscope {

namespace {

// What a sweep task runs: its config in, its run file out; nothing else.
std::vector<std::string> sweepTaskArguments(const SlurmTask& task, SlurmRunner runner,
                                            bool trustCode) {
    std::vector<std::string> arguments = {"--config", task.inputFile, "--out", task.resultFile};
    if (trustCode) {
        arguments.push_back("--trust-code");
    }
    if (runner != SlurmRunner::Recorder) {
        arguments.insert(arguments.begin(), "run");
    }
    return arguments;
}

}  // namespace

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
        // The tasks run in the array's folder: a relative path would lead there.
        array.environment.push_back("STEPSCOPE_PYTHON=" + absoluteProgram(spec.base.python));
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
        array.nodes = std::max(array.nodes, point.nodes);
        SlurmTask task;
        task.name = file.substr(0, file.size() - std::string(".json").size());
        task.inputFile = "inputs/" + file;
        task.inputText = runConfigToJson(point);
        task.resultFile = "points/" + file;
        // The user's own flags named any code (a sweep reads only flags):
        // their say-so, carried to the task that reads the config back.
        task.arguments = sweepTaskArguments(task, runner, !codeNamedBy(point).empty());
        array.tasks.push_back(std::move(task));
    }
    if (!errors.empty()) {
        throw InvalidConfigError(std::move(errors));
    }
    return array;
}

SlurmArray replannedSlurmSweep(const SlurmArray& held, const std::string& directory) {
    SlurmArray array = held;
    for (size_t i = 0; i < array.environment.size(); ++i) {
        const std::string& variable = array.environment[i];
        checkInterpreterOutside("environment[" + std::to_string(i) + "] (STEPSCOPE_PYTHON)",
                                variable.substr(variable.find('=') + 1), directory);
    }
    for (size_t i = 0; i < array.tasks.size(); ++i) {
        SlurmTask& task = array.tasks[i];
        const std::string where = "tasks[" + std::to_string(i) + "]";
        if (task.inputFile.empty()) {
            throw SlurmError(where +
                             ".input: empty; every sweep point reads its config from "
                             "inputs/NAME.json");
        }
        RunConfig config;
        try {
            config = runConfigFromJson(task.inputText);
        } catch (const std::exception& error) {
            throw SlurmError(where + ".input_text: not a run config: " + error.what());
        }
        // The folder's files are no one's say-so (issue 45, item 4).
        if (const auto code = codeNamedBy(config); !code.empty()) {
            throw SlurmError(where + ".input_text: names code to run (" + describeNamedCode(code) +
                             "); --resume runs no code a folder's files name. Write the sweep "
                             "again, with your own flags, into a new folder.");
        }
        const std::vector<std::string> planned = sweepTaskArguments(task, array.runner, false);
        if (task.arguments != planned) {
            throw SlurmError(where + ".arguments: '" + argumentsText(task.arguments) +
                             "' is not what StepScope writes for this point ('" +
                             argumentsText(planned) +
                             "'); the folder was changed after it was written. Write the "
                             "sweep again into a new folder.");
        }
        task.arguments = planned;
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
