#pragma once

#include <QString>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "analysis/snapshot_as_run.h"
#include "analysis/snapshot_stacks.h"
#include "analysis/snapshot_timeline.h"
#include "interop/memory_snapshot.h"
#include "profile/memory_trace.h"

namespace stepscope::ui {

// What a document opened from a PyTorch memory snapshot keeps of the file
// beyond its memory trace: the snapshot itself (its interned strings, frames
// and stacks, and every device's trace, so another device can be shown
// without reading the file again), shared by the documents made from it;
// and per allocation of the trace only the index of its stack. A million
// allocations hold four million bytes of indices, not a million stacks.
struct SnapshotRecording {
    std::shared_ptr<const MemorySnapshot> snapshot;
    // The file it was read from. Not the document's path: that stays empty,
    // so that Save asks where to write a run file instead of writing over
    // the snapshot.
    QString path;
    int device = 0;
    // Reserved memory over time; empty when the trace has no segment events.
    ReservedLine reserved;
    // The user's category rules it was categorised by.
    std::vector<CategoryRule> rules;
    // Each device the snapshot holds, and its events as memory_viz counts
    // them (memvizEventCount: what the CLI says too).
    std::vector<std::pair<int, size_t>> devices;
    // Per block of the device's timeline (a trace address − 1, as
    // memoryTraceOfSnapshot numbers them): the stack the block was made with.
    std::vector<uint32_t> blockStacks;
    // record_function ranges, times from the trace's first event as the
    // trace counts them; names in snapshot->strings.
    std::vector<TimelineBand> bands;

    // The stack of one of the trace's allocations, kNoStack when none.
    uint32_t stackOf(const MemoryAllocation& allocation) const;
    size_t frameCount(uint32_t stack) const;
    // Frames memory_viz shows of it (formatStack's filter).
    size_t shownFrameCount(uint32_t stack) const;
    // formatStack: memory_viz's lines ("file:line:name", innermost first),
    // PyTorch's internal frames left out unless `allFrames`.
    QString stackText(uint32_t stack, bool allFrames) const;
    QString bandName(const TimelineBand& band) const;
    // The shown device's events, as `devices` counts them.
    size_t eventCount() const;
};

}  // namespace stepscope::ui
