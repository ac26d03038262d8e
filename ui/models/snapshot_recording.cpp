#include "models/snapshot_recording.h"

namespace stepscope::ui {

uint32_t SnapshotRecording::stackOf(const MemoryAllocation& allocation) const {
    // memoryTraceOfSnapshot gives block b the address b + 1.
    const uint64_t block = allocation.address - 1;
    return allocation.address > 0 && block < blockStacks.size() ? blockStacks[size_t(block)]
                                                                : kNoStack;
}

size_t SnapshotRecording::frameCount(uint32_t stack) const {
    return snapshot ? snapshot->stack(stack).size() : 0;
}

size_t SnapshotRecording::shownFrameCount(uint32_t stack) const {
    size_t shown = 0;
    if (snapshot) {
        for (const uint32_t id : snapshot->stack(stack)) {
            const SnapshotFrame& frame = snapshot->frames[id];
            shown +=
                memvizShowsFrame(snapshot->string(frame.name), snapshot->string(frame.filename));
        }
    }
    return shown;
}

QString SnapshotRecording::stackText(uint32_t stack, bool allFrames) const {
    return snapshot ? QString::fromStdString(formatStack(*snapshot, stack, allFrames)) : QString();
}

QString SnapshotRecording::bandName(const TimelineBand& band) const {
    return snapshot ? QString::fromStdString(std::string(snapshot->string(band.name))) : QString();
}

size_t SnapshotRecording::eventCount() const {
    for (const auto& [held, events] : devices) {
        if (held == device) {
            return events;
        }
    }
    return 0;
}

}  // namespace stepscope::ui
