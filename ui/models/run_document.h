#pragma once

// ui/models: data for the views, without widgets (the library
// stepscope_ui_models, tested without widgets). A run in the session (here),
// formats, run labels, the memory index, sweep chart data, the step table.
// Includes core/ and Qt Core/Gui only.

#include <QString>

#include <memory>
#include <vector>

#include "analysis/trace_analysis.h"
#include "results/run_result.h"

namespace stepscope::ui {

struct MemoryRunData;
struct SnapshotRecording;

// A run as the desktop app holds it: the result, where it lives on disk (if
// anywhere) and a title for lists and legends.
struct RunDocument {
    int id = 0;  // unique in the session
    RunResult result;
    QString path;  // empty until saved or when made in this session
    QString title;
    // A recording that is not a run of ours (a PyTorch memory snapshot): the
    // title it keeps, instead of one made from its (default) config.
    QString ownTitle;
    bool modified = false;  // made or changed since last saved
    // What the memory views draw of `result`, prepared where the run file was
    // read (off the UI thread); null for a run made here, whose views work it
    // out themselves. Views only read it.
    std::shared_ptr<MemoryRunData> memoryData;
    // A PyTorch profiler trace opened as a run (analysis/trace_run.h): HTA's
    // analyses of every rank of its recording (one file, or a folder of rank
    // traces), shared by the ranks' documents, and which rank this one is.
    std::shared_ptr<const std::vector<RankAnalysis>> traceRanks;
    int64_t traceRank = -1;
    // A PyTorch memory snapshot: the file's stacks, its other devices and its
    // record_function ranges (models/snapshot_recording.h); null otherwise.
    std::shared_ptr<const SnapshotRecording> snapshot;

    // Recorded by PyTorch, not run by StepScope (a snapshot or a trace): its
    // config is a default with no model, so it has no configuration to show,
    // run again or compare.
    bool recordedElsewhere() const { return result.config.model.dModel == 0; }
};

QString defaultTitle(const RunResult& result);

}  // namespace stepscope::ui
