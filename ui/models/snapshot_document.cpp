#include "models/snapshot_document.h"

#include <utility>

#include "interop/snapshot_timeline.h"
#include "models/memory_run_data.h"
#include "models/run_document.h"

namespace stepscope::ui {

void categorizeSnapshot(RunDocument& document, std::shared_ptr<const MemorySnapshot> snapshot,
                        int device, const std::vector<CategoryRule>& rules) {
    const SnapshotTimeline timeline = buildTimeline(*snapshot, device, rules);
    auto origin = std::make_shared<SnapshotOrigin>();
    origin->snapshot = std::move(snapshot);
    origin->device = device;
    origin->reserved = reservedLineOfSnapshot(timeline);
    document.result.memory = memoryTraceOfSnapshot(timeline);
    document.memoryData = prepareMemoryRunData(document.result);
    document.snapshot = std::move(origin);
}

}  // namespace stepscope::ui
