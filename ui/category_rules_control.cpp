#include "category_rules_control.h"

#include <QApplication>
#include <QGuiApplication>
#include <QWidget>

#include "file_opener.h"
#include "models/category_rules.h"
#include "models/snapshot_recording.h"
#include "run_list.h"
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
        if (document.snapshot) {
            snapshots.push_back(document.id);
        }
    }
    // The snapshots are in memory: categorising again is the timeline's and
    // the index's work, not a read (a second or so for a million events).
    QGuiApplication::setOverrideCursor(Qt::WaitCursor);
    for (const int id : snapshots) {
        const std::shared_ptr<const SnapshotRecording> recording = runs_->byId(id)->snapshot;
        runs_->replace(id, std::move(*snapshotDocument(recording->snapshot, recording->path,
                                                       recording->device, rules_)));
    }
    QGuiApplication::restoreOverrideCursor();
    Q_EMIT applied();
    return int(snapshots.size());
}

}  // namespace stepscope::ui
