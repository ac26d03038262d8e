#include "widgets/dock_room.h"

#include <QDockWidget>
#include <QEvent>
#include <QMainWindow>
#include <QPointer>

#include <algorithm>

namespace stepscope::ui {

namespace {

class DockRoom final : public QObject {
public:
    DockRoom(QMainWindow* window, QDockWidget* dock, int centralWidth)
        : QObject(window), window_(window), dock_(dock), centralWidth_(centralWidth) {
        window->installEventFilter(this);
    }

    bool eventFilter(QObject* watched, QEvent* event) override {
        if (watched == window_ &&
            (event->type() == QEvent::Resize || event->type() == QEvent::Show)) {
            fit();
        }
        return false;
    }

private:
    // The dock as wide as its contents ask, less what the central widget
    // needs on a small screen, never under its least width.
    void fit() {
        if (!dock_ || !window_->centralWidget() || !dock_->isVisible() || dock_->isFloating()) {
            return;
        }
        const int least = dock_->minimumSizeHint().width();
        const int natural = std::max(least, dock_->sizeHint().width());
        const int width = std::clamp(window_->width() - centralWidth_, least, natural);
        if (dock_->width() != width) {
            window_->resizeDocks({dock_}, {width}, Qt::Horizontal);
        }
    }

    QMainWindow* window_;
    QPointer<QDockWidget> dock_;
    int centralWidth_;
};

}  // namespace

void keepRoomForCentralWidget(QMainWindow* window, QDockWidget* dock, int centralWidth) {
    new DockRoom(window, dock, centralWidth);
}

}  // namespace stepscope::ui
