#pragma once

// ui/: the window, its tabs, menus and wiring (here), and the small
// controllers beside it, each a QObject that signals the window instead of
// calling back into it: run controller and pre-flight, file opener (off the
// UI thread), folder watch, export menu, run list, messages, recent files.

#include <QList>
#include <QMainWindow>
#include <QMessageBox>
#include <QStringList>

#include <deque>
#include <memory>
#include <optional>

#include "engines/runner.h"
#include "models/run_document.h"
#include "pages/example_runs.h"

class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace stepscope::ui {

class AttentionPage;
class BreakdownView;
class CompareView;
class ConfigPanel;
class ExportMenu;
class FileOpener;
class FolderWatch;
class KernelTimelineView;
class MemoryView;
class Messages;
class PrecisionPage;
class RecentFiles;
class RunController;
class RunList;
class CategoryRulesControl;
class RunView;
class StepTimingView;
class SweepPage;
class WelcomePage;
struct ExportTarget;

// The desktop app: configuration on the left, runs of the session below it,
// one tab per view. The window holds its tabs and menus and wires the small
// controllers that do the rest: RunController (runs, sweeps, pre-flight),
// FileOpener (reading files off the UI thread), FolderWatch (sweep and Slurm
// folders filling elsewhere), RunList, ExportMenu, Messages, RecentFiles.
class MainWindow final : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Validates the panel's config and starts it. Returns false when the
    // config is invalid (errors shown beside their fields) or the user
    // declined the CPU pre-flight prompt.
    bool startRun();
    void stopRun();
    bool isRunning() const;
    // Opens what `stepscope` and `stepscope-cli` write (FileOpener says
    // what): a run file into the run list; an attention file (or its folder)
    // into the Attention tab; a sweep's folder into the Sweep tab and the run
    // list, watched while it is shown; a dtype flow into the Precision tab.
    // Anything else, or a file that cannot be read, is a message naming the
    // path and what was expected; nothing changes then.
    // openFiles() returns at once with the job's id; the files are read off
    // the UI thread and shown when they arrive (`tab` then in front), unless
    // a newer open supersedes them. openRunFile() waits for its file, the
    // window answering meanwhile, and says whether it opened.
    int openFiles(const QStringList& paths, const QString& tab = QString());
    bool openRunFile(const QString& path);
    // Opens an example (the welcome page's, Help → Examples) and shows the
    // tab it names.
    bool openExample(const ExampleRun& example);
    // The welcome page in front, and the examples read again.
    void showWelcome();
    // "New run": the configuration in view with its first field focused.
    void focusNewRun();
    bool saveDocument(int id, const QString& path);
    // Ticks these runs in the run list, which the Compare view shows.
    void setCompared(const QList<int>& ids);
    void selectDocument(int id);
    bool selectTab(const QString& title);  // false when no tab has that title
    QWidget* currentTab() const;
    QString currentTabTitle() const;

    const std::deque<RunDocument>& documents() const;
    const RunDocument* currentDocument() const;
    ConfigPanel* configPanel() const { return config_; }
    StepTimingView* stepTimingView() const { return timing_; }
    CompareView* compareView() const { return compare_; }
    SweepPage* sweepPage() const { return sweep_; }
    AttentionPage* attentionPage() const { return attention_; }
    BreakdownView* breakdownView() const { return breakdown_; }
    KernelTimelineView* timelineView() const { return timeline_; }
    MemoryView* memoryView() const { return memory_; }
    PrecisionPage* precisionPage() const { return precision_; }
    WelcomePage* welcomePage() const { return welcome_; }
    QMenu* examplesMenu() const { return examplesMenu_; }
    FileOpener* fileOpener() const { return opener_; }
    RunList* runList() const { return runs_; }
    // The user's category rules for PyTorch memory snapshots (Settings menu).
    CategoryRulesControl* categoryRules() const { return categoryRules_; }
    // The error message on screen; messages that arrive while one is shown
    // wait their turn (each file that fails to open has its own).
    QMessageBox* lastErrorDialog() const;
    int waitingErrorCount() const;
    // The sweep folder the Sweep tab shows and watches; empty when none.
    QString watchedSweepDirectory() const;
    QString progressText() const;
    QString bannerText() const;
    // Pre-flight and the runner act as if this much memory were free (nullopt:
    // what the system reports). For tests and demonstrations.
    void setAvailableMemory(std::optional<int64_t> bytes);
    // The stepscope-cli that runs points in fresh processes (default: the
    // one beside this program).
    void setPointCli(const QString& cli);
    // Where "Save all" on quitting writes unsaved runs (empty: ask for a
    // folder). For tests and demonstrations.
    void setUnsavedRunsFolder(const QString& folder) { unsavedRunsFolder_ = folder; }
    // The title that exported charts of the current tab carry: what is shown
    // and which run or runs, with their full configuration.
    QString chartTitle(const ExportTarget& target) const;

Q_SIGNALS:
    void runFinished(const stepscope::RunResult& result);
    void sweepFinished();
    void attentionFinished();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createViews();
    void createMenus();
    void connectRuns();
    void connectOpener();
    void connectSnapshotDevices();  // the Memory tab's device of a snapshot
    bool keepUnsavedRuns();
    void finishRunInProgress();
    void loadSettings();
    void saveSettings();
    void loadExamples();
    void showRunTabIfWelcome();  // a run opened or started from the welcome page
    QList<ExportTarget> currentExportTargets();
    void offerExports();
    void saveCurrent(bool askForPath);

    void onSelectionChanged();
    void showCurrent();
    void refreshCompare();
    void updateEstimate(bool configValid);
    void onBusyChanged(bool busy);
    void onStepsArrived(const std::vector<StepRecord>& steps);
    void onRunFinished(const RunResult& result);
    void batchFinished(const QString& error, const QString& done, const QString& early);
    void startSweep();
    void startAttention();
    QList<int> showSweepFolder();  // the points' documents, in the table's order

    ConfigPanel* config_;
    QPushButton *runButton_, *stopButton_;
    QTabWidget* tabs_;
    QList<RunView*> views_;
    StepTimingView* timing_;
    CompareView* compare_;
    SweepPage* sweep_;
    AttentionPage* attention_;
    BreakdownView* breakdown_;
    KernelTimelineView* timeline_;
    MemoryView* memory_;
    PrecisionPage* precision_;
    WelcomePage* welcome_;
    QLabel* progressLabel_;
    QProgressBar* progressBar_;
    QMenu* examplesMenu_;
    QAction* runAction_;
    QAction* stopAction_;
    QString progressShown_;  // the last progress line: ticks replace only it

    Messages* messages_;
    RunList* runs_;
    RunController* runner_;
    FileOpener* opener_;
    CategoryRulesControl* categoryRules_;
    FolderWatch* folders_;
    RecentFiles* recent_;
    ExportMenu* export_;
    QString tabAfterOpen_;  // brought to front when the latest open has opened
    QString unsavedRunsFolder_;
};

}  // namespace stepscope::ui
