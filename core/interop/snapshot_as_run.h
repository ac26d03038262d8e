#pragma once

#include "interop/snapshot_timeline.h"
#include "profile/memory_trace.h"

namespace stepscope {

// One device of a PyTorch snapshot as a run's memory trace, so the app's
// memory view (each allocation, the floor, sites, hover, the peak) draws it
// as it draws our runs. The timeline has already paired allocs with frees
// memory_viz's way, so each block gets an address of its own (its index + 1)
// and the trace's running sum is memory_viz's. Blocks alive before the trace
// are allocated at its first instant. A block's path is its site (the first
// user frame), with no op. Categories by name: parameter → parameters,
// activation → activations, backward → gradients (Mosaic's "made in
// backward"), optimizer → optimizer_state, one of our own names → itself,
// anything else → other. Phases stay setup (a snapshot has no steps); times
// count from the trace's first event. Reserved follows the segment events
// where the trace has them, else 0.
MemoryTrace memoryTraceOfSnapshot(const SnapshotTimeline& timeline);

}  // namespace stepscope
