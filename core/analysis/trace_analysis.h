#pragma once

// core/analysis: what a recording means, whoever made it. HTA's analyses of
// a profiler trace (here), a trace as a run, a memory snapshot's timeline,
// sites and summary, and our runs' memory as a snapshot. Reads through
// interop/; includes interop/ and what its arrows reach.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/kernel_type.h"
#include "analysis/trace_communication.h"
#include "interop/kineto_trace.h"
#include "results/rank_communication.h"

namespace stepscope {

// Holistic Trace Analysis's per-rank analyses computed on a KinetoTrace, with
// HTA's definitions (holistictraceanalysis 0.5.0; docs/trace-analyses.md puts
// each beside HTA's function). Times are µs with fractions kept; HTA rounds a
// fractional trace to whole µs unless HTA_DISABLE_NS_ROUNDING=1.

struct TraceAnalysisOptions {
    // HTA's include_last_profiler_step: by default a trace with two or more
    // ProfilerStep#N ranges is analysed without its last step (whose kernels
    // may be cut off by the end of the recording).
    bool includeLastStep = false;
    double runtimeCutoffUs = 50;       // HTA's runtime_cutoff
    double launchDelayCutoffUs = 100;  // HTA's launch_delay_cutoff
};

// Device time by kernel name (stream -1: all streams together).
struct KernelStats {
    std::string name;
    KernelType type = KernelType::Other;
    int64_t stream = -1;
    int64_t calls = 0;
    double totalUs = 0;
    double meanUs = 0;
    double minUs = 0;
    double maxUs = 0;
    double stdUs = 0;  // sample standard deviation (pandas' std); 0 for one call
    double share = 0;  // of the rank's device time, 0..1
};

// Over the span from the first device event's start to the last one's end,
// all streams merged: idle (nothing runs), compute (a computation kernel
// runs), non-compute (only communication, memory or other kernels run).
struct TemporalBreakdown {
    double spanUs = 0;
    double idleUs = 0;
    double computeUs = 0;
    double nonComputeUs = 0;
    double percentOf(double us) const { return spanUs > 0 ? 100.0 * us / spanUs : 0; }
};

// Time during which exactly this combination of kernel types runs, counted
// once however many kernels of each run: "COMPUTATION", "COMPUTATION
// overlapping COMMUNICATION", ... (HTA's names, types in HTA's order).
struct KernelTypeTime {
    std::string name;
    double us = 0;
};

// One launch (cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync,
// cudaMemsetAsync) and the device event it started.
struct KernelLaunch {
    int32_t launchEvent = 0;  // into KinetoTrace::events
    int32_t kernelEvent = 0;
    double cpuUs = 0;    // the launch call's duration
    double gpuUs = 0;    // its kernel's duration
    double delayUs = 0;  // kernel start - launch end, at least 0
};

struct LaunchStatistics {
    std::vector<KernelLaunch> launches;
    double runtimeCutoffUs = 50;
    double launchDelayCutoffUs = 100;
    double cpuTotalUs = 0, cpuMaxUs = 0;
    double gpuTotalUs = 0, gpuMaxUs = 0;
    double delayTotalUs = 0, delayMaxUs = 0;
    // HTA's three findings: kernels shorter than their launch (launch-bound),
    // launches slower than the runtime cutoff, kernels started later than the delay cutoff.
    int64_t shortKernels = 0;
    int64_t runtimeOutliers = 0;
    int64_t delayOutliers = 0;
};

struct StepTime {
    int64_t step = 0;
    double startUs = 0;
    double durationUs = 0;  // the ProfilerStep#N range on the host
    int64_t kernels = 0;    // device events launched within it
    double kernelUs = 0;    // their device time
    bool analysed = true;   // false for the last step HTA leaves out
    bool slowest = false;   // the longest of this step over the recording's ranks
};

// Host operators (cpu_op) by name; self time leaves out nested host events
// (operators, annotations, runtime calls) on the same thread.
struct OperatorStats {
    std::string name;
    int64_t calls = 0;
    double totalUs = 0;
    double selfUs = 0;
};

struct RankAnalysis {
    int64_t rank = 0;
    std::string file;
    std::optional<TemporalBreakdown> temporal;  // absent without device events
    std::vector<KernelTypeTime> kernelTypes;    // largest first
    std::vector<KernelStats> kernels;           // by name, largest first
    std::vector<KernelStats> kernelsPerStream;  // by stream, then largest first
    LaunchStatistics launch;
    std::vector<StepTime> steps;
    std::vector<OperatorStats> operators;  // by self time, largest first
    double meanStepUs = 0;                 // over the analysed steps; 0 without steps
    int64_t analysedEvents = 0;
    // Collectives and the compute that can hide them (trace_communication);
    // communication's wait is across the recording's ranks (analyzeRecording).
    CommunicationSource communicationSource = CommunicationSource::None;
    RankSpans communicationSpans;
    RankCommunication communication;
    int64_t worldSize = 1;  // distributedInfo's: more than the ranks present in a partial folder
};

RankAnalysis analyzeTrace(const KinetoTrace& trace, const TraceAnalysisOptions& options = {});

// One recording of several ranks: sorted by rank, the slowest rank of each
// step marked, each rank's wait in the collectives matched across them. Throws KinetoTraceError
// (Invalid) when two traces hold one rank.
std::vector<RankAnalysis> analyzeRecording(std::vector<RankAnalysis> ranks);

// The collectives matched across a recording's ranks (those with any).
CrossRankCommunication communicationAcross(const std::vector<RankAnalysis>& ranks);

// A trace file, or a folder of rank traces, each read, analysed and let go.
std::vector<RankAnalysis> analyzeTracePath(const std::string& path,
                                           const TraceAnalysisOptions& options = {});

// Launch → device event pairs of the whole trace (by correlation, as the
// ac2g flows draw them), for drawing; not limited to the analysed steps.
std::vector<std::pair<int32_t, int32_t>> launchLinks(const KinetoTrace& trace);

// `stepscope-cli breakdown TRACE --json`: {source: "kineto", ranks: [...]}.
nlohmann::json traceBreakdownJson(const std::vector<RankAnalysis>& ranks);

}  // namespace stepscope
