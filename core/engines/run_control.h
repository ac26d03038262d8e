#pragma once

// core/engines: every way to run a step. What they share (here), the
// LibTorch runner, the Python worker's client, a run in a fresh process, and
// what they need: the machine's environment, build info, the step timer.
// Includes every layer up to interop/.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "results/run_result.h"

namespace stepscope {

// What every engine (the LibTorch runner, the Python worker, a fresh
// process) is handed besides the config, and what it reports while it runs.
// Its own header so that each engine includes this and not another engine.

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
    // A distributed run: each rank's step as it finishes (rank 0's also
    // comes to onStep, as the run's own).
    virtual void onRankStep(const RankStep& step) { (void)step; }
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

}  // namespace stepscope
