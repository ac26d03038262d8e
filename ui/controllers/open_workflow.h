#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

class QAbstractButton;
class QLabel;
class QWidget;

namespace stepscope::ui {

class AttentionPage;
class CollectivePage;
class CategoryRulesControl;
class FileOpener;
class FolderWatch;
class Messages;
class PrecisionPage;
class RecentFiles;
class RunList;
class SweepPage;

// Where what the file opener reads goes: a run file (a snapshot, a trace's
// ranks) into the run list, selected, and into the recent files; an
// attention file or Slurm array into the Attention tab; a dtype flow into
// the Precision tab; a sweep's folder into the Sweep tab and the run list,
// watched while it is shown; each failure a message of its own. Another
// device of a snapshot replaces its document. The window only brings the
// tab it is told to the front.
class OpenWorkflow final : public QObject {
    Q_OBJECT

public:
    // What it works with; the window owns each of them.
    struct Parts {
        FileOpener* opener;
        RunList* runs;
        RecentFiles* recent;
        FolderWatch* folders;
        CategoryRulesControl* categoryRules;
        Messages* messages;
        SweepPage* sweep;
        AttentionPage* attention;
        PrecisionPage* precision;
        CollectivePage* collective;  // nullptr in a window without the tab
        QLabel* status;              // says "Opening …" while files are read
        QAbstractButton* cancel;     // cancels what the status says is under way
    };
    OpenWorkflow(const Parts& parts, QObject* parent);

    // Starts reading `paths` off the UI thread and returns the job's id;
    // `tab` comes to the front once they have opened (unless a newer open
    // supersedes them).
    int openFiles(const QStringList& paths, const QString& tab = QString());
    // Waits for `path` (the window answering meanwhile); whether it opened.
    bool openRunFile(const QString& path);
    // Another device of the selected snapshot, read off the UI thread.
    void showSnapshotDevice(int device);

Q_SIGNALS:
    // A document was opened (or found open) and selected; `memoryOnly`: a
    // memory recording and nothing else (a PyTorch memory snapshot).
    void runOpened(bool memoryOnly);
    // This page to the front: what was opened is shown there.
    void pageWanted(QWidget* page);
    // The tab titled so to the front: the one the newest open asked for.
    void tabWanted(const QString& title);

private:
    void connectFiles();
    void connectFolders();
    QList<int> showSweepFolder();  // the points' documents, in the table's order

    Parts parts_;
    QString tabAfterOpen_;  // brought to front when the latest open has opened
};

}  // namespace stepscope::ui
