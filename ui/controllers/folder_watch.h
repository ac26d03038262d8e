#pragma once

#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "controllers/folder_contents.h"
#include "controllers/job_tracker.h"
#include "models/run_document.h"

class QFileSystemWatcher;
class QTimer;

namespace stepscope::ui {

class RunList;

// Watches the sweep folder the Sweep tab shows and the Slurm attention array
// the Attention tab shows, while they fill elsewhere (a CLI sweep, an
// array's tasks), and reads what appears off the UI thread (a look still
// under way when the folder changes again is dropped). A sweep's run files
// join the run list (once: a run opened before is not listed twice).
class FolderWatch final : public QObject {
    Q_OBJECT

public:
    FolderWatch(RunList* runs, QObject* parent = nullptr);

    // Shows `read`'s folder from now on (the one shown before is let go when
    // it is another) and lists its run files, taking their results.
    void watchSweep(SweepFolderRead& read);
    void stopSweep();
    QString sweepDirectory() const { return sweepDir_; }
    // The sweep's points in its order: a Slurm array's plan, its points
    // still to come among them (no result, id 0), or else its run files.
    struct Point {
        RunConfig config;
        const RunResult* result = nullptr;
        int id = 0;
    };
    std::vector<Point> sweepPoints() const;

    // The attention array shown from now on, first read as `read` says.
    void watchAttentionArray(const AttentionArrayRead& read);

Q_SIGNALS:
    // Run files of the sweep shown joined the run list.
    void sweepPointsAdded();
    // What is wrong with the sweep's files now; empty when nothing is (any
    // more).
    void sweepProblem(const QString& text);
    void attentionArrayRead(const stepscope::ui::AttentionArrayRead& read);

private:
    void takeScan(SweepFolderScan& scan);
    void rescanSweep();
    void rescanAttention();

    RunList* runs_;

    QFileSystemWatcher* sweepWatcher_;
    QFileSystemWatcher* attentionWatcher_;
    QTimer* sweepRescan_;
    QString sweepDir_;
    std::map<QString, int> sweepFiles_;  // run file → its document
    UnreadableFiles sweepUnreadable_;
    std::vector<std::pair<QString, RunConfig>> sweepPlan_;
    QString attentionDir_;
    JobTracker sweepScans_;
    JobTracker attentionScans_;
};

}  // namespace stepscope::ui
