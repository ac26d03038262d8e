#include "controllers/opening_status.h"

#include <QAbstractButton>
#include <QLabel>

#include "controllers/category_rules_control.h"
#include "controllers/file_opener.h"

namespace stepscope::ui {

OpeningStatus::OpeningStatus(FileOpener* opener, CategoryRulesControl* rules, QLabel* label,
                             QAbstractButton* cancel, QObject* parent)
    : QObject(parent), opener_(opener), rules_(rules), label_(label), cancel_(cancel) {
    cancel_->hide();
    connect(opener, &FileOpener::started, this, [this](int, const QStringList& paths) {
        opening_ = true;
        openingPaths_ = paths.join(", ");
        say(tr("Opening %1…").arg(openingPaths_));
    });
    connect(opener, &FileOpener::progress, this, [this](int job, int percent) {
        if (opening_ && job == opener_->latestJob()) {
            say(tr("Opening %1… %2%").arg(openingPaths_).arg(percent));
        }
    });
    const auto finished = [this](int job, bool opened) {
        if (job != opener_->latestJob()) {
            return;
        }
        opening_ = false;
        ended();
        Q_EMIT newestFinished(opened);
    };
    connect(opener, &FileOpener::finished, this, finished);
    connect(opener, &FileOpener::dropped, this, [finished](int job) { finished(job, false); });
    if (rules_) {
        connect(rules_, &CategoryRulesControl::started, this, [this](int snapshots) {
            applyingText_ =
                snapshots == 1
                    ? tr("Applying the category rules to the open snapshot…")
                    : tr("Applying the category rules to %1 open snapshots…").arg(snapshots);
            say(applyingText_);
        });
        connect(rules_, &CategoryRulesControl::progress, this,
                [this](int percent) { say(QString("%1 %2%").arg(applyingText_).arg(percent)); });
        connect(rules_, &CategoryRulesControl::applied, this, [this] { ended(); });
        connect(rules_, &CategoryRulesControl::cancelled, this, [this] {
            ended(tr("Category rules not applied: cancelled, the rules are as they were"));
        });
    }
    connect(cancel_, &QAbstractButton::clicked, this, [this] {
        const bool opening = opening_;
        opening_ = false;
        if (rules_ && rules_->applying()) {
            rules_->cancel();  // says so through cancelled()
        }
        if (opening) {
            opener_->cancel();  // its jobs' ends are ignored: no longer the newest
            ended(tr("Opening cancelled"));
            Q_EMIT newestFinished(false);
        }
    });
}

void OpeningStatus::say(const QString& text) {
    if (label_->text() != shown_) {
        before_ = label_->text();
    }
    shown_ = text;
    label_->setText(shown_);
    cancel_->show();
}

void OpeningStatus::ended(const QString& text) {
    if (opening_ || (rules_ && rules_->applying())) {
        return;  // the other is still under way
    }
    cancel_->hide();
    if (label_->text() == shown_) {
        label_->setText(text.isEmpty() ? before_ : text);
    }
}

}  // namespace stepscope::ui
