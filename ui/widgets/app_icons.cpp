#include "widgets/app_icons.h"

#include <QFile>

// Q_INIT_RESOURCE declares a function, so it must be called outside any
// namespace (an anonymous one included). The resources sit in a static
// library: without this call the linker would drop them.
static void initIconResources() {
    Q_INIT_RESOURCE(stepscope);
}

namespace stepscope::ui {

QIcon appIcon(const QString& name) {
    static const bool initialized = [] {
        initIconResources();
        return true;
    }();
    Q_UNUSED(initialized);
    const QString path = ":/icons/" + name + ".svg";
    Q_ASSERT_X(QFile::exists(path), "appIcon", qPrintable(path));
    return QIcon(path);
}

QIcon applicationIcon() {
    return appIcon("stepscope");
}

}  // namespace stepscope::ui
