#pragma once

class QDockWidget;
class QMainWindow;

namespace stepscope::ui {

// On a small screen the dock gives way to the tabs: whenever `window` is
// shown or resized, `dock` takes the width its contents ask for, less what
// the central widget lacks of `centralWidth` px, down to its least width. A
// width the user drags is kept until the window is next resized.
void keepRoomForCentralWidget(QMainWindow* window, QDockWidget* dock, int centralWidth);

}  // namespace stepscope::ui
