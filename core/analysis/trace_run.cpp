#include "analysis/trace_run.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "profile/operator_tracer.h"
#include "results/statistics.h"

namespace stepscope {

namespace {

void addRows(const RankAnalysis& rank, RunResult& run) {
    for (const KernelStats& kernel : rank.kernels) {
        TimeRow row;
        row.name = kernel.name;
        row.category = std::string(toString(kernel.type));
        row.calls = kernel.calls;
        row.totalMs = kernel.totalUs / 1e3;
        run.kernels.push_back(std::move(row));
    }
    for (const OperatorStats& op : rank.operators) {
        TimeRow row;
        row.name = op.name;
        row.category = operatorCategory(op.name, "forward");
        row.calls = op.calls;
        row.totalMs = op.selfUs / 1e3;  // self: the rows add up to the host's busy time
        run.operators.push_back(std::move(row));
    }
    int index = 0;
    std::vector<double> totals;
    for (const StepTime& step : rank.steps) {
        if (step.analysed) {
            StepRecord record;
            record.index = index++;
            record.totalMs = step.durationUs / 1e3;
            run.steps.push_back(record);
            totals.push_back(record.totalMs);
        }
    }
    // The steps' spread only: a trace does not say its tokens or its model,
    // so no throughput or FLOPs are made up for it.
    run.summary.total = summarize(totals);
}

// The span of an event on its lane, or nothing for what the timeline leaves out.
std::optional<TimelineSpan> spanOf(const KinetoTrace& trace, const TraceEvent& event) {
    TimelineSpan span;
    const TraceTrack& track = trace.tracks[size_t(event.track)];
    switch (event.category) {
        case TraceCategory::Kernel:
            span.kind = SpanKind::Kernel;
            break;
        case TraceCategory::GpuMemcpy:
            span.kind = SpanKind::Memcpy;
            break;
        case TraceCategory::GpuMemset:
            span.kind = SpanKind::Memset;
            break;
        case TraceCategory::CpuOp:
        case TraceCategory::CudaRuntime:
        case TraceCategory::CudaDriver:
            span.kind = SpanKind::Operator;
            break;
        default:
            return std::nullopt;
    }
    span.name = trace.nameOf(event);
    if (span.kind == SpanKind::Operator) {
        span.track = "thread " + track.tid;
        span.category = event.category == TraceCategory::CpuOp
                            ? operatorCategory(span.name, "forward")
                            : std::string(toString(event.category));
    } else {
        span.track = "stream " + std::to_string(std::max<int64_t>(0, event.stream));
        span.category = std::string(toString(kernelTypeOf(span.name)));
    }
    span.startUs = event.startUs;
    span.durationUs = event.durationUs;
    return span;
}

// Ties each device event's span to its launch call's span (the ac2g flows'
// pairs), by the event each span was made of; the kernel's detail names the call.
void addLaunches(const KinetoTrace& trace, const std::vector<int32_t>& spanOfEvent,
                 std::vector<TimelineSpan>& spans) {
    for (const auto& [launch, kernel] : launchLinks(trace)) {
        const int32_t launchSpan = spanOfEvent[size_t(launch)];
        const int32_t kernelSpan = spanOfEvent[size_t(kernel)];
        if (launchSpan >= 0 && kernelSpan >= 0) {
            spans[size_t(kernelSpan)].launch = launchSpan;
            spans[size_t(kernelSpan)].detail = spans[size_t(launchSpan)].name;
        }
    }
}

void addTimeline(const KinetoTrace& trace, RunResult& run) {
    double origin = std::numeric_limits<double>::infinity();
    for (const TraceEvent& event : trace.events) {
        if (event.hasDuration) {
            origin = std::min(origin, event.startUs);
        }
    }
    if (!std::isfinite(origin)) {
        return;
    }
    StepTimeline& timeline = run.timeline;
    timeline.step = trace.steps.empty() ? 0 : int(trace.steps.front().number);
    timeline.clockOriginUs = origin;
    std::vector<TimelineSpan> spans;
    std::vector<int32_t> eventOfSpan;  // -1 for the step bands
    for (const ProfilerStepRange& step : trace.steps) {
        TimelineSpan band;
        band.kind = SpanKind::Range;
        band.name = "ProfilerStep#" + std::to_string(step.number);
        band.track = "ranges";
        band.startUs = step.startUs - origin;
        band.durationUs = step.durationUs;
        spans.push_back(std::move(band));
        eventOfSpan.push_back(-1);
    }
    for (size_t i = 0; i < trace.events.size(); ++i) {
        if (std::optional<TimelineSpan> span = spanOf(trace, trace.events[i])) {
            span->startUs -= origin;
            spans.push_back(std::move(*span));
            eventOfSpan.push_back(int32_t(i));
        }
    }
    // In start order, as a run's timeline is; the links refer to the sorted spans.
    std::vector<int32_t> order(spans.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&spans](int32_t a, int32_t b) {
        return spans[size_t(a)].startUs < spans[size_t(b)].startUs;
    });
    std::vector<int32_t> spanOfEvent(trace.events.size(), -1);
    timeline.spans.reserve(spans.size());
    for (const int32_t index : order) {
        if (eventOfSpan[size_t(index)] >= 0) {
            spanOfEvent[size_t(eventOfSpan[size_t(index)])] = int32_t(timeline.spans.size());
        }
        timeline.spans.push_back(std::move(spans[size_t(index)]));
    }
    addLaunches(trace, spanOfEvent, timeline.spans);
}

}  // namespace

RunResult traceAsRun(const KinetoTrace& trace, const RankAnalysis& rank) {
    RunResult run;
    run.origin = kOriginProfilerTrace;
    run.config.model.name = "trace";
    run.environment.deviceName = trace.devices.empty() ? "" : trace.devices.front().name;
    addRows(rank, run);
    addTimeline(trace, run);
    return run;
}

}  // namespace stepscope
