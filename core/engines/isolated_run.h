#pragma once

#include <functional>
#include <string>

#include "config/run_config.h"
#include "engines/run_control.h"

namespace stepscope {

// Runs `config` in a fresh process, `CLI run --config FILE --out FILE
// --events` (CLI: stepscope-cli), so that nothing a run leaves behind (the
// first step's one-off costs, warm caches, allocator state) reaches the next.
// The child's step and progress events (the worker protocol's `step` and
// `progress`, one JSON object per stdout line) go to the observer as they
// come; its run file is the result, with environment.isolated set and
// environment.processId the child's pid.
//
// Every outcome is the result's status, as runBenchmark's are: a child that
// dies or is killed before writing its run file gives `failed` (or
// `cancelled` after a cancel) whose message has the exit description
// ("killed by signal 9 (Killed)") and the end of its stderr, with the steps
// it sent; one that cannot start gives `failed` saying why. A bad config is
// refused by the child (exit 2): `failed` with its message. Cancel sends
// SIGTERM (the CLI stops between steps and writes what it measured), then
// SIGKILL after control.stopGracePeriod. The child reads the available memory
// for the CPU pre-flight itself (control.availableMemoryBytes does not cross).
//
// `onStarted` is called with the child's pid once it runs.
RunResult runInFreshProcess(const RunConfig& config, const std::string& cli,
                            const RunControl& control,
                            const std::function<void(int pid)>& onStarted = {});

// A sweep point runner (SweepControl::runPoint) that runs each point with
// runInFreshProcess through `cli`.
std::function<RunResult(const RunConfig&, const RunControl&)> freshProcessRunner(
    const std::string& cli);

// This executable's path (/proc/self/exe), and the stepscope-cli beside it.
std::string currentExecutablePath();
std::string cliBesideExecutable();

// The events `run --events` prints, one line each (without the newline).
std::string stepEventLine(const StepRecord& step);
std::string progressEventLine(const RunProgress& progress);

}  // namespace stepscope
