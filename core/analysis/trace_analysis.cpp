#include "analysis/trace_analysis.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "results/intervals.h"
#include "util/strings.h"

namespace stepscope {

namespace {

double endOf(const TraceEvent& event) {
    return event.startUs + event.durationUs;
}

// The events HTA keeps (hta.common.trace.Trace): those with "dur" and "cat",
// not of category "Trace"; with two or more ProfilerStep names, host events
// starting before the last step (to its end with includeLastStep) and the
// device events whose correlation one of those host events holds.
std::vector<char> analysedEvents(const KinetoTrace& trace, const TraceAnalysisOptions& options) {
    const size_t n = trace.events.size();
    std::vector<char> keep(n, 0);
    int32_t traceCategory = -1;
    int32_t eventSync = -1;
    int32_t contextSync = -1;
    std::vector<char> isStepName(trace.strings.size(), 0);
    for (size_t id = 0; id < trace.strings.size(); ++id) {
        const std::string& text = trace.strings[id];
        if (text == "Trace") {
            traceCategory = int32_t(id);
        } else if (text == "Event Sync") {
            eventSync = int32_t(id);
        } else if (text == "Context Sync") {
            contextSync = int32_t(id);
        }
        isStepName[id] = contains(text, "ProfilerStep");
    }
    auto onDevice = [&](const TraceEvent& e) {  // HTA's GPUKernelFilter
        return (e.stream >= 0 && e.correlation >= 0) || e.name == eventSync ||
               e.name == contextSync;
    };
    std::unordered_set<int32_t> stepNames;
    for (size_t i = 0; i < n; ++i) {
        const TraceEvent& e = trace.events[i];
        keep[i] = e.hasDuration && e.hasCategory && e.categoryName != traceCategory;
        if (keep[i] && isStepName[size_t(e.name)]) {
            stepNames.insert(e.name);
        }
    }
    if (stepNames.size() < 2) {
        return keep;
    }
    double lastStart = -std::numeric_limits<double>::infinity();
    double lastEnd = lastStart;
    for (size_t i = 0; i < n; ++i) {
        const TraceEvent& e = trace.events[i];
        if (keep[i] && !onDevice(e) && isStepName[size_t(e.name)]) {
            lastStart = std::max(lastStart, e.startUs);
            lastEnd = std::max(lastEnd, endOf(e));
        }
    }
    std::unordered_set<int64_t> hostCorrelations;
    for (size_t i = 0; i < n; ++i) {
        const TraceEvent& e = trace.events[i];
        if (keep[i] && !onDevice(e)) {
            keep[i] = options.includeLastStep ? e.startUs <= lastEnd : e.startUs < lastStart;
            if (keep[i]) {
                hostCorrelations.insert(e.correlation);
            }
        }
    }
    for (size_t i = 0; i < n; ++i) {
        const TraceEvent& e = trace.events[i];
        if (keep[i] && onDevice(e)) {
            keep[i] = hostCorrelations.count(e.correlation) > 0;
        }
    }
    return keep;
}

struct Accumulator {
    int64_t calls = 0;
    double total = 0;
    double min = std::numeric_limits<double>::infinity();
    double max = 0;
    double mean = 0;
    double m2 = 0;  // Welford: sum of squared deviations
    void add(double x) {
        ++calls;
        total += x;
        min = std::min(min, x);
        max = std::max(max, x);
        const double delta = x - mean;
        mean += delta / double(calls);
        m2 += delta * (x - mean);
    }
};

KernelStats statsOf(const std::string& name, KernelType type, int64_t stream, const Accumulator& a,
                    double deviceTotal) {
    KernelStats row;
    row.name = name;
    row.type = type;
    row.stream = stream;
    row.calls = a.calls;
    row.totalUs = a.total;
    row.meanUs = a.total / double(a.calls);
    row.minUs = a.min;
    row.maxUs = a.max;
    row.stdUs = a.calls > 1 ? std::sqrt(std::max(0.0, a.m2 / double(a.calls - 1))) : 0;
    row.share = deviceTotal > 0 ? a.total / deviceTotal : 0;
    return row;
}

// HTA's _get_gpu_kernel_type_time with MEMORY included: the merged intervals
// of each type swept together; each stretch goes to the set of types running.
std::vector<KernelTypeTime> kernelTypeTimes(const std::vector<std::vector<Interval>>& byType) {
    struct Edge {
        double time;
        int bit;  // +bit at a start, -bit at an end
    };
    std::vector<Edge> edges;
    for (size_t type = 0; type < byType.size(); ++type) {
        for (const Interval& interval : byType[type]) {
            edges.push_back({interval.start, 1 << type});
            edges.push_back({interval.end, -(1 << type)});
        }
    }
    std::sort(edges.begin(), edges.end(),
              [](const Edge& a, const Edge& b) { return a.time < b.time; });
    std::vector<double> byMask(size_t(1) << byType.size(), 0.0);
    int running = 0;
    for (size_t i = 0; i < edges.size(); ++i) {
        running += edges[i].bit;
        if (i + 1 < edges.size() && running > 0) {
            byMask[size_t(running)] += edges[i + 1].time - edges[i].time;
        }
    }
    std::vector<KernelTypeTime> out;
    for (size_t mask = 1; mask < byMask.size(); ++mask) {
        if (byMask[mask] <= 0) {
            continue;
        }
        std::string name;
        for (size_t type = 0; type < byType.size(); ++type) {
            if (mask & (size_t(1) << type)) {
                name +=
                    (name.empty() ? "" : " overlapping ") + std::string(toString(KernelType(type)));
            }
        }
        out.push_back({name, byMask[mask]});
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const KernelTypeTime& a, const KernelTypeTime& b) { return a.us > b.us; });
    return out;
}

bool isLaunchName(const std::string& name) {
    return name == "cudaLaunchKernel" || name == "cudaLaunchKernelExC" ||
           name == "cudaMemcpyAsync" || name == "cudaMemsetAsync" ||
           name == "runFunction - job_prep_and_submit_for_execution";  // MTIA's
}

// HTA's cuda_kernel_launch_stats: host events (stream -1) and device events
// sharing the correlation of a launch. HTA joins them all with all; here
// each device event takes the last such host event, which is the same on
// Kineto's traces (one launch per correlation) and bounded on any file.
LaunchStatistics launchStatistics(const KinetoTrace& trace, const std::vector<char>& keep,
                                  const TraceAnalysisOptions& options) {
    LaunchStatistics stats;
    stats.runtimeCutoffUs = options.runtimeCutoffUs;
    stats.launchDelayCutoffUs = options.launchDelayCutoffUs;
    std::vector<char> launchName(trace.strings.size(), 0);
    for (size_t id = 0; id < trace.strings.size(); ++id) {
        launchName[id] = isLaunchName(trace.strings[id]);
    }
    std::unordered_set<int64_t> launchCorrelations;
    for (size_t i = 0; i < trace.events.size(); ++i) {
        const TraceEvent& e = trace.events[i];
        if (keep[i] && launchName[size_t(e.name)] && e.correlation >= 0) {
            launchCorrelations.insert(e.correlation);
        }
    }
    std::unordered_map<int64_t, int32_t> hostByCorrelation;
    for (size_t i = 0; i < trace.events.size(); ++i) {
        const TraceEvent& e = trace.events[i];
        if (keep[i] && e.stream == -1 && launchCorrelations.count(e.correlation)) {
            hostByCorrelation[e.correlation] = int32_t(i);
        }
    }
    for (size_t i = 0; i < trace.events.size(); ++i) {
        const TraceEvent& kernel = trace.events[i];
        if (!keep[i] || kernel.stream == -1) {
            continue;
        }
        const auto host = hostByCorrelation.find(kernel.correlation);
        if (host == hostByCorrelation.end()) {
            continue;
        }
        const TraceEvent& launch = trace.events[size_t(host->second)];
        KernelLaunch row;
        row.launchEvent = host->second;
        row.kernelEvent = int32_t(i);
        row.cpuUs = launch.durationUs;
        row.gpuUs = kernel.durationUs;
        row.delayUs = std::max(0.0, kernel.startUs - endOf(launch));
        stats.cpuTotalUs += row.cpuUs;
        stats.cpuMaxUs = std::max(stats.cpuMaxUs, row.cpuUs);
        stats.gpuTotalUs += row.gpuUs;
        stats.gpuMaxUs = std::max(stats.gpuMaxUs, row.gpuUs);
        stats.delayTotalUs += row.delayUs;
        stats.delayMaxUs = std::max(stats.delayMaxUs, row.delayUs);
        stats.shortKernels += row.cpuUs <= options.runtimeCutoffUs && row.gpuUs < row.cpuUs;
        stats.runtimeOutliers += row.cpuUs > options.runtimeCutoffUs;
        stats.delayOutliers += row.delayUs > options.launchDelayCutoffUs;
        stats.launches.push_back(row);
    }
    return stats;
}

// Self time: each host event's duration less its direct children on the same
// track (a stack over start-sorted events; no recursion).
std::vector<OperatorStats> operatorStats(const KinetoTrace& trace, const std::vector<char>& keep) {
    std::vector<int32_t> order;
    for (size_t i = 0; i < trace.events.size(); ++i) {
        const TraceEvent& e = trace.events[i];
        const bool nests =
            e.category == TraceCategory::CpuOp || e.category == TraceCategory::UserAnnotation ||
            e.category == TraceCategory::CudaRuntime || e.category == TraceCategory::CudaDriver;
        if (keep[i] && nests && e.stream == -1) {
            order.push_back(int32_t(i));
        }
    }
    const auto& events = trace.events;
    std::sort(order.begin(), order.end(), [&events](int32_t a, int32_t b) {
        const TraceEvent& x = events[size_t(a)];
        const TraceEvent& y = events[size_t(b)];
        if (x.track != y.track) {
            return x.track < y.track;
        }
        if (x.startUs != y.startUs) {
            return x.startUs < y.startUs;
        }
        return x.durationUs > y.durationUs;  // the parent first
    });
    // Kineto writes times to the nanosecond; a child may end a rounding past its parent.
    constexpr double kSlackUs = 0.0015;
    std::vector<double> self(trace.events.size(), 0.0);
    std::vector<int32_t> stack;
    int32_t track = -1;
    for (const int32_t index : order) {
        const TraceEvent& e = events[size_t(index)];
        if (e.track != track) {
            stack.clear();
            track = e.track;
        }
        // The parent is the innermost open event that holds this one whole.
        while (!stack.empty() && endOf(e) > endOf(events[size_t(stack.back())]) + kSlackUs) {
            stack.pop_back();
        }
        if (!stack.empty()) {
            self[size_t(stack.back())] -= e.durationUs;
        }
        self[size_t(index)] += e.durationUs;
        stack.push_back(index);
    }
    std::unordered_map<int32_t, size_t> rowOf;
    std::vector<OperatorStats> rows;
    for (const int32_t index : order) {
        const TraceEvent& e = events[size_t(index)];
        if (e.category != TraceCategory::CpuOp) {
            continue;
        }
        auto [it, added] = rowOf.try_emplace(e.name, rows.size());
        if (added) {
            rows.push_back({trace.strings[size_t(e.name)], 0, 0, 0});
        }
        OperatorStats& row = rows[it->second];
        ++row.calls;
        row.totalUs += e.durationUs;
        row.selfUs += std::max(0.0, self[size_t(index)]);
    }
    std::stable_sort(rows.begin(), rows.end(), [](const OperatorStats& a, const OperatorStats& b) {
        return a.selfUs != b.selfUs ? a.selfUs > b.selfUs : a.name < b.name;
    });
    return rows;
}

// Each step's device events: those whose launching host event starts within
// the step (HTA's add_iteration: a kernel takes its launch's iteration).
std::vector<StepTime> stepTimes(const KinetoTrace& trace, const std::vector<char>& keep,
                                const std::vector<char>& device) {
    std::vector<StepTime> steps;
    for (const ProfilerStepRange& range : trace.steps) {
        StepTime step;
        step.step = range.number;
        step.startUs = range.startUs;
        step.durationUs = range.durationUs;
        step.analysed = keep[size_t(range.event)] != 0;
        steps.push_back(step);
    }
    if (steps.empty()) {
        return steps;
    }
    // A kernel's launch: the host event holding its correlation.
    std::unordered_map<int64_t, double> launchStart;
    for (size_t i = 0; i < trace.events.size(); ++i) {
        const TraceEvent& e = trace.events[i];
        if (e.stream < 0 && e.correlation >= 0 && e.hasDuration) {
            launchStart[e.correlation] = e.startUs;
        }
    }
    // trace.steps is in start order; ranges do not overlap in Kineto's traces.
    for (size_t i = 0; i < trace.events.size(); ++i) {
        if (!device[i]) {
            continue;
        }
        const TraceEvent& kernel = trace.events[i];
        const auto launch = launchStart.find(kernel.correlation);
        if (launch == launchStart.end()) {
            continue;
        }
        const double at = launch->second;
        const auto after =
            std::upper_bound(steps.begin(), steps.end(), at,
                             [](double time, const StepTime& step) { return time < step.startUs; });
        if (after != steps.begin()) {
            StepTime& step = *(after - 1);
            if (at < step.startUs + step.durationUs) {
                ++step.kernels;
                step.kernelUs += kernel.durationUs;
            }
        }
    }
    return steps;
}

// The device events of the analysed set (what HTA's analyses take as kernels:
// stream != -1), gathered once for every table that follows.
struct DeviceKernels {
    std::vector<char> device;            // by event: analysed and on a stream
    std::vector<KernelType> typeOfName;  // by string id, where typed
    std::vector<Interval> all;           // every kernel's interval
    std::vector<std::vector<Interval>> byType = std::vector<std::vector<Interval>>(3);
    std::vector<CollectiveSpan> collectives;  // the communication kernels, as collectives
    std::unordered_map<int32_t, Accumulator> byName;
    std::map<std::pair<int64_t, int32_t>, Accumulator> byStream;  // (stream, name)
    double totalUs = 0;
};

DeviceKernels deviceKernels(const KinetoTrace& trace, const std::vector<char>& keep) {
    const size_t n = trace.events.size();
    DeviceKernels kernels;
    kernels.device.assign(n, 0);
    kernels.typeOfName.assign(trace.strings.size(), KernelType::Other);
    std::vector<char> typed(trace.strings.size(), 0);
    for (size_t i = 0; i < n; ++i) {
        const TraceEvent& e = trace.events[i];
        if (!keep[i] || e.stream == -1) {
            continue;
        }
        kernels.device[i] = 1;
        if (!typed[size_t(e.name)]) {
            kernels.typeOfName[size_t(e.name)] = kernelTypeOf(trace.strings[size_t(e.name)]);
            typed[size_t(e.name)] = 1;
        }
        const KernelType type = kernels.typeOfName[size_t(e.name)];
        const Interval interval{e.startUs, endOf(e)};
        kernels.all.push_back(interval);
        if (type != KernelType::Other) {
            kernels.byType[size_t(type)].push_back(interval);
        }
        if (type == KernelType::Communication) {
            CollectiveSpan collective;
            collective.op = ncclOperation(trace.strings[size_t(e.name)]);
            collective.startUs = interval.start;
            collective.endUs = interval.end;
            kernels.collectives.push_back(std::move(collective));
        }
        kernels.byName[e.name].add(e.durationUs);
        kernels.byStream[{e.stream, e.name}].add(e.durationUs);
        kernels.totalUs += e.durationUs;
    }
    return kernels;
}

// Busy, idle and compute time over the span the kernels cover, and the
// overlap of kernel types; merges the kernels' intervals in place.
void addTemporalBreakdown(DeviceKernels& kernels, RankAnalysis& result) {
    if (kernels.all.empty()) {
        return;
    }
    const std::vector<Interval> busy = mergeIntervals(std::move(kernels.all));
    TemporalBreakdown temporal;
    temporal.spanUs = busy.back().end - busy.front().start;
    temporal.idleUs = temporal.spanUs - totalLength(busy);
    for (auto& intervals : kernels.byType) {
        intervals = mergeIntervals(std::move(intervals));
    }
    temporal.computeUs = totalLength(kernels.byType[size_t(KernelType::Computation)]);
    temporal.nonComputeUs = temporal.spanUs - temporal.computeUs - temporal.idleUs;
    result.temporal = temporal;
    result.kernelTypes = kernelTypeTimes(kernels.byType);
}

// The kernel tables: by name, longest total first, and by stream and name.
void addKernelTables(const KinetoTrace& trace, const DeviceKernels& kernels, RankAnalysis& result) {
    for (const auto& [name, accumulator] : kernels.byName) {
        result.kernels.push_back(statsOf(trace.strings[size_t(name)],
                                         kernels.typeOfName[size_t(name)], -1, accumulator,
                                         kernels.totalUs));
    }
    std::sort(result.kernels.begin(), result.kernels.end(),
              [](const KernelStats& a, const KernelStats& b) {
                  return a.totalUs != b.totalUs ? a.totalUs > b.totalUs : a.name < b.name;
              });
    for (const auto& [key, accumulator] : kernels.byStream) {
        result.kernelsPerStream.push_back(statsOf(trace.strings[size_t(key.second)],
                                                  kernels.typeOfName[size_t(key.second)], key.first,
                                                  accumulator, kernels.totalUs));
    }
    std::stable_sort(result.kernelsPerStream.begin(), result.kernelsPerStream.end(),
                     [](const KernelStats& a, const KernelStats& b) {
                         if (a.stream != b.stream) {
                             return a.stream < b.stream;
                         }
                         return a.totalUs != b.totalUs ? a.totalUs > b.totalUs : a.name < b.name;
                     });
}

// The mean duration of the analysed steps; 0 without them.
double meanAnalysedStepUs(const std::vector<StepTime>& steps) {
    double totalUs = 0;
    int64_t analysedSteps = 0;
    for (const StepTime& step : steps) {
        if (step.analysed) {
            totalUs += step.durationUs;
            ++analysedSteps;
        }
    }
    return analysedSteps ? totalUs / double(analysedSteps) : 0;
}

}  // namespace

