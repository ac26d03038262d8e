#include "models/run_document.h"

#include <QCoreApplication>
#include <QFileInfo>

#include "models/snapshot_recording.h"

namespace stepscope::ui {

const std::vector<RankAnalysis>& TraceRank::all() const {
    static const std::vector<RankAnalysis> none;
    return ranks ? *ranks : none;
}

const RankAnalysis* TraceRank::shown() const {
    for (const RankAnalysis& analysis : all()) {
        if (analysis.rank == rank) {
            return &analysis;
        }
    }
    return nullptr;
}

RecordingKind kindOfRunFile(const RunResult& result) {
    if (result.origin.empty()) {
        return OurRun{};
    }
    return ForeignRun{};
}

Abilities RunDocument::abilities() const {
    return std::visit([](const auto& of) { return of.abilities; }, kind);
}

const SnapshotRecording* RunDocument::snapshot() const {
    const auto* device = std::get_if<SnapshotDevice>(&kind);
    return device ? device->recording.get() : nullptr;
}

std::shared_ptr<const SnapshotRecording> RunDocument::sharedSnapshot() const {
    const auto* device = std::get_if<SnapshotDevice>(&kind);
    return device ? device->recording : nullptr;
}

const TraceRank* RunDocument::trace() const {
    return std::get_if<TraceRank>(&kind);
}

QString RunDocument::ownTitle() const {
    const SnapshotRecording* recording = snapshot();
    return recording ? QCoreApplication::translate("SnapshotRecording",
                                                   "%1 · PyTorch memory snapshot · device %2")
                           .arg(QFileInfo(recording->path).fileName())
                           .arg(recording->device)
                     : QString();
}

QString RunDocument::recordingFile() const {
    const SnapshotRecording* recording = snapshot();
    return recording ? recording->path : QString();
}

QString defaultTitle(const RunResult& result) {
    const RunConfig& c = result.config;
    return QString("%1 · ctx %2 · %3 · %4 · %5")
        .arg(QString::fromStdString(c.model.name))
        .arg(c.contextLength)
        .arg(QString::fromStdString(toString(c.mode)),
             QString::fromStdString(toString(c.precision)),
             QString::fromStdString(toString(c.device)));
}

}  // namespace stepscope::ui
