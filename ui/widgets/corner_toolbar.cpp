#include "widgets/corner_toolbar.h"

#include <QAction>
#include <QMenuBar>
#include <QToolBar>
#include <QToolButton>

namespace stepscope::ui {

QToolBar* addCornerToolBar(QMenuBar* menuBar, const QList<QAction*>& actions) {
    auto* toolbar = new QToolBar(QObject::tr("Main"), menuBar);
    toolbar->setObjectName("mainToolBar");
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolbar->setIconSize(QSize(16, 16));
    toolbar->setMovable(false);
    toolbar->setContentsMargins(0, 0, 0, 0);
    menuBar->setCornerWidget(toolbar, Qt::TopRightCorner);
    for (QAction* action : actions) {
        if (!action) {
            toolbar->addSeparator();
            continue;
        }
        toolbar->addAction(action);
        if (action->menu()) {
            if (auto* button = qobject_cast<QToolButton*>(toolbar->widgetForAction(action))) {
                button->setPopupMode(QToolButton::InstantPopup);
            }
        }
    }
    return toolbar;
}

}  // namespace stepscope::ui
