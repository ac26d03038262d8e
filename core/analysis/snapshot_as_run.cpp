#include "analysis/snapshot_as_run.h"

#include <string>
#include <unordered_map>

namespace stepscope {

namespace {

// What each event of the device's trace does to the blocks: the block it
// opens or closes, -1 for neither.
struct EventBlocks {
    std::vector<int32_t> opens;
    std::vector<int32_t> closes;
};

EventBlocks eventBlocks(const SnapshotTimeline& timeline) {
    EventBlocks out{std::vector<int32_t>(timeline.events, -1),
                    std::vector<int32_t>(timeline.events, -1)};
    for (size_t b = 0; b < timeline.blocks.size(); ++b) {
        const TimelineBlock& block = timeline.blocks[b];
        if (block.allocEvent >= 0 && size_t(block.allocEvent) < timeline.events) {
            out.opens[size_t(block.allocEvent)] = int32_t(b);
        }
        if (block.freeEvent >= 0 && size_t(block.freeEvent) < timeline.events) {
            out.closes[size_t(block.freeEvent)] = int32_t(b);
        }
    }
    return out;
}

}  // namespace

MemoryCategory memoryCategoryOfSnapshot(const std::string& name) {
    static const std::unordered_map<std::string, MemoryCategory> kMosaic = {
        {"parameter", MemoryCategory::Parameters},
        {"activation", MemoryCategory::Activations},
        {"backward", MemoryCategory::Gradients},
        {"optimizer", MemoryCategory::OptimizerState},
    };
    if (const auto found = kMosaic.find(name); found != kMosaic.end()) {
        return found->second;
    }
    for (size_t c = 0; c < kMemoryCategories; ++c) {
        if (name == toString(MemoryCategory(c))) {
            return MemoryCategory(c);
        }
    }
    return MemoryCategory::Other;
}

MemoryTrace memoryTraceOfSnapshot(const SnapshotTimeline& timeline) {
    MemoryTrace trace;
    trace.device = "cuda:" + std::to_string(timeline.device);
    trace.paths = timeline.sites;
    std::vector<uint8_t> categories;
    for (const std::string& name : timeline.categories) {
        categories.push_back(uint8_t(memoryCategoryOfSnapshot(name)));
    }
    const EventBlocks blocks = eventBlocks(timeline);
    size_t events = 0;  // an alloc and a free per block, where the trace holds them
    for (const TimelineBlock& block : timeline.blocks) {
        events += size_t(block.allocEvent == kBeforeTrace ||
                         (block.allocEvent >= 0 && size_t(block.allocEvent) < timeline.events)) +
                  size_t(block.freeEvent >= 0 && size_t(block.freeEvent) < timeline.events);
    }
    trace.reserve(events);
    int64_t allocated = 0;
    const auto push = [&](size_t block, bool alloc, double timeUs, int64_t reserved) {
        const TimelineBlock& b = timeline.blocks[block];
        allocated += alloc ? b.bytes : -b.bytes;
        trace.timeUs.push_back(timeUs - timeline.firstTimeUs);
        trace.address.push_back(uint64_t(block) + 1);
        trace.bytes.push_back(alloc ? b.bytes : -b.bytes);
        trace.category.push_back(categories[b.category]);
        trace.phase.push_back(0);
        trace.step.push_back(-1);
        trace.path.push_back(int32_t(b.site));
        trace.op.push_back(-1);
        trace.allocated.push_back(allocated);
        trace.reserved.push_back(reserved);
    };
    const int64_t reservedBefore = timeline.hasSegmentEvents ? timeline.reservedBeforeBytes : 0;
    for (size_t b = 0; b < timeline.blocks.size(); ++b) {
        if (timeline.blocks[b].allocEvent == kBeforeTrace) {
            push(b, true, timeline.firstTimeUs, reservedBefore);
        }
    }
    for (size_t e = 0; e < timeline.events; ++e) {
        const int64_t reserved = timeline.hasSegmentEvents ? timeline.reservedAfter[e] : 0;
        if (blocks.closes[e] >= 0) {
            push(size_t(blocks.closes[e]), false, timeline.timeUs[e], reserved);
        }
        if (blocks.opens[e] >= 0) {
            push(size_t(blocks.opens[e]), true, timeline.timeUs[e], reserved);
        }
    }
    return trace;
}

ReservedLine reservedLineOfSnapshot(const SnapshotTimeline& timeline) {
    ReservedLine line;
    if (!timeline.hasSegmentEvents) {
        return line;
    }
    line.timeUs.push_back(0);
    line.bytes.push_back(timeline.reservedBeforeBytes);
    for (size_t e = 0; e < timeline.events && e < timeline.reservedAfter.size(); ++e) {
        if (timeline.reservedAfter[e] != line.bytes.back()) {
            line.timeUs.push_back(timeline.timeUs[e] - timeline.firstTimeUs);
            line.bytes.push_back(timeline.reservedAfter[e]);
        }
    }
    return line;
}

}  // namespace stepscope
