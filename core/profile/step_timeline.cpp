#include "profile/step_timeline.h"

#include <algorithm>
#include <unordered_map>

namespace stepscope {

namespace {

bool onDevice(const TimelineSpan& span) {
    return span.kind == SpanKind::Kernel || span.kind == SpanKind::Memcpy ||
           span.kind == SpanKind::Memset;
}

}  // namespace

std::vector<int32_t> launchingSpans(const StepTimeline& timeline) {
    const std::vector<TimelineSpan>& spans = timeline.spans;
    const auto count = int32_t(spans.size());
    // Operators by name, in start order: where a kernel names its launching operator.
    std::unordered_map<std::string, std::vector<int32_t>> operators;
    for (int32_t i = 0; i < count; ++i) {
        if (spans[size_t(i)].kind == SpanKind::Operator) {
            operators[spans[size_t(i)].name].push_back(i);
        }
    }
    for (auto& [name, indices] : operators) {
        std::stable_sort(indices.begin(), indices.end(), [&spans](int32_t a, int32_t b) {
            return spans[size_t(a)].startUs < spans[size_t(b)].startUs;
        });
    }
    std::vector<int32_t> launches(spans.size(), -1);
    for (int32_t i = 0; i < count; ++i) {
        const TimelineSpan& span = spans[size_t(i)];
        if (!onDevice(span)) {
            continue;
        }
        if (span.launch >= 0 && span.launch < count && span.launch != i) {
            launches[size_t(i)] = span.launch;
            continue;
        }
        const auto found = operators.find(span.detail);
        if (span.detail.empty() || found == operators.end()) {
            continue;
        }
        const std::vector<int32_t>& named = found->second;
        const auto after = std::upper_bound(
            named.begin(), named.end(), span.startUs,
            [&spans](double start, int32_t op) { return start < spans[size_t(op)].startUs; });
        if (after != named.begin()) {
            launches[size_t(i)] = *(after - 1);
        }
    }
    return launches;
}

}  // namespace stepscope
