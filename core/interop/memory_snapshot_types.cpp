#include "interop/memory_snapshot_types.h"

namespace stepscope {

const char* toString(SnapshotAction action) {
    switch (action) {
        case SnapshotAction::Alloc:
            return "alloc";
        case SnapshotAction::FreeRequested:
            return "free_requested";
        case SnapshotAction::FreeCompleted:
            return "free_completed";
        case SnapshotAction::Free:
            return "free";
        case SnapshotAction::SegmentAlloc:
            return "segment_alloc";
        case SnapshotAction::SegmentFree:
            return "segment_free";
        case SnapshotAction::SegmentMap:
            return "segment_map";
        case SnapshotAction::SegmentUnmap:
            return "segment_unmap";
        case SnapshotAction::Oom:
            return "oom";
        case SnapshotAction::Snapshot:
            return "snapshot";
        case SnapshotAction::Other:
            break;
    }
    return "other";
}

void SnapshotDeviceTrace::reserve(size_t events) {
    action.reserve(events);
    address.reserve(events);
    bytes.reserve(events);
    stream.reserve(events);
    timeUs.reserve(events);
    stack.reserve(events);
}

}  // namespace stepscope
