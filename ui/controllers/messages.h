#pragma once

#include <QList>
#include <QMessageBox>
#include <QObject>
#include <QPointer>
#include <QString>

#include <utility>

class QLabel;
class QWidget;

namespace stepscope::ui {

// What the window says to the user: error messages, one at a time and none
// lost, and the banner under the tabs (where it moves nothing), which knows what it is about so
// that it goes when that stops being true.
class Messages final : public QObject {
    Q_OBJECT

public:
    enum class About { Nothing, ConfigErrors, Run, SweepFiles, Other };

    // Messages are window-modal on `window`; the banner is for it to place.
    explicit Messages(QWidget* window);

    QLabel* banner() const { return banner_; }
    // Two files that fail to open are two messages, the second shown when
    // the first is dismissed.
    void showError(const QString& title, const QString& message);
    // `runId`: the run a Run banner is about.
    void setBanner(const QString& text, bool error, About about = About::Other, int runId = 0);
    void clearBanner() { setBanner(QString(), false); }
    // Clears the banner when it is about `about`.
    void clearBannerAbout(About about);
    // Clears a Run banner about a run other than `shownRunId` (0: none shown).
    void clearRunBannerUnlessAbout(int shownRunId);

    QString bannerText() const;
    QMessageBox* lastErrorDialog() const { return errorDialog_; }
    int waitingErrorCount() const { return int(waitingErrors_.size()); }

private:
    void showNextError();

    QWidget* window_;
    QLabel* banner_;
    QPointer<QMessageBox> errorDialog_;
    QList<std::pair<QString, QString>> waitingErrors_;  // title, message
    About bannerAbout_ = About::Nothing;
    int bannerRunId_ = 0;
};

}  // namespace stepscope::ui