RankAnalysis analyzeTrace(const KinetoTrace& trace, const TraceAnalysisOptions& options) {
    RankAnalysis result;
    result.rank = trace.defaultRank();
    result.file = trace.path;
    const std::vector<char> keep = analysedEvents(trace, options);
    for (const char kept : keep) {
        result.analysedEvents += kept;
    }
    DeviceKernels kernels = deviceKernels(trace, keep);
    addTemporalBreakdown(kernels, result);
    addKernelTables(trace, kernels, result);
    result.launch = launchStatistics(trace, keep, options);
    result.operators = operatorStats(trace, keep);
    result.steps = stepTimes(trace, keep, kernels.device);
    result.meanStepUs = meanAnalysedStepUs(result.steps);
    RankSpans onDevice;
    onDevice.collectives = std::move(kernels.collectives);
    onDevice.compute = kernels.byType[size_t(KernelType::Computation)];  // merged above
    TraceCommunication communication = traceCommunication(trace, keep, std::move(onDevice));
    result.communicationSource = communication.source;
    result.communicationSpans = std::move(communication.spans);
    result.communication = analyzeCommunication({result.communicationSpans}).ranks.front();
    result.worldSize = trace.distributed ? trace.distributed->worldSize : 1;
    return result;
}

std::vector<RankAnalysis> analyzeRecording(std::vector<RankAnalysis> ranks) {
    std::stable_sort(ranks.begin(), ranks.end(),
                     [](const RankAnalysis& a, const RankAnalysis& b) { return a.rank < b.rank; });
    for (size_t i = 1; i < ranks.size(); ++i) {
        if (ranks[i].rank == ranks[i - 1].rank) {
            throw KinetoTraceError(
                KinetoTraceError::Kind::Invalid,
                "'" + ranks[i - 1].file + "' and '" + ranks[i].file + "' both hold rank " +
                    std::to_string(ranks[i].rank) +
                    " (distributedInfo.rank): one recording has one trace a rank");
        }
    }
    std::map<int64_t, StepTime*> slowest;
    for (RankAnalysis& rank : ranks) {
        for (StepTime& step : rank.steps) {
            step.slowest = false;
            StepTime*& best = slowest[step.step];
            if (!best || step.durationUs > best->durationUs) {
                best = &step;
            }
        }
    }
    for (auto& [number, step] : slowest) {
        step->slowest = true;
    }
    const CrossRankCommunication across = communicationAcross(ranks);
    size_t next = 0;
    for (RankAnalysis& rank : ranks) {
        if (rank.communicationSource != CommunicationSource::None) {
            rank.communication.waitUs = across.ranks[next++].waitUs;
        }
    }
    return ranks;
}

