#include "controllers/category_rules_control.h"

#include <QApplication>
#include <QGuiApplication>
#include <QMessageBox>
#include <QWidget>

#include "controllers/file_opener.h"
#include "controllers/run_list.h"
#include "models/category_rules.h"
#include "models/run_document.h"
#include "models/snapshot_document.h"
#include "models/snapshot_recording.h"
#include "widgets/category_rules_dialog.h"

namespace stepscope::ui {

CategoryRulesControl::CategoryRulesControl(RunList* runs, FileOpener* opener, QWidget* window)
    : QObject(window), runs_(runs), opener_(opener), window_(window) {
    rules_ = loadCategoryRules();
    opener_->setCategoryRules(rules_);
}

CategoryRulesDialog* CategoryRulesControl::edit() {
    if (dialog_) {
        dialog_->raise();
        dialog_->activateWindow();
        return dialog_;
    }
    dialog_ = new CategoryRulesDialog(rules_, window_);
    dialog_->setAttribute(Qt::WA_DeleteOnClose);
    dialog_->setWindowModality(Qt::WindowModal);
    connect(dialog_, &QDialog::accepted, this, [this] {
        if (dialog_) {
            apply(dialog_->rules());
        }
    });
    dialog_->show();
    return dialog_;
}

int CategoryRulesControl::apply(const std::vector<CategoryRule>& rules) {
    rules_ = rules;
    saveCategoryRules(rules_);
    opener_->setCategoryRules(rules_);
    std::vector<int> snapshots;
    for (const RunDocument& document : runs_->documents()) {
        if (document.snapshot()) {
            snapshots.push_back(document.id);
        }
    }
    // The snapshots are in memory: categorising again is the timeline's and
    // the index's work, not a read (a second or so for a million events).
    QGuiApplication::setOverrideCursor(Qt::WaitCursor);
    try {
        for (const int id : snapshots) {
            const std::shared_ptr<const SnapshotRecording> recording =
                runs_->byId(id)->sharedSnapshot();
            runs_->replace(id, std::move(*snapshotDocument(recording->snapshot, recording->path,
                                                           recording->device, rules_)));
        }
    } catch (const std::exception& error) {  // the rules were checked: a bug, said, not a crash
        QGuiApplication::restoreOverrideCursor();
        QMessageBox::warning(window_, tr("Cannot apply the category rules"),
                             QString::fromUtf8(error.what()));
        return 0;
    }
    QGuiApplication::restoreOverrideCursor();
    Q_EMIT applied();
    return int(snapshots.size());
}

std::shared_ptr<RunDocument> CategoryRulesControl::withCurrentRules(
    std::shared_ptr<RunDocument> run) const {
    const SnapshotRecording* recording = run ? run->snapshot() : nullptr;
    if (!recording || recording->rules == rules_) {
        return run;
    }
    return snapshotDocument(recording->snapshot, recording->path, recording->device, rules_);
}

}  // namespace stepscope::ui
