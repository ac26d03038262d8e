#include "widgets/tabbed_window_keys.h"

#include <QAbstractItemView>
#include <QAction>
#include <QKeySequence>
#include <QTabWidget>
#include <QWidget>

namespace stepscope::ui {

void installTabbedWindowKeys(QWidget* window, QTabWidget* tabs, QWidget* form,
                             const QList<QWidget*>& afterForm) {
    const auto step = [tabs](int by) {
        const int count = tabs->count();
        for (int i = 1; i < count; ++i) {  // past hidden or disabled tabs
            const int index = ((tabs->currentIndex() + by * i) % count + count) % count;
            if (tabs->isTabVisible(index) && tabs->isTabEnabled(index)) {
                tabs->setCurrentIndex(index);
                return;
            }
        }
    };
    auto* next = new QAction(QWidget::tr("Next tab"), window);
    next->setShortcuts(QKeySequence::keyBindings(QKeySequence::NextChild) +
                       QList<QKeySequence>{QKeySequence(Qt::CTRL | Qt::Key_PageDown)});
    QObject::connect(next, &QAction::triggered, window, [step] { step(1); });
    auto* previous = new QAction(QWidget::tr("Previous tab"), window);
    previous->setShortcuts(QKeySequence::keyBindings(QKeySequence::PreviousChild) +
                           QList<QKeySequence>{QKeySequence(Qt::CTRL | Qt::Key_PageUp)});
    QObject::connect(previous, &QAction::triggered, window, [step] { step(-1); });
    window->addActions({next, previous});
    for (QAbstractItemView* view : window->findChildren<QAbstractItemView*>()) {
        view->setTabKeyNavigation(false);
    }
    QWidget* before = nullptr;  // the form's last field that takes Tab
    for (QWidget* field : form->findChildren<QWidget*>()) {
        if (field->focusPolicy() & Qt::TabFocus) {
            before = field;
        }
    }
    for (QWidget* next : afterForm) {
        if (before) {
            QWidget::setTabOrder(before, next);
        }
        before = next;
    }
}

}  // namespace stepscope::ui
