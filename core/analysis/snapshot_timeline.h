#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/snapshot_stacks.h"
#include "interop/memory_snapshot.h"

namespace stepscope {

// The figures memory_viz's Active Memory Timeline draws for one device of a
// snapshot, computed its way (process_alloc_data in MemoryViz.js):
// - "alloc" opens a block; "free_completed" (or an older snapshot's "free")
//   closes it and takes away the alloc's size; "free_requested" only marks it;
// - a free whose block has no alloc in the trace, and a block still
//   "active_allocated" in the segments that no alloc in the trace opened,
//   were alive before the trace began: they count from its first instant;
// - an alloc at an address already open leaves the earlier block open to
//   the end, as memory_viz does.
// Reserved memory follows segment_alloc/segment_free and segment_map/
// segment_unmap; OOMs and record_function ranges are kept for the views.

inline constexpr int32_t kBeforeTrace = -1;        // alive before the trace's first event
inline constexpr int32_t kAliveAtEnd = INT32_MAX;  // still alive after its last

struct TimelineBlock {
    uint64_t address;
    int64_t bytes;
    int32_t allocEvent;          // index into the device's trace, or kBeforeTrace
    int32_t freeEvent;           // the event that closed it, or kAliveAtEnd
    int32_t freeRequestedEvent;  // -1 when none
    uint32_t stack;              // the alloc's; the free's or the segment block's when alive before
    uint16_t category;           // index into SnapshotTimeline::categories
    uint32_t site;               // index into SnapshotTimeline::sites

    // Alive just after `event` (kBeforeTrace: at the trace's first instant).
    bool aliveAfter(int32_t event) const { return allocEvent <= event && event < freeEvent; }
};

struct TimelineOom {
    int32_t event;
    double timeUs;
    int64_t requestedBytes;
    uint64_t deviceFreeBytes;
};

// A record_function range of the device (or of none), like our phase bands.
struct TimelineBand {
    uint32_t name;  // index into MemorySnapshot::strings
    double startUs;
    double endUs;
    int depth;    // ranges open around it when it started
    bool closed;  // false: no END, so it runs to the trace's last event
};

// How StepScope counts a snapshot's device, everywhere (the CLI, the Memory
// tab's caption and its device box), as memory_viz does:
// - an event is a line of memory_viz's Allocator State History: an entry of
//   the device's trace, except that a free_requested followed at once by the
//   free_completed of the same address is one event ("free");
// - an allocation is a block of its Active Memory Timeline: each alloc in
//   the trace, each free of a block no alloc in the trace made, and each
//   block the segments hold active_allocated at the end that no alloc in the
//   trace left open (SnapshotTimeline::blocks).
size_t memvizEventCount(const SnapshotDeviceTrace& trace);

struct SnapshotTimeline {
    int device = 0;
    size_t events = 0;        // entries in the device's trace, of every action (per-event arrays)
    size_t memvizEvents = 0;  // events as memory_viz counts them (memvizEventCount)
    size_t allocs = 0;        // alloc entries
    size_t frees = 0;         // free_completed and free
    double firstTimeUs = 0;   // the first event's time_us (times here are the file's)
    std::vector<double> timeUs;           // per event
    std::vector<int64_t> allocatedAfter;  // per event: bytes allocated just after it
    std::vector<TimelineBlock> blocks;    // the allocations, in the order memory_viz numbers them
    int64_t aliveBeforeBytes = 0;
    int64_t peakBytes = 0;
    int32_t peakEvent = kBeforeTrace;  // the first event that reaches the peak
    double peakTimeUs = 0;
    int64_t endBytes = 0;
    // Reserved memory: per event where the trace has segment events, else
    // only the segments' total (and no peak).
    bool hasSegmentEvents = false;
    int64_t reservedBeforeBytes = 0;
    std::vector<int64_t> reservedAfter;
    std::optional<int64_t> reservedPeakBytes;
    std::optional<int64_t> reservedAtPeakBytes;  // less peakBytes: the fragmentation at the peak
    std::vector<TimelineOom> ooms;
    std::vector<TimelineBand> bands;  // by start
    std::vector<std::string> categories;
    std::vector<std::string> sites;
    std::vector<uint32_t> aliveAtPeak;  // indices into blocks, largest first
};

// Devices the snapshot holds: those with a trace or a segment.
std::vector<int> snapshotDevices(const MemorySnapshot& snapshot);
// The device with the most trace events; ties go to the one with more
// reserved bytes in its segments, then to the lower index. 0 when none.
int busiestDevice(const MemorySnapshot& snapshot);

// Throws std::invalid_argument for a device the snapshot does not hold, or
// a rule whose pattern is not a regex; SnapshotError (TooLarge) when the
// file's sizes add up past what 64 bits hold.
SnapshotTimeline buildTimeline(const MemorySnapshot& snapshot, int device,
                               const std::vector<CategoryRule>& rules = {});

}  // namespace stepscope
