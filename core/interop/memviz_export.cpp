#include "interop/memviz_export.h"

#include <stdexcept>

#include "util/pickle_writer.h"

namespace stepscope {

namespace {

// memory_viz colours entries by category, and needs an "unknown" one among them.
constexpr const char* kUnknown = "unknown";

void writeEntry(PickleWriter& out, const char* action, uint64_t address, int64_t size,
                int64_t timeUs, const char* category, const std::string& phase, int step,
                const std::string& path) {
    out.emptyDict();
    out.mark();
    out.text("action");
    out.text(action);
    out.text("addr");
    out.integer(int64_t(address));
    out.text("size");
    out.integer(size);
    out.text("stream");
    out.integer(0);
    out.text("time_us");
    out.integer(timeUs);
    out.text("category");
    out.text(category);
    out.text("frames");
    out.emptyList();
    out.mark();
    out.emptyDict();
    out.mark();
    out.text("filename");
    out.text(phase);  // memory_viz shows frames as "name filename:line"
    out.text("line");
    out.integer(step);
    out.text("name");
    out.text(path.empty() ? phase : path);
    out.setItems();
    out.appends();
    out.setItems();
}

// The segments: one per allocation still alive at the end, holding one block.
void writeSegments(PickleWriter& out, const std::vector<MemoryAllocation>& allocations) {
    out.text("segments");
    out.emptyList();
    out.mark();
    for (const MemoryAllocation& alive : allocations) {
        if (alive.endUs >= 0) {
            continue;
        }
        out.emptyDict();
        out.mark();
        out.text("device");
        out.integer(0);
        out.text("address");
        out.integer(int64_t(alive.address));
        out.text("total_size");
        out.integer(alive.bytes);
        out.text("allocated_size");
        out.integer(alive.bytes);
        out.text("active_size");
        out.integer(alive.bytes);
        out.text("stream");
        out.integer(0);
        out.text("segment_type");
        out.text("large");
        out.text("blocks");
        out.emptyList();
        out.mark();
        out.emptyDict();
        out.mark();
        out.text("address");
        out.integer(int64_t(alive.address));
        out.text("size");
        out.integer(alive.bytes);
        out.text("requested_size");
        out.integer(alive.bytes);
        out.text("state");
        out.text("active_allocated");
        out.text("frames");
        out.emptyList();
        out.setItems();
        out.appends();
        out.setItems();
    }
    out.appends();
}

// The device traces: device 0's allocations and frees in the order they happened.
void writeDeviceTraces(PickleWriter& out, const MemoryTrace& trace) {
    out.text("device_traces");
    out.emptyList();
    out.mark();
    out.emptyList();  // device 0
    out.mark();
    bool unknownSeen = false;
    for (size_t i = 0; i < trace.size(); ++i) {
        const bool alloc = trace.bytes[i] > 0;
        std::string path = trace.path[i] >= 0 ? trace.paths[size_t(trace.path[i])] : "";
        // The op that allocated, where recorded and not the path itself (backward's node).
        if (alloc && i < trace.op.size() && trace.op[i] >= 0 && trace.op[i] != trace.path[i]) {
            const std::string& op = trace.paths[size_t(trace.op[i])];
            path = path.empty() ? op : path + " · " + op;
        }
        const char* category = toString(MemoryCategory(trace.category[i]));
        writeEntry(out, alloc ? "alloc" : "free_completed", trace.address[i],
                   alloc ? trace.bytes[i] : -trace.bytes[i], int64_t(trace.timeUs[i]), category,
                   phaseName(trace.phase[i]), trace.step[i], path);
        unknownSeen = unknownSeen || std::string(category) == kUnknown;
    }
    if (!unknownSeen) {
        // An empty allocation and its free: the category list must hold "unknown".
        writeEntry(out, "alloc", 0, 0, 0, kUnknown, "setup", -1, "");
        writeEntry(out, "free_completed", 0, 0, 0, kUnknown, "setup", -1, "");
    }
    out.appends();
    out.appends();
}

}  // namespace

std::string memvizPickle(const MemoryTrace& trace) {
    if (trace.empty()) {
        throw std::invalid_argument("memviz: the run has no memory trace; make it with --memory");
    }
    const std::vector<MemoryAllocation> allocations = memoryAllocations(trace);
    PickleWriter out;
    out.protocol();
    out.emptyDict();
    out.mark();
    writeSegments(out, allocations);
    writeDeviceTraces(out, trace);
    out.setItems();
    out.stop();
    return out.bytes();
}

}  // namespace stepscope
