#include "profile/memory_trace.h"

#include <algorithm>
#include <unordered_map>

namespace stepscope {

const char* toString(MemoryCategory category) {
    switch (category) {
        case MemoryCategory::Parameters:
            return "parameters";
        case MemoryCategory::Gradients:
            return "gradients";
        case MemoryCategory::OptimizerState:
            return "optimizer_state";
        case MemoryCategory::Activations:
            return "activations";
        case MemoryCategory::Temporaries:
            return "temporaries";
        case MemoryCategory::Inputs:
            return "inputs";
        case MemoryCategory::Other:
            return "other";
        case MemoryCategory::Recomputed:
            return "recomputed";
    }
    return "other";
}

void MemoryTrace::reserve(size_t events) {
    timeUs.reserve(events);
    address.reserve(events);
    bytes.reserve(events);
    category.reserve(events);
    phase.reserve(events);
    step.reserve(events);
    path.reserve(events);
    op.reserve(events);
    allocated.reserve(events);
    reserved.reserve(events);
}

const std::string& MemoryTrace::name(int32_t id) const {
    static const std::string kNone;
    return id >= 0 && size_t(id) < paths.size() ? paths[size_t(id)] : kNone;
}

std::vector<MemoryAllocation> memoryAllocations(const MemoryTrace& trace) {
    std::vector<MemoryAllocation> out;
    std::unordered_map<uint64_t, size_t> open;
    for (size_t i = 0; i < trace.size(); ++i) {
        if (trace.bytes[i] > 0) {
            MemoryAllocation allocation;
            allocation.address = trace.address[i];
            allocation.bytes = trace.bytes[i];
            allocation.category = MemoryCategory(trace.category[i]);
            allocation.phase = trace.phase[i];
            allocation.step = trace.step[i];
            allocation.path = trace.path[i];
            allocation.op = i < trace.op.size() ? trace.op[i] : -1;
            allocation.startUs = trace.timeUs[i];
            open[allocation.address] = out.size();
            out.push_back(std::move(allocation));
        } else if (const auto found = open.find(trace.address[i]); found != open.end()) {
            out[found->second].endUs = trace.timeUs[i];
            open.erase(found);
        }
    }
    return out;
}

std::vector<CategoryBytes> activeBytesByCategory(const MemoryTrace& trace) {
    std::vector<CategoryBytes> out;
    out.reserve(trace.size());
    CategoryBytes active{};
    for (size_t i = 0; i < trace.size(); ++i) {
        active[trace.category[i]] += trace.bytes[i];
        out.push_back(active);
    }
    return out;
}

MemorySummary summarizeMemory(const MemoryTrace& trace, size_t topCount) {
    MemorySummary summary;
    CategoryBytes active{};
    int64_t total = 0;
    for (size_t i = 0; i < trace.size(); ++i) {
        active[trace.category[i]] += trace.bytes[i];
        total += trace.bytes[i];
        for (size_t c = 0; c < kMemoryCategories; ++c) {
            summary.maxByCategory[c] = std::max(summary.maxByCategory[c], active[c]);
        }
        const int phase = trace.phase[i];
        summary.peakByPhase[size_t(phase)] = std::max(summary.peakByPhase[size_t(phase)], total);
        if (total > summary.peakBytes) {
            summary.peakBytes = total;
            summary.peakTimeUs = trace.timeUs[i];
            summary.peakPhase = phase;
            summary.peakStep = trace.step[i];
            summary.atPeak = active;
        }
    }
    if (topCount == 0) {
        return summary;  // pairing a million events is the costly part; skip it when unasked
    }
    summary.top = memoryAllocations(trace);
    const size_t count = std::min(topCount, summary.top.size());
    std::partial_sort(
        summary.top.begin(), summary.top.begin() + long(count), summary.top.end(),
        [](const MemoryAllocation& a, const MemoryAllocation& b) { return a.bytes > b.bytes; });
    summary.top.resize(count);
    return summary;
}

}  // namespace stepscope
