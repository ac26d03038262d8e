#pragma once

#include <QIcon>
#include <QString>

namespace stepscope::ui {

// The app's own icons, drawn for StepScope (resources/icons, compiled in
// through resources/stepscope.qrc). `name` is the file's name without .svg:
// "run", "tab-memory", … Needs Qt's SVG icon engine (Debian libqt6svg6).
QIcon appIcon(const QString& name);

// The application icon: resources/icons/stepscope.svg.
QIcon applicationIcon();

}  // namespace stepscope::ui
