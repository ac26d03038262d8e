#include "engines/isolated_run.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>

#include "engines/environment.h"
#include "results/run_file.h"
#include "util/atomic_file.h"
#include "util/child_process.h"
#include "util/temporary_directory.h"

namespace stepscope {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr std::chrono::milliseconds kPollInterval{100};

json numberOrNull(const std::optional<double>& value) {
    return value ? json(*value) : json(nullptr);
}

std::optional<double> optionalNumber(const json& event, const char* key) {
    const auto found = event.find(key);
    if (found == event.end() || !found->is_number()) {
        return std::nullopt;
    }
    return found->get<double>();
}

// Sends the child's events on to the observer; keeps the steps.
void handleEvent(const std::string& line, std::vector<StepRecord>& steps, RunObserver* observer) {
    const json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!event.is_object() || !event.contains("event")) {
        return;  // not an event: nothing else is printed on stdout, but be lenient
    }
    const std::string kind = event.value("event", "");
    if (kind == "step") {
        StepRecord step;
        step.index = event.value("index", 0);
        step.warmup = event.value("warmup", false);
        step.totalMs = event.value("total_ms", 0.0);
        step.forwardMs = optionalNumber(event, "forward_ms");
        step.backwardMs = optionalNumber(event, "backward_ms");
        step.optimizerMs = optionalNumber(event, "optimizer_ms");
        step.loss = optionalNumber(event, "loss");
        steps.push_back(step);
        if (observer) {
            observer->onStep(step);
        }
    } else if (kind == "progress" && observer) {
        RunProgress progress;
        progress.step = event.value("step", 0);
        progress.totalSteps = event.value("total_steps", 0);
        progress.warmup = event.value("warmup", false);
        progress.phase = event.value("phase", "");
        progress.elapsedMs = event.value("elapsed_ms", 0.0);
        observer->onProgress(progress);
    }
}

// Writes the config into `directory` and starts the CLI on it, its events on stdout.
std::unique_ptr<ChildProcess> startCli(const RunConfig& config, const std::string& cli,
                                       const TemporaryDirectory& directory) {
    writeFileAtomically(directory.file("config.json"), runConfigToJson(config));
    std::vector<std::string> environment;
    if (!config.python.empty()) {  // not part of the run file's config
        environment.push_back("STEPSCOPE_PYTHON=" + config.python);
    }
    // The config is this process's own, already run by the user's say-so
    // (their flags, or a file they trusted): the child may run its code.
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{cli, "run", "--config", directory.file("config.json"), "--out",
                                 directory.file("run.json"), "--events", "--trust-code"},
        environment);
}

// Reads the child's events until it ends; a cancel terminates it, and kills it
// after the grace period. True when it was stopped.
bool superviseChild(ChildProcess& child, const RunControl& control,
                    std::vector<StepRecord>& steps) {
    bool stopping = false, killed = false;
    std::chrono::steady_clock::time_point killAt;
    while (true) {
        if (!stopping && control.cancel && control.cancel->load()) {
            child.terminate();  // the CLI cancels between steps and writes its run file
            stopping = true;
            killAt = std::chrono::steady_clock::now() + control.stopGracePeriod;
        }
        if (stopping && !killed && std::chrono::steady_clock::now() >= killAt) {
            child.kill();
            killed = true;
        }
        if (!child.atEnd()) {
            if (const auto line = child.readLine(kPollInterval)) {
                handleEvent(*line, steps, control.observer);
            }
            continue;
        }
        if (child.wait(kPollInterval)) {
            return stopping;
        }
    }
}

// A run whose process left no readable run file: the steps it reported, and
// how the process ended with the end of its stderr.
RunResult lostRun(const RunResult& failed, const RunConfig& config, const ChildProcess& child,
                  bool stopped, const std::vector<StepRecord>& steps,
                  const std::string& unreadable) {
    RunResult result = failed;
    result.status = stopped ? RunStatus::Cancelled : RunStatus::Failed;
    result.environment = captureEnvironment(config);
    result.steps = steps;
    result.summary = summarizeSteps(steps, config, std::nullopt);
    const std::string tail = child.stderrTail(12);
    result.message = "the run's process (pid " + std::to_string(child.pid()) + ") " +
                     (stopped ? "was stopped" : "ended") + " with " + child.exitDescription() +
                     " before writing its run file" + unreadable +
                     (tail.empty() ? "" : "; its stderr ends:\n" + tail);
    return result;
}

}  // namespace

std::string stepEventLine(const StepRecord& step) {
    return json{{"event", "step"},
                {"index", step.index},
                {"warmup", step.warmup},
                {"total_ms", step.totalMs},
                {"forward_ms", numberOrNull(step.forwardMs)},
                {"backward_ms", numberOrNull(step.backwardMs)},
                {"optimizer_ms", numberOrNull(step.optimizerMs)},
                {"loss", numberOrNull(step.loss)}}
        .dump();
}

std::string progressEventLine(const RunProgress& progress) {
    return json{{"event", "progress"},
                {"step", progress.step},
                {"total_steps", progress.totalSteps},
                {"warmup", progress.warmup},
                {"phase", progress.phase},
                {"elapsed_ms", progress.elapsedMs}}
        .dump();
}

std::function<RunResult(const RunConfig&, const RunControl&)> freshProcessRunner(
    const std::string& cli) {
    return [cli](const RunConfig& config, const RunControl& control) {
        return runInFreshProcess(config, cli, control);
    };
}

std::string currentExecutablePath() {
    std::error_code error;
    const fs::path self = fs::read_symlink("/proc/self/exe", error);
    return error ? std::string() : self.string();
}

std::string cliBesideExecutable() {
    const std::string self = currentExecutablePath();
    return self.empty() ? std::string("stepscope-cli")
                        : (fs::path(self).parent_path() / "stepscope-cli").string();
}

RunResult runInFreshProcess(const RunConfig& config, const std::string& cli,
                            const RunControl& control,
                            const std::function<void(int pid)>& onStarted) {
    RunResult failed;
    failed.config = config;
    failed.parameterCount = parameterCount(config.model);
    failed.status = RunStatus::Failed;

    std::optional<TemporaryDirectory> directory;
    std::unique_ptr<ChildProcess> child;
    try {
        directory.emplace("stepscope-run");
        child = startCli(config, cli, *directory);
    } catch (const std::exception& error) {
        failed.environment = captureEnvironment(config);
        failed.environment.isolated = true;
        failed.message =
            std::string("could not start a fresh process for the run: ") + error.what();
        return failed;
    }
    if (onStarted) {
        onStarted(child->pid());
    }

    std::vector<StepRecord> steps;
    const bool stopped = superviseChild(*child, control, steps);
    RunResult result;
    bool haveFile = false;
    std::string unreadable;
    if (fs::exists(directory->file("run.json"))) {
        try {
            result = readRunFile(directory->file("run.json"));
            haveFile = true;
        } catch (const RunFileError& error) {
            unreadable = std::string("; its run file is unreadable: ") + error.what();
        }
    }
    if (!haveFile) {
        result = lostRun(failed, config, *child, stopped, steps, unreadable);
    }
    result.config.python = config.python;
    result.environment.processId = child->pid();
    result.environment.isolated = true;
    return result;
}

}  // namespace stepscope
