#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

#include "analysis/snapshot_stacks.h"
#include "controllers/folder_contents.h"
#include "controllers/job_tracker.h"
#include "experiments/attention_benchmark.h"
#include "experiments/dtype_flow.h"
#include "files/file_kinds.h"
#include "models/run_document.h"
#include "results/collective_file.h"
#include "results/run_result.h"

class QMimeData;

namespace stepscope::ui {

struct OpenedPath;

// Opens what `stepscope` and `stepscope-cli` write, by kind, reading it off
// the UI thread: a run file, an attention file (attention.json, or its
// folder), a dtype flow (`stepscope-cli dtypes --json`), a sweep's folder
// (its run files; its sweep.csv or sweep.md stand for it) or a Slurm
// attention array's folder. Anything else, or a file that cannot be read, is
// a message naming the path and what was expected.
//
// Each open is a job, read on a worker thread: a 1M-event run file takes half
// a second to parse, and the window answers meanwhile. A newer open
// supersedes one under way, whose results are then dropped (dropped())
// instead of delivered, so the window shows what the user asked for last.
// Results come back on the UI thread through a queued call guarded against a
// window that has gone: one typed signal per path in the order asked, then
// finished().
class FileOpener final : public QObject {
    Q_OBJECT

public:
    explicit FileOpener(QObject* parent = nullptr);
    ~FileOpener() override;

    // Starts reading `paths` and returns the job's id.
    int open(const QStringList& paths);
    // Another device of the snapshot `document` shows (document.snapshot() set):
    // its timeline built off the UI thread, delivered by
    // snapshotDeviceOpened(). A newer request supersedes one under way; file
    // opens go on beside it.
    int openSnapshotDevice(int documentId, const RunDocument& document, int device);
    // Drops the results of every open under way (the window is closing).
    void cancel();
    int latestJob() const { return jobs_.latestJob(); }
    // The user's category rules, applied to each PyTorch memory snapshot
    // opened from now on (before Mosaic's).
    void setCategoryRules(const std::vector<CategoryRule>& rules) { rules_ = rules; }

    // Drag and drop: whether `mime` holds something to open, and the local
    // paths it names.
    // The kinds of core/files' table that open here, files then folders (a
    // torch.save file or a from_pretrained folder is what a run loads, not
    // what the app shows); the Open dialogs offer these.
    static const std::vector<FileKind>& kindsOpened();
    static bool acceptsDrop(const QMimeData* mime);
    static QStringList droppedPaths(const QMimeData* mime);

Q_SIGNALS:
    void started(int job, const QStringList& paths);
    // A run file, as a document with what its memory views draw prepared
    // (no id yet); the receiver may take it (move from it).
    void runOpened(const QString& path, std::shared_ptr<stepscope::ui::RunDocument> run);
    void attentionOpened(const QString& path, const std::vector<stepscope::AttentionPoint>& points);
    void dtypeFlowOpened(const QString& path, const std::vector<stepscope::DtypeRow>& rows);
    void collectiveOpened(const QString& path, const stepscope::CollectiveFile& file);
    // A sweep's folder; the receiver may take the run files' results.
    void sweepFolderOpened(std::shared_ptr<stepscope::ui::SweepFolderRead> folder);
    void attentionArrayOpened(const stepscope::ui::AttentionArrayRead& array);
    void openFailed(const QString& title, const QString& message);
    // Document `documentId`'s snapshot on the device asked for: a document
    // to take its place (the receiver may move from it).
    void snapshotDeviceOpened(int documentId, std::shared_ptr<stepscope::ui::RunDocument> run);
    // How far `job` is through a large file (a PyTorch memory snapshot), 0
    // to 100, now and then while it is read.
    void progress(int job, int percent);
    // After the signals of every path of `job`; `opened`: each path opened.
    void finished(int job, bool opened);
    // `job` was superseded by a newer open (or cancel()): nothing of it was
    // delivered.
    void dropped(int job);

private:
    void deliver(int job, std::vector<OpenedPath>& opened);

    JobTracker jobs_;
    std::vector<CategoryRule> rules_;
    JobTracker deviceJobs_;  // a snapshot's other device: apart, so that it supersedes no open
};

}  // namespace stepscope::ui
