#pragma once

#include <QObject>
#include <QStringList>

class QMenu;

namespace stepscope::ui {

// The files and folders opened last, newest first: File → Open recent, the
// welcome page's list, and the settings that keep them for the next start,
// written as the list changes.
class RecentFiles final : public QObject {
    Q_OBJECT

public:
    static constexpr int kMaxFiles = 8;

    // Fills `menu` (File → Open recent) as the list changes.
    explicit RecentFiles(QMenu* menu, QObject* parent = nullptr);

    void load();  // from the settings (files/recent)
    void save() const;
    void add(const QString& path);
    const QStringList& files() const { return files_; }

Q_SIGNALS:
    void openRequested(const QString& path);
    void changed(const QStringList& files);

private:
    void rebuildMenu();

    QMenu* menu_;
    QStringList files_;
};

}  // namespace stepscope::ui
