#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/snapshot_timeline.h"
#include "profile/memory_trace.h"

namespace stepscope {

// One device of a PyTorch snapshot as a run's memory trace, so the app's
// memory view (each allocation, the floor, sites, hover, the peak) draws it
// as it draws our runs. The timeline has already paired allocs with frees
// memory_viz's way, so each block gets an address of its own (its index + 1)
// and the trace's running sum is memory_viz's. Blocks alive before the trace
// are allocated at its first instant. A block's path is its site (the first
// user frame), with no op. Categories by memoryCategoryOfSnapshot. Phases
// stay setup (a snapshot has no steps); times
// count from the trace's first event. Reserved follows the segment events
// where the trace has them, else 0.
MemoryTrace memoryTraceOfSnapshot(const SnapshotTimeline& timeline);

// A snapshot's category as the app's Memory view and the CLI name it:
// parameter → parameters, activation → activations, backward → gradients
// (Mosaic's "made in backward"), optimizer → optimizer_state, unknown →
// other; one of our own names (a user's rule, StepScope's own export) →
// itself; any other name → other.
MemoryCategory memoryCategoryOfSnapshot(const std::string& name);

// Reserved memory as a step line: the bytes the device's segments hold from
// each time on (µs from the trace's first event, as memoryTraceOfSnapshot
// counts), a point at the first instant and one at each segment event that
// changes them. The trace's allocs and frees carry the reserved bytes too,
// but a segment_free (empty_cache) between them would move the line late.
// Empty when the trace has no segment events: the reserved memory over time
// is then unknown.
struct ReservedLine {
    std::vector<double> timeUs;
    std::vector<int64_t> bytes;
    bool empty() const { return timeUs.empty(); }
};
ReservedLine reservedLineOfSnapshot(const SnapshotTimeline& timeline);

}  // namespace stepscope
