#include "controllers/open_workflow.h"

#include <QEventLoop>

#include <optional>

#include "controllers/category_rules_control.h"
#include "controllers/file_opener.h"
#include "controllers/folder_watch.h"
#include "controllers/messages.h"
#include "controllers/opening_status.h"
#include "controllers/recent_files.h"
#include "controllers/run_list.h"
#include "pages/attention_page.h"
#include "pages/collective_page.h"
#include "pages/precision_page.h"
#include "pages/sweep_page.h"

namespace stepscope::ui {

OpenWorkflow::OpenWorkflow(const Parts& parts, QObject* parent) : QObject(parent), parts_(parts) {
    auto* opening =
        new OpeningStatus(parts_.opener, parts_.categoryRules, parts_.status, parts_.cancel, this);
    connect(opening, &OpeningStatus::newestFinished, this, [this](bool opened) {
        if (opened && !tabAfterOpen_.isEmpty()) {
            Q_EMIT tabWanted(tabAfterOpen_);
        }
    });
    connect(parts_.opener, &FileOpener::openFailed, parts_.messages, &Messages::showError);
    connectFiles();
    connectFolders();
}

int OpenWorkflow::openFiles(const QStringList& paths, const QString& tab) {
    tabAfterOpen_ = tab;  // the latest open's: an older one's tab no longer matters
    return parts_.opener->open(paths);
}

bool OpenWorkflow::openRunFile(const QString& path) {
    QEventLoop loop;
    std::optional<bool> opened;
    const int job = openFiles({path});
    const auto done = [&](int which, bool ok) {
        if (which == job) {
            opened = ok;
            loop.quit();
        }
    };
    FileOpener* opener = parts_.opener;
    const auto finished = connect(opener, &FileOpener::finished, &loop, done);
    const auto dropped =
        connect(opener, &FileOpener::dropped, &loop, [&](int which) { done(which, false); });
    loop.exec();  // the window answers while the file is read
    disconnect(finished);
    disconnect(dropped);
    return opened.value_or(false);
}

void OpenWorkflow::showSnapshotDevice(int device) {
    if (const RunDocument* document = parts_.runs->current(); document && document->snapshot()) {
        parts_.opener->openSnapshotDevice(document->id, *document, device);
    }
}

// Files: each kind to where it is shown, and into the recent files.
void OpenWorkflow::connectFiles() {
    FileOpener* opener = parts_.opener;
    connect(opener, &FileOpener::runOpened, this,
            [this](const QString& path, std::shared_ptr<RunDocument> run) {
                // Read with the rules of when the open began; saved since.
                run = parts_.categoryRules->withCurrentRules(std::move(run));
                // A file open already is selected, not listed twice.
                const RunDocument* open = parts_.runs->openedFrom(path);
                // A PyTorch memory snapshot is a memory trace and nothing else.
                const bool memoryOnly = !run->hasSteps() && run->hasMemory();
                const int id = open ? open->id : parts_.runs->add(std::move(*run)).id;
                parts_.recent->add(path);
                parts_.runs->select(id);
                Q_EMIT runOpened(memoryOnly);
            });
    connect(opener, &FileOpener::snapshotDeviceOpened, this,
            [this](int id, std::shared_ptr<RunDocument> run) {
                parts_.runs->replace(
                    id, std::move(*parts_.categoryRules->withCurrentRules(std::move(run))));
            });
    connect(opener, &FileOpener::attentionOpened, this,
            [this](const QString& path, const std::vector<AttentionPoint>& points) {
                parts_.attention->setPoints(points, path);
                parts_.recent->add(path);
                Q_EMIT pageWanted(parts_.attention);
            });
    connect(opener, &FileOpener::collectiveOpened, this,
            [this](const QString& path, const CollectiveFile& file) {
                if (!parts_.collective) {
                    parts_.messages->showError(tr("Cannot show %1").arg(path),
                                               tr("This window has no Collectives tab."));
                    return;
                }
                parts_.collective->showFile(file, path);
                parts_.recent->add(path);
                Q_EMIT pageWanted(parts_.collective);
            });
    connect(opener, &FileOpener::dtypeFlowOpened, this,
            [this](const QString& path, const std::vector<DtypeRow>& rows) {
                parts_.precision->showDtypeFlow(rows, path);
                parts_.recent->add(path);
                Q_EMIT pageWanted(parts_.precision);
            });
}

// Folders: a Slurm attention array and a sweep's folder, shown and watched.
void OpenWorkflow::connectFolders() {
    FileOpener* opener = parts_.opener;
    FolderWatch* folders = parts_.folders;
    connect(opener, &FileOpener::attentionArrayOpened, this,
            [this](const AttentionArrayRead& array) {
                parts_.folders->watchAttentionArray(array);
                parts_.recent->add(array.directory);
                Q_EMIT pageWanted(parts_.attention);
            });
    connect(folders, &FolderWatch::attentionArrayRead, this,
            [this](const AttentionArrayRead& read) {
                if (!read.error.isEmpty()) {
                    parts_.messages->setBanner(read.error, true);
                    return;
                }
                parts_.attention->setPoints(read.points);
                parts_.attention->finish(read.status);
            });
    connect(opener, &FileOpener::sweepFolderOpened, this,
            [this](std::shared_ptr<SweepFolderRead> folder) {
                if (!folder->planError.isEmpty()) {
                    parts_.messages->showError(tr("Cannot open folder"), folder->planError);
                }
                parts_.folders->watchSweep(*folder);
                const QList<int> points = showSweepFolder();
                parts_.recent->add(folder->directory);
                Q_EMIT pageWanted(parts_.sweep);
                if (!points.isEmpty()) {  // its first point, its config in the panel
                    parts_.runs->select(points.first());
                }
            });
    connect(folders, &FolderWatch::sweepPointsAdded, this, &OpenWorkflow::showSweepFolder);
    connect(folders, &FolderWatch::sweepProblem, this, [this](const QString& text) {
        if (text.isEmpty()) {
            parts_.messages->clearBannerAbout(Messages::About::SweepFiles);
        } else {
            parts_.messages->setBanner(text, true, Messages::About::SweepFiles);
        }
    });
}

QList<int> OpenWorkflow::showSweepFolder() {
    std::vector<SweepPage::Row> rows;
    QList<int> ids;
    for (const FolderWatch::Point& point : parts_.folders->sweepPoints()) {
        rows.push_back({point.config, point.result});
        if (point.result) {
            ids << point.id;
        }
    }
    parts_.sweep->showPoints(parts_.folders->sweepDirectory(), rows, true);
    return ids;
}

}  // namespace stepscope::ui
