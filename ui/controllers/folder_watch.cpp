#include "controllers/folder_watch.h"

#include <QDir>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QTimer>

#include <algorithm>
#include <functional>
#include <set>

#include "controllers/run_list.h"
#include "models/format.h"

namespace stepscope::ui {

namespace {

// A timer that calls `scan` once, 150 ms after the last of a burst of
// changes `watcher` reports (a rename into place is several events).
QTimer* rescanAfterChanges(QFileSystemWatcher* watcher, std::function<void()> scan) {
    auto* timer = new QTimer(watcher);
    timer->setSingleShot(true);
    timer->setInterval(150);
    QObject::connect(watcher, &QFileSystemWatcher::directoryChanged, timer,
                     qOverload<>(&QTimer::start));
    QObject::connect(watcher, &QFileSystemWatcher::fileChanged, timer, qOverload<>(&QTimer::start));
    QObject::connect(timer, &QTimer::timeout, watcher, std::move(scan));
    return timer;
}

void unwatchAll(QFileSystemWatcher* watcher) {
    if (!watcher->directories().isEmpty()) {
        watcher->removePaths(watcher->directories());
    }
    if (!watcher->files().isEmpty()) {
        watcher->removePaths(watcher->files());
    }
}

}  // namespace

FolderWatch::FolderWatch(RunList* runs, QObject* parent)
    : QObject(parent),
      runs_(runs),
      sweepWatcher_(new QFileSystemWatcher(this)),
      attentionWatcher_(new QFileSystemWatcher(this)),
      sweepScans_(this, 1),
      attentionScans_(this, 1) {
    sweepRescan_ = rescanAfterChanges(sweepWatcher_, [this] { rescanSweep(); });
    rescanAfterChanges(attentionWatcher_, [this] { rescanAttention(); });
}

void FolderWatch::watchSweep(SweepFolderRead& read) {
    if (read.directory != sweepDir_) {
        stopSweep();
        sweepDir_ = read.directory;
        sweepWatcher_->addPath(sweepDir_);
        sweepPlan_ = read.plan;
    }
    takeScan(read.scan);
    // What arrived between the read and the watch is read now.
    sweepRescan_->start();
}

void FolderWatch::takeScan(SweepFolderScan& scan) {
    if (sweepDir_.isEmpty()) {
        return;
    }
    if (scan.folderGone) {
        Q_EMIT sweepProblem(
            tr("The sweep's folder %1 is gone; its points stay in the run list.").arg(sweepDir_));
        return;
    }
    if (const QString points = sweepDir_ + "/points";
        scan.hasPointsFolder && !sweepWatcher_->directories().contains(points)) {
        sweepWatcher_->addPath(points);
    }
    // Files that could not be read are watched until they can.
    for (const auto& [file, seen] : sweepUnreadable_) {
        if (!scan.unreadable.count(file)) {
            sweepWatcher_->removePath(file);
        }
    }
    for (const auto& [file, seen] : scan.unreadable) {
        if (!sweepUnreadable_.count(file)) {
            sweepWatcher_->addPath(file);
        }
    }
    sweepUnreadable_ = scan.unreadable;
    // Into the run list in the sweep's order; a run opened before (from this
    // folder or on its own) is not listed twice.
    bool added = false;
    for (SweepPoint& point : scan.fresh) {
        if (sweepFiles_.count(point.file)) {
            continue;  // read again by a look that started before the last one ended
        }
        const RunDocument* known = runs_->openedFrom(point.file);
        sweepFiles_[point.file] =
            known ? known->id : runs_->add(std::move(point.result), point.file).id;
        added = true;
    }
    Q_EMIT sweepProblem(scan.problems.isEmpty()
                            ? QString()
                            : tr("%1 of the sweep in %2 could not be read:")
                                      .arg(countText(scan.problems.size(), "run file"), sweepDir_) +
                                  "\n" + scan.problems.join('\n'));
    if (added) {
        Q_EMIT sweepPointsAdded();
    }
}

std::vector<FolderWatch::Point> FolderWatch::sweepPoints() const {
    std::vector<std::pair<const RunDocument*, QString>> done;
    for (const auto& [file, id] : sweepFiles_) {
        if (const RunDocument* document = runs_->byId(id)) {
            done.emplace_back(document, file);
        }
    }
    std::sort(done.begin(), done.end(), [](const auto& a, const auto& b) {
        return sweepPointBefore(a.first->result, a.second, b.first->result, b.second);
    });
    std::vector<Point> points;
    if (sweepPlan_.empty()) {
        for (const auto& [document, file] : done) {
            points.push_back({document->result.config, &document->result, document->id});
        }
        return points;
    }
    for (const auto& [file, config] : sweepPlan_) {  // the array's order
        const auto point =
            std::find_if(done.begin(), done.end(), [&](const auto& d) { return d.second == file; });
        points.push_back(point == done.end()
                             ? Point{config, nullptr, 0}
                             : Point{config, &point->first->result, point->first->id});
    }
    return points;
}

void FolderWatch::stopSweep() {
    unwatchAll(sweepWatcher_);
    sweepRescan_->stop();
    sweepScans_.reset();  // a look under way at the old folder is dropped
    const bool watched = !sweepDir_.isEmpty();
    sweepDir_.clear();
    sweepFiles_.clear();
    sweepUnreadable_.clear();
    sweepPlan_.clear();
    if (watched) {
        Q_EMIT sweepProblem(QString());
    }
}

void FolderWatch::rescanSweep() {
    if (sweepDir_.isEmpty()) {
        return;
    }
    std::set<QString> known;
    for (const auto& [file, id] : sweepFiles_) {
        known.insert(file);
    }
    sweepScans_.start(
        [dir = sweepDir_, known, unreadable = sweepUnreadable_](const std::function<bool()>&) {
            return scanSweepFolder(dir, known, unreadable);
        },
        [this](int, SweepFolderScan scan) { takeScan(scan); }, [](int) {});
}

void FolderWatch::watchAttentionArray(const AttentionArrayRead& read) {
    attentionDir_ = read.directory;
    attentionScans_.reset();  // a look under way at the old array is dropped
    unwatchAll(attentionWatcher_);
    attentionWatcher_->addPath(attentionDir_);
    if (const QString points = attentionDir_ + "/points"; QFileInfo(points).isDir()) {
        attentionWatcher_->addPath(points);  // made with the first task's file
    }
    Q_EMIT attentionArrayRead(read);
}

void FolderWatch::rescanAttention() {
    if (const QString points = attentionDir_ + "/points";
        QFileInfo(points).isDir() && !attentionWatcher_->directories().contains(points)) {
        attentionWatcher_->addPath(points);
    }
    attentionScans_.start(
        [dir = attentionDir_](const std::function<bool()>&) { return readAttentionArray(dir); },
        [this](int, AttentionArrayRead read) { Q_EMIT attentionArrayRead(read); }, [](int) {});
}

}  // namespace stepscope::ui
