#pragma once

#include <string>

#include "analysis/recording_summary.h"
#include "interop/memory_snapshot.h"

namespace stepscope {

struct MemoryTrace;

// A StepScope run's memory trace as a one-device snapshot, so the timeline,
// the summary and the diff treat both kinds of recording alike: each event
// an "alloc" or "free_completed" whose one frame is its site (module path ·
// op, no filename), its category the run's own ("parameters", ...), and the
// run's phases as record_function ranges ("forward, step 2").
MemorySnapshot memorySnapshotOfRun(const MemoryTrace& trace, const std::string& source);

// The summary of a run's memory: source "stepscope-run", the run's device
// label ("cuda:0", "cpu"), reserved_peak_bytes from the CUDA allocator's own
// peak where the run recorded one.
RecordingSummary summarizeRunMemory(const MemoryTrace& trace, const std::string& source);

}  // namespace stepscope
