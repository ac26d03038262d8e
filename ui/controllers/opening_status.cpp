#include "controllers/opening_status.h"

#include <QLabel>

#include "controllers/file_opener.h"

namespace stepscope::ui {

OpeningStatus::OpeningStatus(FileOpener* opener, QLabel* label, QObject* parent)
    : QObject(parent), label_(label) {
    connect(opener, &FileOpener::started, this, [this](int, const QStringList& paths) {
        if (label_->text() != shown_) {
            before_ = label_->text();
        }
        shown_ = tr("Opening %1…").arg(paths.join(", "));
        label_->setText(shown_);
    });
    const auto ended = [this, opener](int job, bool opened) {
        if (job != opener->latestJob()) {
            return;
        }
        if (label_->text() == shown_) {
            label_->setText(before_);
        }
        Q_EMIT newestFinished(opened);
    };
    connect(opener, &FileOpener::finished, this, ended);
    connect(opener, &FileOpener::dropped, this, [ended](int job) { ended(job, false); });
}

}  // namespace stepscope::ui
