#include "models/snapshot_recording.h"

#include <QCoreApplication>
#include <QFileInfo>

#include "models/memory_run_data.h"
#include "models/run_document.h"

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

std::shared_ptr<RunDocument> snapshotDocument(std::shared_ptr<const MemorySnapshot> snapshot,
                                              const QString& path, int device,
                                              const std::vector<CategoryRule>& rules) {
    auto recording = std::make_shared<SnapshotRecording>();
    auto document = std::make_shared<RunDocument>();
    {
        // The timeline goes before what the memory views draw is prepared:
        // with both, a million events' peak would be some 50 MB higher.
        const SnapshotTimeline timeline = buildTimeline(*snapshot, device, rules);
        recording->blockStacks.reserve(timeline.blocks.size());
        for (const TimelineBlock& block : timeline.blocks) {
            recording->blockStacks.push_back(block.stack);
        }
        recording->bands = timeline.bands;
        for (TimelineBand& band : recording->bands) {
            band.startUs -= timeline.firstTimeUs;
            band.endUs -= timeline.firstTimeUs;
        }
        recording->reserved = reservedLineOfSnapshot(timeline);
        document->result.memory = memoryTraceOfSnapshot(timeline);
    }
    recording->device = device;
    recording->rules = rules;
    for (const int held : snapshotDevices(*snapshot)) {
        const size_t events = size_t(held) < snapshot->deviceTraces.size()
                                  ? snapshot->deviceTraces[size_t(held)].size()
                                  : 0;
        recording->devices.emplace_back(held, events);
    }
    recording->snapshot = std::move(snapshot);
    recording->path = path;
    document->ownTitle =
        QCoreApplication::translate("SnapshotRecording", "%1 · PyTorch memory snapshot · device %2")
            .arg(QFileInfo(path).fileName())
            .arg(device);
    document->snapshot = std::move(recording);
    document->memoryData = prepareMemoryRunData(document->result);
    return document;
}

}  // namespace stepscope::ui
