#pragma once

#include <memory>
#include <vector>

#include "interop/memory_snapshot.h"
#include "interop/snapshot_as_run.h"
#include "interop/snapshot_stacks.h"

namespace stepscope::ui {

struct RunDocument;

// A PyTorch memory snapshot opened as a run: the snapshot itself, kept so
// the user's category rules can be applied again without reading the file,
// the device shown, and its reserved memory over time.
struct SnapshotOrigin {
    std::shared_ptr<const MemorySnapshot> snapshot;
    int device = 0;
    ReservedLine reserved;  // empty: the trace has no segment events
};

// Makes `document`'s memory trace from `device` of `snapshot`, categorised
// by `rules` first, with what the memory views draw prepared and its
// origin kept. Throws as buildTimeline does.
void categorizeSnapshot(RunDocument& document, std::shared_ptr<const MemorySnapshot> snapshot,
                        int device, const std::vector<CategoryRule>& rules);

}  // namespace stepscope::ui
