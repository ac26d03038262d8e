#pragma once

// Code a received file names, which must not run without the user's say-so
// (issue 45): DIR/evilmod.py leaves DIR/MARKER when imported, and its
// build() exits. Header-only: the CLI's tests and the app's both use it.

#include <QFile>
#include <QString>

namespace stepscope::test {

// False when the module cannot be written.
inline bool writeMarkerModule(const QString& dir) {
    QFile module(dir + "/evilmod.py");
    if (!module.open(QIODevice::WriteOnly)) {
        return false;
    }
    module.write(
        "import os\n"
        "open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'MARKER'),"
        " 'w').write('imported')\n"
        "def build(**kwargs):\n"
        "    raise SystemExit('evilmod ran')\n");
    return true;
}

}  // namespace stepscope::test
