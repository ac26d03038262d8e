#include "controllers/run_saving.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSettings>
#include <QStringList>

#include "controllers/run_list.h"
#include "controllers/run_workflow.h"
#include "widgets/file_dialogs.h"
#include "widgets/unsaved_runs.h"

namespace stepscope::ui {

namespace {

// "run-3_nano_ctx32_train-step.json" in `folder`, or with "-2", "-3", … where
// that name is taken: Save all never writes over a file.
QString freeRunFileName(const QString& folder, const RunResult& result, int id) {
    QString stem = QString("run-%1_%2_ctx%3_%4")
                       .arg(id)
                       .arg(QString::fromStdString(result.config.model.name))
                       .arg(result.config.contextLength)
                       .arg(QString::fromStdString(toString(result.config.mode)));
    stem.replace(QRegularExpression("[^A-Za-z0-9._-]"), "_");
    QString path = QDir(folder).filePath(stem + ".json");
    for (int n = 2; QFileInfo::exists(path); ++n) {
        path = QDir(folder).filePath(QString("%1-%2.json").arg(stem).arg(n));
    }
    return path;
}

}  // namespace

RunSaving::RunSaving(RunList* runs, RunWorkflow* workflow, QWidget* window)
    : QObject(window), runs_(runs), workflow_(workflow), window_(window) {}

bool RunSaving::save(int id, const QString& path) {
    return runs_->save(id, path);
}

void RunSaving::saveCurrent(bool askForPath) {
    const RunDocument* document = runs_->current();
    if (!document || document->id == runs_->liveId()) {
        return;
    }
    QString path = document->path;
    if (askForPath || path.isEmpty()) {
        path = askSaveFile(window_, tr("Save run"), path, tr("StepScope runs (*.json)"));
    }
    if (!path.isEmpty()) {
        save(document->id, path);
    }
}

bool RunSaving::keepUnsaved() {
    QStringList titles;
    for (const RunDocument& document : runs_->documents()) {
        if (document.modified) {
            titles << document.title;
        }
    }
    if (titles.isEmpty()) {
        return true;
    }
    switch (askAboutUnsavedRuns(window_, titles, workflow_->isRunning())) {
        case UnsavedRunsAnswer::Discard:
            return true;
        case UnsavedRunsAnswer::Cancel:
            return false;
        case UnsavedRunsAnswer::SaveAll:
            break;
    }
    const QString folder = saveAllFolder();
    if (folder.isEmpty()) {
        return false;
    }
    QSettings().setValue("files/saveAllFolder", folder);
    workflow_->finishRunInProgress();
    for (const RunDocument& document : runs_->documents()) {
        if (document.modified &&
            !save(document.id, document.path.isEmpty()
                                   ? freeRunFileName(folder, document.result, document.id)
                                   : document.path)) {
            return false;  // the message says why; the window stays
        }
    }
    return true;
}

QString RunSaving::saveAllFolder() const {
    return unsavedRunsFolder_.isEmpty() ? QFileDialog::getExistingDirectory(
                                              window_, tr("Save the unsaved runs into"),
                                              QSettings().value("files/saveAllFolder").toString())
                                        : unsavedRunsFolder_;
}

}  // namespace stepscope::ui
