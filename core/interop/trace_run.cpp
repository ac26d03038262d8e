#include "interop/trace_run.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "profile/operator_tracer.h"

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
    for (const StepTime& step : rank.steps) {
        if (step.analysed) {
            StepRecord record;
            record.index = index++;
            record.totalMs = step.durationUs / 1e3;
            run.steps.push_back(record);
        }
    }
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
    for (const ProfilerStepRange& step : trace.steps) {
        TimelineSpan band;
        band.kind = SpanKind::Range;
        band.name = "ProfilerStep#" + std::to_string(step.number);
        band.track = "ranges";
        band.startUs = step.startUs - origin;
        band.durationUs = step.durationUs;
        timeline.spans.push_back(std::move(band));
    }
    for (const TraceEvent& event : trace.events) {
        if (std::optional<TimelineSpan> span = spanOf(trace, event)) {
            span->startUs -= origin;
            timeline.spans.push_back(std::move(*span));
        }
    }
    std::stable_sort(
        timeline.spans.begin(), timeline.spans.end(),
        [](const TimelineSpan& a, const TimelineSpan& b) { return a.startUs < b.startUs; });
}

}  // namespace

RunResult traceAsRun(const KinetoTrace& trace, const RankAnalysis& rank) {
    RunResult run;
    run.config.model.name = "trace";
    run.environment.deviceName = trace.devices.empty() ? "" : trace.devices.front().name;
    addRows(rank, run);
    addTimeline(trace, run);
    return run;
}

}  // namespace stepscope
