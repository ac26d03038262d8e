#pragma once

#include <QObject>
#include <QPointer>

#include <memory>
#include <optional>
#include <vector>

#include "analysis/snapshot_stacks.h"
#include "controllers/job_tracker.h"
#include "widgets/category_rules_dialog.h"

class QWidget;

namespace stepscope::ui {

class FileOpener;
struct RunDocument;
class RunList;

// The user's own category rules for PyTorch memory snapshots: read from the
// settings at start and handed to the file opener (each snapshot opened is
// categorised by them first); edited in CategoryRulesDialog (Settings →
// Memory category rules…, or the Memory tab's button); on Save written back
// to the settings and applied again to every snapshot open, whose memory
// views are then redrawn (applied()). Categorising a million events again
// takes about half a second, so it is done off the UI thread; a newer apply
// supersedes one under way, and cancel() puts the rules back as they were.
class CategoryRulesControl final : public QObject {
    Q_OBJECT

public:
    CategoryRulesControl(RunList* runs, FileOpener* opener, QWidget* window);

    const std::vector<CategoryRule>& rules() const { return rules_; }
    // Opens the dialog (window-modal; one at a time) and returns it.
    CategoryRulesDialog* edit();
    CategoryRulesDialog* dialog() const { return dialog_; }
    // Keeps `rules` in the settings and starts applying them to the open
    // snapshots; the number of snapshots to categorise again. applied()
    // follows once they are shown (at once when there are none).
    int apply(const std::vector<CategoryRule>& rules);
    bool applying() const { return before_.has_value(); }
    // Drops the apply under way and keeps the rules it replaced, in the
    // settings too: the snapshots stay as they are shown. cancelled() says so.
    void cancel();
    // `run` as the rules stand now: a snapshot whose reading began before
    // the last apply() (an open, another device) is categorised again.
    std::shared_ptr<RunDocument> withCurrentRules(std::shared_ptr<RunDocument> run) const;

Q_SIGNALS:
    // Applying the rules to `snapshots` open snapshots began; how far it is,
    // in percent of them all (each percent once).
    void started(int snapshots);
    void progress(int percent);
    void applied();
    void cancelled();

private:
    void keep(const std::vector<CategoryRule>& rules);

    RunList* runs_;
    FileOpener* opener_;
    QWidget* window_;
    QPointer<CategoryRulesDialog> dialog_;
    std::vector<CategoryRule> rules_;
    std::optional<std::vector<CategoryRule>> before_;  // while applying: the rules replaced
    JobTracker jobs_;
};

}  // namespace stepscope::ui
