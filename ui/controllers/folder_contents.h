#pragma once

#include <QDateTime>
#include <QString>
#include <QStringList>

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "experiments/attention_benchmark.h"
#include "results/run_result.h"

namespace stepscope::ui {

// What a sweep's folder and a Slurm attention array's folder hold, read
// without widgets so that it runs off the UI thread (ui/file_opener.h opens
// them, ui/folder_watch.h reads them again as they fill).

// The points a Slurm array's folder will hold, in the array's order: each
// task's run file (absolute) and the config it runs. Empty for a folder that
// is no sweep array. Throws for an array file that cannot be read.
std::vector<std::pair<QString, RunConfig>> slurmSweepPlan(const QString& directory);

// A sweep's points in its order: models by size, then context, mode and
// precision; the file name (numbers by value) for the rest.
bool sweepPointBefore(const RunResult& a, const QString& aFile, const RunResult& b,
                      const QString& bFile);

// A run file that could not be read, as last seen: its modification time and
// why (empty: not a run file yet, as a writer that does not rename into place
// leaves it). Read again once its modification time changes.
struct UnreadableFile {
    QDateTime modified;
    QString why;
};
using UnreadableFiles = std::map<QString, UnreadableFile>;

struct SweepPoint {
    QString file;  // absolute
    RunResult result;
};

// One look at a sweep's folder (and its points/ subfolder, where a Slurm
// array's tasks write).
struct SweepFolderScan {
    bool folderGone = false;
    std::vector<SweepPoint> fresh;  // run files not `known` before, in the sweep's order
    UnreadableFiles unreadable;     // every file that could not be read, after this look
    QStringList problems;           // why, for each unreadable run file
    bool hasPointsFolder = false;
};

// Reads the run files of `directory` that are neither `known` nor unchanged
// since `unreadable` said they could not be read.
SweepFolderScan scanSweepFolder(const QString& directory, const std::set<QString>& known,
                                const UnreadableFiles& unreadable);

// A sweep's folder as it opens: where, its Slurm plan (empty for a sweep made
// elsewhere) and its points so far.
struct SweepFolderRead {
    QString directory;  // absolute, clean
    std::vector<std::pair<QString, RunConfig>> plan;
    QString planError;  // the array file could not be read: said, the folder still opens
    SweepFolderScan scan;
};
SweepFolderRead readSweepFolder(const QString& directory);

// A Slurm attention array's folder before --collect: the points its tasks
// have written, and a line saying how many of how many.
struct AttentionArrayRead {
    QString directory;  // absolute, clean
    std::vector<AttentionPoint> points;
    QString status;
    QString error;  // the array could not be read: nothing else is set
};
AttentionArrayRead readAttentionArray(const QString& directory);

}  // namespace stepscope::ui
