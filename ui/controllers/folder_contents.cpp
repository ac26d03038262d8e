#include "controllers/folder_contents.h"

#include <QCollator>
#include <QDir>
#include <QFileInfo>
#include <QObject>

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "cluster/slurm_array.h"
#include "cluster/slurm_attention.h"
#include "files/file_kinds.h"
#include "results/run_file.h"

namespace stepscope::ui {

std::vector<std::pair<QString, RunConfig>> slurmSweepPlan(const QString& directory) {
    std::vector<std::pair<QString, RunConfig>> plan;
    const auto array = readSlurmArray(directory.toStdString());
    if (!array || array->kind != "sweep") {
        return plan;
    }
    const QDir dir(directory);
    for (const SlurmTask& task : array->tasks) {
        plan.emplace_back(
            QDir::cleanPath(dir.absoluteFilePath(QString::fromStdString(task.resultFile))),
            runConfigFromJson(task.inputText));
    }
    return plan;
}

bool sweepPointBefore(const RunResult& a, const QString& aFile, const RunResult& b,
                      const QString& bFile) {
    const auto key = [](const RunResult& r) {
        return std::tuple(r.parameterCount, r.config.contextLength, int(r.config.mode),
                          int(r.config.precision));
    };
    if (key(a) != key(b)) {
        return key(a) < key(b);
    }
    QCollator collator;
    collator.setNumericMode(true);
    return collator.compare(QFileInfo(aFile).fileName(), QFileInfo(bFile).fileName()) < 0;
}

SweepFolderScan scanSweepFolder(const QString& directory, const std::set<QString>& known,
                                const UnreadableFiles& unreadable) {
    SweepFolderScan scan;
    scan.unreadable = unreadable;
    const QDir dir(directory);
    if (!dir.exists()) {
        scan.folderGone = true;
        return scan;
    }
    // A Slurm array's tasks write into points/, which appears with the first.
    QFileInfoList candidates = dir.entryInfoList({"*.json"}, QDir::Files, QDir::Name);
    if (const QString points = dir.filePath("points"); QFileInfo(points).isDir()) {
        scan.hasPointsFolder = true;
        candidates += QDir(points).entryInfoList({"*.json"}, QDir::Files, QDir::Name);
    }
    for (const QFileInfo& info : candidates) {
        if (info.fileName() == kSlurmArrayFile) {
            continue;
        }
        const QString file = info.absoluteFilePath();
        if (known.count(file)) {
            continue;
        }
        if (const auto seen = scan.unreadable.find(file);
            seen != scan.unreadable.end() && seen->second.modified == info.lastModified()) {
            if (!seen->second.why.isEmpty()) {
                scan.problems << seen->second.why;
            }
            continue;  // unchanged since it was read
        }
        std::string error;
        const FileKind kind = detectFileKind(file.toStdString(), &error);
        try {
            if (!error.empty()) {
                throw std::runtime_error(error);
            }
            if (kind != FileKind::RunFile) {
                // Not a run file (yet: a writer that does not rename into
                // place): looked at again when it changes.
                scan.unreadable[file] = {info.lastModified(), QString()};
                continue;
            }
            scan.fresh.push_back({file, readRunFile(file.toStdString())});
            scan.unreadable.erase(file);
        } catch (const std::exception& failure) {
            const QString why = QString::fromUtf8(failure.what());
            scan.unreadable[file] = {info.lastModified(), why};  // read again once it changes
            scan.problems << why;
        }
    }
    std::sort(scan.fresh.begin(), scan.fresh.end(), [](const SweepPoint& a, const SweepPoint& b) {
        return sweepPointBefore(a.result, a.file, b.result, b.file);
    });
    return scan;
}

SweepFolderRead readSweepFolder(const QString& directory) {
    SweepFolderRead read;
    read.directory = QDir::cleanPath(QFileInfo(directory).absoluteFilePath());
    try {
        read.plan = slurmSweepPlan(read.directory);
    } catch (const std::exception& error) {
        read.planError = QString::fromUtf8(error.what());
    }
    read.scan = scanSweepFolder(read.directory, {}, {});
    return read;
}

AttentionArrayRead readAttentionArray(const QString& directory) {
    AttentionArrayRead read;
    read.directory = QDir::cleanPath(QFileInfo(directory).absoluteFilePath());
    try {
        const AttentionCollection collection =
            readSlurmAttention(read.directory.toStdString(), "folder");
        read.points = collection.points;
        read.status =
            QObject::tr("%1 of %2 points from %3; watched: points appear as their tasks finish%4.")
                .arg(collection.finished())
                .arg(collection.total)
                .arg(read.directory)
                .arg(collection.failed.empty()
                         ? QString()
                         : QObject::tr("; %1 failed (stepscope-cli attention --collect lists them)")
                               .arg(collection.failed.size()));
    } catch (const std::exception& error) {
        read.error = QString::fromUtf8(error.what());
    }
    return read;
}

}  // namespace stepscope::ui
