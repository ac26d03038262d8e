#include "analysis/trace_communication.h"

#include <algorithm>
#include <set>
#include <string>

#include "analysis/kernel_type.h"
#include "util/strings.h"

namespace stepscope {

std::string_view toString(CommunicationSource source) {
    switch (source) {
        case CommunicationSource::DeviceKernels:
            return "device kernels";
        case CommunicationSource::GlooThreads:
            return "gloo threads";
        case CommunicationSource::None:
            break;
    }
    return "none";
}

// NCCL's kernel names carry the collective: ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)
// or ncclKernel_AllGather_RING_LL_Sum_int8_t(...) -> "AllReduce", "AllGather".
std::string ncclOperation(std::string_view name) {
    const size_t underscore = name.find('_');
    if (underscore == std::string_view::npos) {
        return std::string(name.substr(0, name.find('(')));
    }
    const std::string_view rest = name.substr(underscore + 1);
    return std::string(rest.substr(0, std::min(rest.find('_'), rest.find('('))));
}

namespace {

void numberInStartOrder(std::vector<CollectiveSpan>& collectives) {
    std::stable_sort(
        collectives.begin(), collectives.end(),
        [](const CollectiveSpan& a, const CollectiveSpan& b) { return a.startUs < b.startUs; });
    for (size_t i = 0; i < collectives.size(); ++i) {
        collectives[i].sequence = int64_t(i);
    }
}

CollectiveSpan spanOf(std::string op, const TraceEvent& event) {
    CollectiveSpan span;
    span.op = std::move(op);
    span.startUs = event.startUs;
    span.endUs = event.startUs + event.durationUs;
    return span;
}

// The operators that compute: not the ones that issue or wait for a collective.
bool computes(std::string_view name) {
    return !startsWith(name, "c10d::") && !startsWith(name, "gloo:") &&
           !startsWith(name, "nccl:") && name != "record_param_comms";
}

TraceCommunication onGlooThreads(const KinetoTrace& trace, const std::vector<char>& keep) {
    TraceCommunication out;
    std::set<int32_t> glooTracks;
    for (size_t i = 0; i < trace.events.size(); ++i) {
        const TraceEvent& e = trace.events[i];
        const std::string_view name = trace.nameOf(e);
        if (keep[i] && e.hasDuration && startsWith(name, "gloo:")) {
            out.spans.collectives.push_back(spanOf(std::string(name.substr(5)), e));
            glooTracks.insert(e.track);
        }
    }
    if (out.spans.collectives.empty()) {
        return out;
    }
    out.source = CommunicationSource::GlooThreads;
    for (size_t i = 0; i < trace.events.size(); ++i) {
        const TraceEvent& e = trace.events[i];
        if (keep[i] && e.category == TraceCategory::CpuOp && !glooTracks.count(e.track) &&
            computes(trace.nameOf(e))) {
            out.spans.compute.push_back({e.startUs, e.startUs + e.durationUs});
        }
    }
    return out;
}

}  // namespace

TraceCommunication traceCommunication(const KinetoTrace& trace, const std::vector<char>& keep,
                                      RankSpans onDevice) {
    TraceCommunication out;
    if (!onDevice.collectives.empty()) {
        out.source = CommunicationSource::DeviceKernels;
        out.spans = std::move(onDevice);
    } else {
        out = onGlooThreads(trace, keep);
    }
    out.spans.rank = trace.defaultRank();
    numberInStartOrder(out.spans.collectives);
    out.spans.compute = mergeIntervals(std::move(out.spans.compute));
    return out;
}

}  // namespace stepscope
