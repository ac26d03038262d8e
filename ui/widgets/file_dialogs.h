#pragma once

#include <QString>
#include <QStringList>

class QWidget;

namespace stepscope::ui {

// File dialogs that start where the last one ended: the folder of the last
// file or folder chosen in any of them, kept in the settings
// ("files/lastFolder"), so that opening a run and then its neighbour, or
// exporting beside it, does not start from the home folder each time.

// The folder the next dialog starts in (the home folder at first).
QString lastFolder();
// Remembers the folder `chosen` is in (a chosen folder's parent, where its
// siblings are).
void rememberFolder(const QString& chosen);

// QFileDialog's, starting in lastFolder(); `filters` as nameFilters.
QStringList askOpenFiles(QWidget* parent, const QString& caption, const QStringList& filters);
QString askOpenFile(QWidget* parent, const QString& caption, const QString& filter,
                    const QString& startIn = QString());
QString askFolder(QWidget* parent, const QString& caption);
// `name` a file name to start from, in lastFolder() unless it has a folder of its own.
QString askSaveFile(QWidget* parent, const QString& caption, const QString& name,
                    const QString& filters);

}  // namespace stepscope::ui
