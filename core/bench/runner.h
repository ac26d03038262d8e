#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/run_config.h"
#include "results/run_result.h"

namespace stepscope {

// Where a run stands, for progress displays.
struct RunProgress {
    int step = 0;        // 0-based index of the step under way
    int totalSteps = 0;  // warm-up + measured
    bool warmup = false;
    std::string phase;  // "setup", "forward", "backward", "optimizer"
    double elapsedMs = 0;
};

// Receives what the runner emits, on the runner's thread. The desktop app
// forwards it to the UI thread; the CLI prints progress.
class RunObserver {
public:
    virtual ~RunObserver() = default;
    virtual void onProgress(const RunProgress& progress) { (void)progress; }
    virtual void onStep(const StepRecord& step) { (void)step; }
};

struct RunControl {
    RunObserver* observer = nullptr;
    const std::atomic<bool>* cancel = nullptr;  // checked between steps
    // The memory the CPU pre-flight compares with; nullopt reads MemAvailable.
    std::optional<int64_t> availableMemoryBytes;
    // The pytorch engines: how long the worker has to stop after SIGTERM
    // before it is killed (a torch.compile under way does not stop at once).
    std::chrono::milliseconds stopGracePeriod{10000};
};

// A config that fails validation; errors() names each field.
class InvalidConfigError : public std::invalid_argument {
public:
    explicit InvalidConfigError(std::vector<ConfigError> errors);
    const std::vector<ConfigError>& errors() const { return errors_; }

private:
    std::vector<ConfigError> errors_;
};

// Runs warm-up then measured steps of `config`. Throws InvalidConfigError for
// a bad config; every other outcome (ok, oom, failed, cancelled, refused) is
// the returned result's status, with the steps measured so far.
RunResult runBenchmark(const RunConfig& config, const RunControl& control = {});

// Why the CPU pre-flight refuses `config` (the predicted peak and a 10% margin
// exceed the available memory), or nullopt when it may run.
std::optional<std::string> preflightRefusal(const RunConfig& config, const RunControl& control);

// MemAvailable from /proc/meminfo, in bytes (0 when unreadable).
int64_t availableSystemMemory();

}  // namespace stepscope