CrossRankCommunication communicationAcross(const std::vector<RankAnalysis>& ranks) {
    std::vector<RankSpans> spans;
    for (const RankAnalysis& rank : ranks) {
        if (rank.communicationSource != CommunicationSource::None) {
            spans.push_back(rank.communicationSpans);
        }
    }
    return analyzeCommunication(spans);
}

std::vector<RankAnalysis> analyzeTracePath(const std::string& path,
                                           const TraceAnalysisOptions& options) {
    std::error_code error;
    const std::vector<std::string> files = std::filesystem::is_directory(path, error)
                                               ? kinetoTraceFiles(path)
                                               : std::vector<std::string>{path};
    std::vector<RankAnalysis> ranks;
    for (const std::string& file : files) {
        ranks.push_back(analyzeTrace(readKinetoTrace(file), options));
    }
    return analyzeRecording(std::move(ranks));
}

std::vector<std::pair<int32_t, int32_t>> launchLinks(const KinetoTrace& trace) {
    std::unordered_map<int64_t, int32_t> launchByCorrelation;
    for (size_t i = 0; i < trace.events.size(); ++i) {
        const TraceEvent& e = trace.events[i];
        if (e.stream == -1 && e.correlation >= 0 &&
            (e.category == TraceCategory::CudaRuntime || e.category == TraceCategory::CudaDriver)) {
            launchByCorrelation[e.correlation] = int32_t(i);
        }
    }
    std::vector<std::pair<int32_t, int32_t>> links;
    for (size_t i = 0; i < trace.events.size(); ++i) {
        const TraceEvent& e = trace.events[i];
        if (e.stream < 0 || e.correlation < 0) {
            continue;
        }
        const auto launch = launchByCorrelation.find(e.correlation);
        if (launch != launchByCorrelation.end()) {
            links.emplace_back(launch->second, int32_t(i));
        }
    }
    return links;
}

