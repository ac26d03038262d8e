#include "controllers/messages.h"

#include <QLabel>
#include <QTimer>

#include "models/format.h"

namespace stepscope::ui {

Messages::Messages(QWidget* window) : QObject(window), window_(window), banner_(new QLabel) {
    banner_->setWordWrap(true);
    banner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    banner_->hide();
}

void Messages::showError(const QString& title, const QString& message) {
    if (errorDialog_ && errorDialog_->isVisible()) {
        waitingErrors_.append({title, message});
        errorDialog_->setInformativeText(
            tr("%1 after this one.").arg(countText(waitingErrors_.size(), "more message")));
        return;
    }
    // Window-modal and non-blocking, so that a run in progress keeps streaming.
    errorDialog_ = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, window_);
    errorDialog_->setAttribute(Qt::WA_DeleteOnClose);
    connect(errorDialog_, &QDialog::finished, this,
            [this] { QTimer::singleShot(0, this, &Messages::showNextError); });
    errorDialog_->open();
}

void Messages::showNextError() {
    if (waitingErrors_.isEmpty() || (errorDialog_ && errorDialog_->isVisible())) {
        return;
    }
    const auto [title, message] = waitingErrors_.takeFirst();
    showError(title, message);
    if (!waitingErrors_.isEmpty()) {
        errorDialog_->setInformativeText(
            tr("%1 after this one.").arg(countText(waitingErrors_.size(), "more message")));
    }
}

void Messages::setBanner(const QString& text, bool error, About about, int runId) {
    bannerAbout_ = text.isEmpty() ? About::Nothing : about;
    bannerRunId_ = runId;
    banner_->setText(text);
    banner_->setStyleSheet(error ? "background: #fdecea; color: #8a1f11; padding: 6px;"
                                 : "background: #eef5fb; padding: 6px;");
    banner_->setVisible(!text.isEmpty());
}

void Messages::clearBannerAbout(About about) {
    if (bannerAbout_ == about) {
        clearBanner();
    }
}

void Messages::clearRunBannerUnlessAbout(int shownRunId) {
    if (bannerAbout_ == About::Run && (shownRunId == 0 || shownRunId != bannerRunId_)) {
        clearBanner();
    }
}

QString Messages::bannerText() const {
    return banner_->isHidden() ? QString() : banner_->text();
}

}  // namespace stepscope::ui
