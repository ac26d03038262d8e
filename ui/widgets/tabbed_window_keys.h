#pragma once

#include <QList>

class QTabWidget;
class QWidget;

namespace stepscope::ui {

// Keys as a tabbed window has them, on `window`: Ctrl+Tab and Ctrl+PgDn
// (Ctrl+Shift+Tab, Ctrl+PgUp back) switch `tabs`' tabs wherever the focus
// is, not only on the tab bar, past hidden or disabled tabs; Tab leaves a
// table rather than walking its cells; and after the last field of `form`
// that takes Tab come `afterForm`, in order (Run, Stop, the run list).
void installTabbedWindowKeys(QWidget* window, QTabWidget* tabs, QWidget* form,
                             const QList<QWidget*>& afterForm);

}  // namespace stepscope::ui
