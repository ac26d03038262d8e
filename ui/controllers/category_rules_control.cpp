#include "controllers/category_rules_control.h"

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
    : QObject(window), runs_(runs), opener_(opener), window_(window), jobs_(this, 1) {
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

void CategoryRulesControl::keep(const std::vector<CategoryRule>& rules) {
    rules_ = rules;
    saveCategoryRules(rules_);
    opener_->setCategoryRules(rules_);
}

namespace {

// A snapshot to categorise again: the document showing it, and its recording
// as the apply began (a device switched meanwhile is not overwritten).
struct Recategorised {
    int id = 0;
    std::shared_ptr<const SnapshotRecording> from;
    std::shared_ptr<RunDocument> document;
};

}  // namespace

int CategoryRulesControl::apply(const std::vector<CategoryRule>& rules) {
    if (!before_) {
        before_ = rules_;
    }
    keep(rules);
    std::vector<Recategorised> snapshots;
    for (const RunDocument& document : runs_->documents()) {
        if (document.snapshot()) {
            snapshots.push_back({document.id, document.sharedSnapshot(), nullptr});
        }
    }
    if (snapshots.empty()) {
        jobs_.reset();  // an apply under way has nothing left to do either
        before_.reset();
        Q_EMIT applied();
        return 0;
    }
    const int count = int(snapshots.size());
    Q_EMIT started(count);
    // How far, in whole percents of all the snapshots, told on this thread.
    const QPointer<CategoryRulesControl> self(this);
    const int job = jobs_.latestJob() + 1;
    auto told = [self, job, count, shown = -1](size_t done, double fraction) mutable {
        const int percent = int(100 * (double(done) + fraction) / count);
        if (percent != shown && self) {
            shown = percent;
            QMetaObject::invokeMethod(
                self.data(),
                [self, job, percent] {
                    if (self && self->applying() && self->jobs_.latestJob() == job) {
                        Q_EMIT self->progress(percent);
                    }
                },
                Qt::QueuedConnection);
        }
    };
    jobs_.start(
        [snapshots = std::move(snapshots), rules = rules_,
         told = std::move(told)](const std::function<bool()>& superseded) mutable {
            std::string error;
            for (size_t i = 0; i < snapshots.size() && !superseded(); ++i) {
                Recategorised& snapshot = snapshots[i];
                try {
                    snapshot.document = snapshotDocument(
                        snapshot.from->snapshot, snapshot.from->path, snapshot.from->device, rules,
                        [&](double fraction) {
                            told(i, fraction);
                            return !superseded();  // a newer apply, or Cancel: stop
                        });
                } catch (const std::exception& e) {  // the rules were checked: a bug, said
                    error = e.what();
                    break;
                }
            }
            return std::make_pair(std::move(snapshots), std::move(error));
        },
        [this](int, std::pair<std::vector<Recategorised>, std::string> done) {
            auto& [snapshots, error] = done;
            before_.reset();
            if (!error.empty()) {
                QMessageBox::warning(window_, tr("Cannot apply the category rules"),
                                     QString::fromStdString(error));
                return;
            }
            for (Recategorised& snapshot : snapshots) {
                const RunDocument* shown = runs_->byId(snapshot.id);
                if (shown && snapshot.document && shown->sharedSnapshot() == snapshot.from) {
                    runs_->replace(snapshot.id, std::move(*snapshot.document));
                }
            }
            Q_EMIT applied();
        },
        [](int) {});
    return count;
}

void CategoryRulesControl::cancel() {
    if (!before_) {
        return;
    }
    jobs_.reset();
    keep(*before_);
    before_.reset();
    Q_EMIT cancelled();
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
