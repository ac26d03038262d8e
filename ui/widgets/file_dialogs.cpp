#include "widgets/file_dialogs.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QSettings>

namespace stepscope::ui {

namespace {
const char* const kLastFolder = "files/lastFolder";
}

QString lastFolder() {
    const QString folder = QSettings().value(kLastFolder).toString();
    return !folder.isEmpty() && QFileInfo(folder).isDir() ? folder : QDir::homePath();
}

void rememberFolder(const QString& chosen) {
    if (!chosen.isEmpty()) {
        QSettings().setValue(kLastFolder, QFileInfo(chosen).absolutePath());
    }
}

QStringList askOpenFiles(QWidget* parent, const QString& caption, const QStringList& filters) {
    const QStringList paths =
        QFileDialog::getOpenFileNames(parent, caption, lastFolder(), filters.join(";;"));
    if (!paths.isEmpty()) {
        rememberFolder(paths.front());
    }
    return paths;
}

QString askOpenFile(QWidget* parent, const QString& caption, const QString& filter,
                    const QString& startIn) {
    const QString path = QFileDialog::getOpenFileName(
        parent, caption, startIn.isEmpty() ? lastFolder() : startIn, filter);
    rememberFolder(path);
    return path;
}

QString askFolder(QWidget* parent, const QString& caption) {
    const QString path = QFileDialog::getExistingDirectory(parent, caption, lastFolder());
    rememberFolder(path);
    return path;
}

QString askSaveFile(QWidget* parent, const QString& caption, const QString& name,
                    const QString& filters) {
    const QString start =
        name.isEmpty() || QFileInfo(name).isAbsolute() ? name : QDir(lastFolder()).filePath(name);
    const QString path = QFileDialog::getSaveFileName(
        parent, caption, start.isEmpty() ? lastFolder() : start, filters);
    rememberFolder(path);
    return path;
}

}  // namespace stepscope::ui
