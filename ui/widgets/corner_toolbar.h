#pragma once

#include <QList>

class QAction;
class QMenuBar;
class QToolBar;

namespace stepscope::ui {

// The main toolbar, in the menu bar's corner: a row of its own would make the
// window taller than a 700 px screen, the Sweep page's form being as tall as
// it is. Icons on a 16 px grid, text beside them; a null action is a
// separator, and an action with a menu pops it up at once.
QToolBar* addCornerToolBar(QMenuBar* menuBar, const QList<QAction*>& actions);

}  // namespace stepscope::ui
