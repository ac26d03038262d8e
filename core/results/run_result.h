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
#include "results/rank_communication.h"
#include "results/statistics.h"

namespace stepscope {

// Incorrect: a distributed run's strategy failed the correctness gate before it was timed.
enum class RunStatus { Ok, Oom, Failed, Cancelled, Refused, Unavailable, Incorrect };
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
    // A distributed run: the wait for communication between backward and the
    // optimizer (finish_gradient_synchronization).
    std::optional<double> communicationWaitMs;
};

// Before a distributed run is timed its strategy trains a small model on the
// same ranks, held against single-process training (docs/worker-protocol.md).
struct CorrectnessGate {
    bool ok = false;
    std::optional<double> maxRelError;  // none: not a number (NaN)
    std::string worstParameter;
    double tolerance = 0;
};

// One phase of one step on a rank, on the ranks' shared clock (µs).
struct PhaseSpan {
    int step = 0;
    std::string phase;  // forward, backward, comm_wait, optimizer
    double startUs = 0;
    double endUs = 0;
};

// A rank's memory at the marks the course asks for; on the CPU the tensors'
// bytes by category, on a GPU the allocator's. Absent: not measured there.
struct RankMemoryMarks {
    std::optional<int64_t> peakBytes;
    std::optional<int64_t> afterInitBytes;
    std::optional<int64_t> beforeOptimizerBytes;
    std::optional<int64_t> afterOptimizerBytes;
    std::vector<std::pair<std::string, std::optional<int64_t>>> byCategory;
};

// What one rank measured: its steps, phases and collectives as they ran,
// the communication figures of its spans, its memory.
struct RankRecord {
    int rank = 0;
    std::string host;  // the node it ran on (Slurm's name for it); empty: not said
    std::vector<StepRecord> steps;
    std::vector<PhaseSpan> phases;
    RankSpans spans;  // collectives, and the compute phases they may hide under
    RankCommunication communication;
    RankMemoryMarks memory;
};

// A step shared by config.ranks processes: every rank's record and what
// matching their collectives says. The run's own steps are rank 0's.
struct DistributedRun {
    std::vector<RankRecord> ranks;
    std::vector<MatchedCollective> collectives;
    int64_t unmatched = 0;
    std::optional<Straggler> straggler;
    std::optional<CorrectnessGate> gate;
};

// Fills each rank's communication figures and the matched collectives and
// straggler from the ranks' spans (results/rank_communication.h).
void analyzeRanks(DistributedRun& run);

// A rank's collectives and the compute they may hide under: its phases but
// the wait for communication, less the time a blocking collective held the
// thread. Of its measured steps only (the figures'), or of every step (what
// a chart draws).
RankSpans spansOf(const RankRecord& rank, bool measuredOnly);

// One rank's step as it arrives from a distributed run (live, or read).
struct RankStep {
    int rank = 0;
    StepRecord step;
    std::vector<PhaseSpan> phases;
    std::vector<CollectiveSpan> collectives;
};

// The record of `rank`, made where it is missing; the ranks stay in order.
RankRecord& rankRecordOf(DistributedRun& run, int rank);
void addRankStep(DistributedRun& run, RankStep step);

// Statistics over the measured (non-warm-up) steps.
struct RunSummary {
    Stats total;
    std::optional<Stats> forward;
    std::optional<Stats> backward;
    std::optional<Stats> optimizer;
    std::optional<Stats> communicationWait;  // a distributed run's
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
    std::vector<TimeRow> operators;             // with traceOps: measured steps, per phase
    std::vector<TimeRow> kernels;               // with traceKernels: device time, per phase
    std::vector<FlopGroupRow> flopGroups;       // traced runs: forward time per FLOP group
    StepTimeline timeline;                      // traced runs: the last measured step
    MemoryTrace memory;                         // with traceMemory: every allocation and free
    std::optional<DistributedRun> distributed;  // config.ranks > 1
};

// Recomputes the summary from the step records and the config.
RunSummary summarizeSteps(const std::vector<StepRecord>& steps, const RunConfig& config,
                          std::optional<double> devicePeakFlopsPerSecond);

}  // namespace stepscope
