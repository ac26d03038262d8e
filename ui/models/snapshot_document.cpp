#include "models/snapshot_document.h"

#include "analysis/snapshot_timeline.h"
#include "models/memory_run_data.h"
#include "models/run_document.h"
#include "models/snapshot_recording.h"

namespace stepscope::ui {

namespace {

// Each stage's share of a document, as a million events take them: the
// timeline about 37 ms, the trace 23, what the views draw 70.
constexpr double kTimelineShare = 0.28;
constexpr double kTraceShare = 0.46;

}  // namespace

std::shared_ptr<RunDocument> snapshotDocument(std::shared_ptr<const MemorySnapshot> snapshot,
                                              const QString& path, int device,
                                              const std::vector<CategoryRule>& rules,
                                              const SnapshotProgress& progress) {
    const auto goOn = [&progress](double fraction) { return !progress || progress(fraction); };
    auto recording = std::make_shared<SnapshotRecording>();
    auto document = std::make_shared<RunDocument>();
    {
        // The timeline goes before what the memory views draw is prepared:
        // with both, a million events' peak would be some 50 MB higher.
        const SnapshotTimeline timeline = buildTimeline(*snapshot, device, rules);
        if (!goOn(kTimelineShare)) {
            return nullptr;
        }
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
    if (!goOn(kTraceShare)) {
        return nullptr;
    }
    document->result.origin = kOriginMemorySnapshot;
    recording->device = device;
    recording->rules = rules;
    for (const int held : snapshotDevices(*snapshot)) {
        const size_t events = size_t(held) < snapshot->deviceTraces.size()
                                  ? memvizEventCount(snapshot->deviceTraces[size_t(held)])
                                  : 0;
        recording->devices.emplace_back(held, events);
    }
    recording->snapshot = std::move(snapshot);
    recording->path = path;
    document->kind = SnapshotDevice{std::move(recording)};
    std::function<void(double)> told;
    if (progress) {  // past the point of stopping: the rest is reported only
        told = [&progress](double fraction) {
            progress(kTraceShare + (1 - kTraceShare) * fraction);
        };
    }
    document->memoryData = prepareMemoryRunData(document->result, told);
    return document;
}

}  // namespace stepscope::ui