namespace {

// Kernel rows; those of one stream name it.
nlohmann::json kernelRowsJson(const std::vector<KernelStats>& rows) {
    nlohmann::json list = nlohmann::json::array();
    for (const KernelStats& k : rows) {
        nlohmann::json row = {{"name", k.name},      {"calls", k.calls},  {"total_us", k.totalUs},
                              {"mean_us", k.meanUs}, {"min_us", k.minUs}, {"max_us", k.maxUs}};
        if (k.stream >= 0) {
            row["stream"] = k.stream;
        }
        list.push_back(std::move(row));
    }
    return list;
}

}  // namespace

namespace {

nlohmann::json communicationJson(const RankAnalysis& rank) {
    const RankCommunication& c = rank.communication;
    const bool any = rank.communicationSource != CommunicationSource::None;
    return {{"source", toString(rank.communicationSource)},
            {"time_us", c.communicationUs},
            {"exposed_us", c.exposedUs},
            {"overlap_pct", any ? nlohmann::json(c.overlapPercent) : nlohmann::json(nullptr)},
            {"collectives", c.collectives},
            {"wait_us", c.waitUs}};
}

nlohmann::json acrossRanksJson(const std::vector<RankAnalysis>& ranks) {
    const CrossRankCommunication across = communicationAcross(ranks);
    nlohmann::json collectives = nlohmann::json::array();
    for (const MatchedCollective& matched : across.collectives) {
        collectives.push_back({{"op", matched.op},
                               {"sequence", matched.sequence},
                               {"transfer_us", matched.transferUs},
                               {"wait_us", matched.waitUs}});
    }
    nlohmann::json straggler = nullptr;
    if (across.straggler) {
        straggler = {{"rank", across.straggler->rank},
                     {"others_wait_us", across.straggler->othersWaitUs}};
    }
    nlohmann::json ranksIn = nlohmann::json::array();
    for (const RankAnalysis& rank : ranks) {
        if (rank.communicationSource != CommunicationSource::None) {
            ranksIn.push_back(rank.rank);
        }
    }
    return {{"ranks", ranksIn},
            {"world_size", ranks.empty() ? 0 : ranks.front().worldSize},
            {"matched_by", "start order"},
            {"unmatched", across.unmatched},
            {"straggler", straggler},
            {"collectives", collectives}};
}

}  // namespace

