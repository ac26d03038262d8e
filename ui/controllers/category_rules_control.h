#pragma once

#include <QObject>
#include <QPointer>

#include <memory>
#include <vector>

#include "analysis/snapshot_stacks.h"
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
// views are then redrawn (applied()).
class CategoryRulesControl final : public QObject {
    Q_OBJECT

public:
    CategoryRulesControl(RunList* runs, FileOpener* opener, QWidget* window);

    const std::vector<CategoryRule>& rules() const { return rules_; }
    // Opens the dialog (window-modal; one at a time) and returns it.
    CategoryRulesDialog* edit();
    CategoryRulesDialog* dialog() const { return dialog_; }
    // Keeps `rules` in the settings and applies them to the open snapshots;
    // the number of snapshots categorised again.
    int apply(const std::vector<CategoryRule>& rules);
    // `run` as the rules stand now: a snapshot whose reading began before
    // the last apply() (an open, another device) is categorised again.
    std::shared_ptr<RunDocument> withCurrentRules(std::shared_ptr<RunDocument> run) const;

Q_SIGNALS:
    void applied();

private:
    RunList* runs_;
    FileOpener* opener_;
    QWidget* window_;
    QPointer<CategoryRulesDialog> dialog_;
    std::vector<CategoryRule> rules_;
};

}  // namespace stepscope::ui
