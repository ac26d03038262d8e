#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stepscope {

// What happened during one traced step, for the kernel timeline and the
// Chrome trace export. Times are microseconds from the start of the step's
// "step N" range; kernels are placed on the same clock.
enum class SpanKind { Range, Operator, Kernel, Memcpy, Memset };
const char* toString(SpanKind kind);

struct TimelineSpan {
    SpanKind kind = SpanKind::Range;
    std::string name;
    std::string category;  // operators and kernels; empty for ranges
    std::string phase;     // setup, forward, backward, optimizer
    std::string track;     // "ranges", "thread 0", "stream 7"
    std::string detail;    // module path of an operator; launching operator of a kernel
    double startUs = 0;
    double durationUs = 0;
    // A kernel's launch call, an index into StepTimeline::spans, where the
    // recording tied them (a profiler trace's ac2g flows); -1 otherwise.
    int32_t launch = -1;
};

struct StepTimeline {
    int step = -1;             // the step it shows; -1 when nothing was traced
    double clockOriginUs = 0;  // its zero on the tracers' clock, to line up with memory
    std::vector<TimelineSpan> spans;
};

// For each span, the index of the span that launched it, or -1: a kernel's
// `launch` where set, else the latest operator named by its `detail` that
// began at or before it (our runs keep the launching operator's name only).
std::vector<int32_t> launchingSpans(const StepTimeline& timeline);

}  // namespace stepscope
