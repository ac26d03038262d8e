#include "controllers/recent_files.h"

#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace stepscope::ui {

RecentFiles::RecentFiles(QMenu* menu, QObject* parent) : QObject(parent), menu_(menu) {}

void RecentFiles::load() {
    files_ = QSettings().value("files/recent").toStringList();
    rebuildMenu();
}

void RecentFiles::save() const {
    QSettings().setValue("files/recent", files_);
}

void RecentFiles::add(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    files_.removeAll(absolute);
    files_.prepend(absolute);
    while (files_.size() > kMaxFiles) {
        files_.removeLast();
    }
    save();  // now: a crash or a killed session keeps the list too
    rebuildMenu();
}

void RecentFiles::rebuildMenu() {
    menu_->clear();
    for (const QString& path : files_) {
        menu_->addAction(path, this, [this, path] { Q_EMIT openRequested(path); });
    }
    menu_->setEnabled(!files_.isEmpty());
    Q_EMIT changed(files_);
}

}  // namespace stepscope::ui
