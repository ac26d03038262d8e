#pragma once

// core/results: what came back. RunResult (here), the run file, reports,
// breakdowns, statistics, the attention file. Includes estimate/, profile/,
// config/ and util/; no LibTorch.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "estimate/flop_groups.h"
#include "profile/memory_trace.h"
#include "profile/step_timeline.h"
#include "profile/time_row.h"
#include "results/statistics.h"

namespace stepscope {

enum class RunStatus { Ok, Oom, Failed, Cancelled, Refused, Unavailable };
std::string toString(RunStatus status);
std::optional<RunStatus> parseRunStatus(const std::string& text);

// One step as measured. Phases a mode does not run are absent.
struct StepRecord {
    int index = 0;  // 0-based over all steps, warm-up first
    bool warmup = false;
    double totalMs = 0;
    std::optional<double> forwardMs;
    std::optional<double> backwardMs;
    std::optional<double> optimizerMs;
    std::optional<double> loss;
};

// Statistics over the measured (non-warm-up) steps.
struct RunSummary {
    Stats total;
    std::optional<Stats> forward;
    std::optional<Stats> backward;
    std::optional<Stats> optimizer;
    double tokensPerSecond = 0;
    double flopsPerStep = 0;            // model FLOPs of one step
    double achievedFlopsPerSecond = 0;  // flopsPerStep / mean step time
    std::optional<double> devicePeakFlopsPerSecond;
    std::optional<double> mfu;  // achieved / peak, where the device peak is known
};

// Where the run happened, so a file opened later says what produced it.
struct EnvironmentInfo {
    std::string stepscopeVersion;
    std::string libtorchVersion;
    std::string cudaVersion;  // LibTorch's CUDA build; empty for a CPU build
    std::string deviceName;
    std::string cpuModel;
    int cpuThreads = 0;  // intra-op threads the run used
    std::string hostname;
    std::string startedAt;  // ISO 8601, UTC
    // The pytorch engines: the worker's interpreter and its torch.
    std::string python;
    std::string pythonTorchVersion;
    // The process that ran the steps, and whether it was started for this run
    // alone (sweep --isolate, the warm-up study): then it inherited no warm
    // caches, first-step costs or allocator state. Files from before: 0, false.
    int processId = 0;
    bool isolated = false;
    // A Slurm task (sweep --slurm): its job, array job and task ids and its
    // node, from Slurm's environment. Empty elsewhere.
    std::string slurmJobId;
    std::string slurmArrayJobId;
    std::string slurmArrayTaskId;
    std::string slurmNode;
};

// Where a recording that StepScope did not run came from (RunResult::origin).
inline constexpr const char* kOriginMemorySnapshot = "pytorch-memory-snapshot";
inline constexpr const char* kOriginProfilerTrace = "pytorch-profiler-trace";
// One of the two, saved before run files said which.
inline constexpr const char* kOriginPyTorch = "pytorch";

struct RunResult {
    // Empty for a run StepScope made; else what recorded it (a PyTorch memory
    // snapshot or profiler trace shown as a run), whose config names nothing
    // that ran: there is nothing to show, run again or compare by config.
    std::string origin;
    RunConfig config;
    EnvironmentInfo environment;
    RunStatus status = RunStatus::Ok;
    std::string message;  // why a run is not ok; empty otherwise
    int64_t parameterCount = 0;
    std::vector<StepRecord> steps;
    // pytorch-compile: the first compiled call, which compiles; not a step.
    std::optional<double> compileMs;
    // --cuda-graph: the kernel nodes of the captured step, which each measured
    // step launched as one graph; absent for eager runs.
    std::optional<int64_t> cudaGraphKernels;
    RunSummary summary;
    std::vector<TimeRow> operators;        // with traceOps: measured steps, per phase
    std::vector<TimeRow> kernels;          // with traceKernels: device time, per phase
    std::vector<FlopGroupRow> flopGroups;  // traced runs: forward time per FLOP group
    StepTimeline timeline;                 // traced runs: the last measured step
    MemoryTrace memory;                    // with traceMemory: every allocation and free
};

// Recomputes the summary from the step records and the config.
RunSummary summarizeSteps(const std::vector<StepRecord>& steps, const RunConfig& config,
                          std::optional<double> devicePeakFlopsPerSecond);

}  // namespace stepscope
