#pragma once

// ui/models: data for the views, without widgets (the library
// stepscope_ui_models, tested without widgets). A run in the session (here),
// formats, run labels, the memory index, sweep chart data, the step table.
// Includes core/ and Qt Core/Gui only.

#include <QList>
#include <QPair>
#include <QString>

#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include "analysis/trace_analysis.h"
#include "results/run_result.h"

namespace stepscope::ui {

struct MemoryRunData;
struct SnapshotRecording;

// What a kind of recording can show beyond its result. Each kind below
// declares its own, so that a new kind (a distributed run of ours, next)
// says what it can do in one place, and the compiler refuses a kind that
// does not.
struct Abilities {
    // Its configuration is one of ours: the panel shows it and can run it again.
    bool config = false;
    // The memory estimator can predict it from its configuration.
    bool estimate = false;
    // Compared with other runs by the fields of its config that differ; a
    // recording without a config of ours is named by its title instead.
    bool comparesByConfig = false;
};

// A run StepScope made: here, with stepscope-cli, or as a sweep's point.
struct OurRun {
    static constexpr Abilities abilities{
        .config = true, .estimate = true, .comparesByConfig = true};
};

// A run file holding what PyTorch recorded (a snapshot's or a trace's
// document saved as a run file): its result, but neither its recording nor
// a configuration of ours.
struct ForeignRun {
    static constexpr Abilities abilities{};
};

// One device of a PyTorch memory snapshot: the file's stacks, its other
// devices and its record_function ranges (models/snapshot_recording.h).
struct SnapshotDevice {
    static constexpr Abilities abilities{};
    std::shared_ptr<const SnapshotRecording> recording;
};

// One rank of a PyTorch profiler trace (analysis/trace_run.h): HTA's analyses
// of every rank of its recording (one trace file: its rank; a folder of rank
// traces: each of them), shared by the ranks' documents.
struct TraceRank {
    static constexpr Abilities abilities{};
    std::shared_ptr<const std::vector<RankAnalysis>> ranks;
    int64_t rank = -1;

    // Every rank's analyses, in rank order.
    const std::vector<RankAnalysis>& all() const;
    size_t rankCount() const { return all().size(); }
    // The analyses of this rank; nullptr when the recording lacks it.
    const RankAnalysis* shown() const;
};

// What a document is. Set once by whoever makes it (the file opener for what
// it reads, the run list for runs made here and a sweep folder's points);
// views ask its abilities and never work it out from the result.
using RecordingKind = std::variant<OurRun, ForeignRun, SnapshotDevice, TraceRank>;

// The kind of a run read from a run file, by what the file says recorded it
// (RunResult::origin): ours, or one PyTorch recorded and the app saved.
RecordingKind kindOfRunFile(const RunResult& result);

// A run as the desktop app holds it: the result, what kind of recording it
// is, where it lives on disk (if anywhere) and a title for lists and legends.
// Views ask it what it can show (canShowConfig(), snapshot(), trace() …)
// rather than testing its fields.
struct RunDocument {
    int id = 0;  // unique in the session
    RunResult result;
    RecordingKind kind;  // a run of ours unless its maker says otherwise
    QString path;        // empty until saved or when made in this session
    QString title;
    bool modified = false;  // made or changed since last saved
    // A run under way: its steps still arrive, and what it traces (operators,
    // kernels, memory) comes with its result when it ends.
    bool live = false;
    // Run in this session (its config's code the user's own); otherwise read
    // from a file, whose code runs again only with the user's say-so.
    bool madeHere = false;
    // What the memory views draw of `result`, prepared where the run file was
    // read (off the UI thread); null for a run made here, whose views work it
    // out themselves. Views only read it.
    std::shared_ptr<MemoryRunData> memoryData;

    Abilities abilities() const;
    // A configuration of ours to show and run again; false for what PyTorch
    // recorded (a snapshot, a trace, or one saved as a run file).
    bool canShowConfig() const { return abilities().config; }
    // Its memory can be estimated from its configuration.
    bool canEstimate() const { return abilities().estimate; }
    // Named in comparisons by what differs in its config (else by its title).
    bool comparesByConfig() const { return abilities().comparesByConfig; }
    // What its result holds.
    bool hasSteps() const { return !result.steps.empty(); }
    bool hasMemory() const { return !result.memory.empty(); }

    // A PyTorch memory snapshot's device: its recording; nullptr otherwise.
    const SnapshotRecording* snapshot() const;
    // The same, shared, for work that outlives the document (another
    // device, new category rules); null otherwise.
    std::shared_ptr<const SnapshotRecording> sharedSnapshot() const;
    // A rank of a PyTorch profiler trace; nullptr otherwise.
    const TraceRank* trace() const;
    // A title of its own, kept in lists instead of one made from its config:
    // what recorded it and which part of the recording it is ("x.pickle ·
    // PyTorch memory snapshot · device 0", "r0.pt.trace.json · PyTorch
    // profiler trace · rank 0 of 2"); empty for a run of ours, whose config
    // names it. A recording of PyTorch's has no config of ours: its title
    // never borrows the panel's defaults.
    QString ownTitle() const;
    // What a recording PyTorch made is and holds, as name and value (its
    // source, file, ranks or device, the device's name, the steps found,
    // what it holds), and nothing it lacks; empty for a run of ours.
    QList<QPair<QString, QString>> recordingFacts() const;
    // One line for tooltips and exported charts' titles: a run of ours, its
    // whole config (configSummary); a recording of PyTorch's, its facts.
    QString summary() const;
    // The file its recording was read from when that is not `path`: a
    // snapshot's document has no path until saved, so that Save never writes
    // over the snapshot. Empty otherwise.
    QString recordingFile() const;
};

QString defaultTitle(const RunResult& result);

}  // namespace stepscope::ui
