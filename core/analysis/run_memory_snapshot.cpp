#include "analysis/run_memory_snapshot.h"

#include <algorithm>
#include <unordered_map>

#include "profile/memory_trace.h"

namespace stepscope {

namespace {

// Strings, frames and stacks of a run: one frame and one stack per site.
class RunSites {
public:
    explicit RunSites(MemorySnapshot& out) : out_(out) {
        out_.strings.emplace_back();  // the empty filename of every frame
        strings_.emplace("", 0);
        out_.stackStart.push_back(0);
    }
    uint32_t string(const std::string& text) {
        const auto [found, added] = strings_.try_emplace(text, uint32_t(out_.strings.size()));
        if (added) {
            out_.strings.push_back(text);
        }
        return found->second;
    }
    // The stack of the site "path · op" (memviz_export's spelling).
    uint32_t stack(int32_t path, int32_t op, const MemoryTrace& trace) {
        const uint64_t key = (uint64_t(uint32_t(path)) << 32) | uint32_t(op);
        if (const auto found = stacks_.find(key); found != stacks_.end()) {
            return found->second;
        }
        std::string label = path >= 0 ? trace.paths[size_t(path)] : "";
        if (op >= 0 && op != path) {
            const std::string& name = trace.paths[size_t(op)];
            label = label.empty() ? name : label + " · " + name;
        }
        if (label.empty()) {
            label = "(no module)";
        }
        out_.frames.push_back({0, string(label), 0});
        out_.stackFrames.push_back(uint32_t(out_.frames.size() - 1));
        out_.stackStart.push_back(uint32_t(out_.stackFrames.size()));
        const auto id = uint32_t(out_.stackStart.size() - 2);
        stacks_.emplace(key, id);
        return id;
    }

private:
    MemorySnapshot& out_;
    std::unordered_map<std::string, uint32_t> strings_;
    std::unordered_map<uint64_t, uint32_t> stacks_;
};

}  // namespace

MemorySnapshot memorySnapshotOfRun(const MemoryTrace& trace, const std::string& source) {
    MemorySnapshot out;
    out.source = source;
    RunSites sites(out);
    for (size_t c = 0; c < kMemoryCategories; ++c) {
        out.eventCategories.emplace_back(toString(MemoryCategory(c)));
    }
    out.deviceTraces.resize(1);
    SnapshotDeviceTrace& events = out.deviceTraces[0];
    const size_t n = trace.size();
    events.action.reserve(n);
    events.address.reserve(n);
    events.bytes.reserve(n);
    events.stream.assign(n, 0);
    events.timeUs = trace.timeUs;
    events.stack.reserve(n);
    events.category.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        const bool alloc = trace.bytes[i] > 0;
        events.action.push_back(alloc ? SnapshotAction::Alloc : SnapshotAction::FreeCompleted);
        events.address.push_back(trace.address[i]);
        const int64_t bytes = trace.bytes[i];
        events.bytes.push_back(alloc ? bytes : (bytes == INT64_MIN ? INT64_MAX : -bytes));
        const int32_t op = i < trace.op.size() ? trace.op[i] : -1;
        events.stack.push_back(sites.stack(trace.path[i], op, trace));
        events.category.push_back(
            uint16_t(std::min<size_t>(trace.category[i], kMemoryCategories - 1) + 1));
    }
    for (const MemoryTrace::PhaseRange& range : trace.phases) {
        const uint32_t name = sites.string(std::string(phaseName(range.phase)) + ", step " +
                                           std::to_string(range.step));
        out.annotations.push_back({-1, range.startUs, true, name});
        out.annotations.push_back({-1, range.endUs, false, name});
    }
    return out;
}

RecordingSummary summarizeRunMemory(const MemoryTrace& trace, const std::string& source) {
    const SnapshotTimeline timeline = buildTimeline(memorySnapshotOfRun(trace, source), 0);
    RecordingSummary summary = summarizeTimeline(timeline, "stepscope-run");
    summary.deviceIndex.reset();
    summary.deviceLabel = trace.device;
    if (trace.devicePeakReserved) {
        summary.reservedPeakBytes = *trace.devicePeakReserved;
    } else if (!trace.reserved.empty()) {
        const int64_t peak = *std::max_element(trace.reserved.begin(), trace.reserved.end());
        if (peak > 0) {
            summary.reservedPeakBytes = peak;
        }
    }
    return summary;
}

}  // namespace stepscope
