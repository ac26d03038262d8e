#include "models/run_document.h"

#include <QCoreApplication>
#include <QFileInfo>

#include "models/format.h"
#include "models/run_label.h"
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

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("RunDocument", text);
}

QString fileName(const std::string& path) {
    return QFileInfo(QString::fromStdString(path)).fileName();
}

// What recorded a run file StepScope did not make (RunResult::origin).
QString originName(const std::string& origin) {
    return origin == kOriginMemorySnapshot  ? tr("PyTorch memory snapshot")
           : origin == kOriginProfilerTrace ? tr("PyTorch profiler trace")
                                            : tr("PyTorch recording");
}

// "rank 0 of 2", or "rank 3" for a trace of one rank.
QString rankText(const TraceRank& trace) {
    return trace.rankCount() > 1
               ? tr("rank %1 of %2").arg(trace.rank).arg(qsizetype(trace.rankCount()))
               : tr("rank %1").arg(trace.rank);
}

QString stepsFound(const RunResult& result, bool profilerSteps) {
    if (result.steps.empty()) {
        return profilerSteps ? tr("none (the trace has no ProfilerStep# ranges)") : tr("none");
    }
    return countText(qsizetype(result.steps.size()),
                     profilerSteps ? tr("profiler step") : tr("step"));
}

// What a recording's result holds, by the tabs that show it.
QString holdings(const RunResult& result) {
    QStringList held;
    if (!result.kernels.empty()) {
        held << tr("kernels");
    }
    if (!result.operators.empty()) {
        held << tr("host operators");
    }
    if (result.timeline.step >= 0 && !result.timeline.spans.empty()) {
        held << tr("a timeline");
    }
    if (!result.memory.empty()) {
        held << tr("memory over time");
    }
    return held.isEmpty() ? tr("nothing StepScope shows") : held.join(", ");
}

}  // namespace

QString RunDocument::ownTitle() const {
    if (const SnapshotRecording* recording = snapshot()) {
        return QCoreApplication::translate("SnapshotRecording",
                                           "%1 · PyTorch memory snapshot · device %2")
            .arg(QFileInfo(recording->path).fileName())
            .arg(recording->device);
    }
    if (const TraceRank* rank = trace()) {
        const RankAnalysis* shown = rank->shown();
        const QString file = shown ? fileName(shown->file) : QString();
        return (file.isEmpty() ? QString() : file + " · ") + tr("PyTorch profiler trace") + " · " +
               rankText(*rank);
    }
    if (std::holds_alternative<ForeignRun>(kind)) {
        const QString file = QFileInfo(path).fileName();
        return (file.isEmpty() ? QString() : file + " · ") + originName(result.origin);
    }
    return QString();
}

QList<QPair<QString, QString>> RunDocument::recordingFacts() const {
    QList<QPair<QString, QString>> facts;
    const QString device = QString::fromStdString(result.environment.deviceName);
    if (const SnapshotRecording* recording = snapshot()) {
        QStringList devices;
        for (const auto& [held, events] : recording->devices) {
            devices << QString::number(held);
        }
        facts << qMakePair(tr("Source"), tr("PyTorch memory snapshot"))
              << qMakePair(tr("File"), QFileInfo(recording->path).fileName())
              << qMakePair(tr("Device"), devices.size() > 1 ? tr("%1 (the file holds devices %2)")
                                                                  .arg(recording->device)
                                                                  .arg(devices.join(", "))
                                                            : QString::number(recording->device))
              << qMakePair(tr("Steps found"), tr("none (it records allocations)"));
    } else if (const TraceRank* rank = trace()) {
        const RankAnalysis* shown = rank->shown();
        facts << qMakePair(tr("Source"), tr("PyTorch profiler trace (torch.profiler)"))
              << qMakePair(tr("File"), shown ? fileName(shown->file) : QString())
              << qMakePair(tr("Rank"), rank->rankCount() > 1
                                           ? tr("%1 of %2 (a run per rank in the list)")
                                                 .arg(rank->rank)
                                                 .arg(qsizetype(rank->rankCount()))
                                           : QString::number(rank->rank))
              << qMakePair(tr("Device"), device.isEmpty() ? tr("none (host only)") : device)
              << qMakePair(tr("Steps found"), stepsFound(result, true));
    } else if (std::holds_alternative<ForeignRun>(kind)) {
        facts << qMakePair(tr("Source"),
                           tr("%1, saved as a run file").arg(originName(result.origin)))
              << qMakePair(tr("File"), QFileInfo(path).fileName());
        if (!device.isEmpty()) {
            facts << qMakePair(tr("Device"), device);
        }
        facts << qMakePair(tr("Steps found"),
                           stepsFound(result, result.origin == kOriginProfilerTrace));
    } else {
        return facts;
    }
    facts << qMakePair(tr("Holds"), holdings(result));
    return facts;
}

QString RunDocument::summary() const {
    if (std::holds_alternative<OurRun>(kind)) {
        return configSummary(result.config);
    }
    QStringList parts;
    for (const auto& [name, value] : recordingFacts()) {
        parts << name + ": " + value;
    }
    return parts.join(" · ");
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