nlohmann::json traceBreakdownJson(const std::vector<RankAnalysis>& ranks) {
    using nlohmann::json;
    json list = json::array();
    for (const RankAnalysis& rank : ranks) {
        json temporal = nullptr;
        if (rank.temporal) {
            const TemporalBreakdown& t = *rank.temporal;
            temporal = {{"idle_us", t.idleUs},
                        {"compute_us", t.computeUs},
                        {"non_compute_us", t.nonComputeUs},
                        {"idle_pct", t.percentOf(t.idleUs)},
                        {"compute_pct", t.percentOf(t.computeUs)},
                        {"non_compute_pct", t.percentOf(t.nonComputeUs)}};
        }
        json types = json::object();
        for (const KernelTypeTime& type : rank.kernelTypes) {
            types[type.name] = type.us;
        }
        const LaunchStatistics& l = rank.launch;
        const double count = double(std::max<size_t>(1, l.launches.size()));
        auto summary = [count](double total, double max) {
            return json{{"total", total}, {"mean", total / count}, {"max", max}};
        };
        const json launch = {{"launches", l.launches.size()},
                             {"cpu_us", summary(l.cpuTotalUs, l.cpuMaxUs)},
                             {"gpu_us", summary(l.gpuTotalUs, l.gpuMaxUs)},
                             {"delay_us", summary(l.delayTotalUs, l.delayMaxUs)},
                             {"short_kernels", l.shortKernels},
                             {"runtime_outliers", l.runtimeOutliers},
                             {"delay_outliers", l.delayOutliers},
                             {"runtime_cutoff_us", l.runtimeCutoffUs},
                             {"delay_cutoff_us", l.launchDelayCutoffUs}};
        json steps = json::array();
        for (const StepTime& s : rank.steps) {
            steps.push_back({{"step", s.step},
                             {"start_us", s.startUs},
                             {"duration_us", s.durationUs},
                             {"kernels", s.kernels},
                             {"kernel_us", s.kernelUs},
                             {"analysed", s.analysed},
                             {"slowest", s.slowest}});
        }
        list.push_back({{"rank", rank.rank},
                        {"span_us", rank.temporal ? rank.temporal->spanUs : 0.0},
                        {"temporal", temporal},
                        {"kernel_types", types},
                        {"kernels", kernelRowsJson(rank.kernels)},
                        {"kernels_per_stream", kernelRowsJson(rank.kernelsPerStream)},
                        {"launch", launch},
                        {"steps", steps},
                        {"world_size", rank.worldSize},
                        {"communication", communicationJson(rank)}});
    }
    return {{"source", "kineto"}, {"ranks", list}, {"across_ranks", acrossRanksJson(ranks)}};
}

}  // namespace stepscope
