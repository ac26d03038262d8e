#pragma once

// ui/: the window (here): its tabs, built from a table of tabs, its menus,
// and the wiring between the controllers (ui/controllers), which do the
// work and signal the window, and the tabs (ui/views, ui/pages), which show
// it. Nothing includes it but the app and the tests.

#include <QList>
#include <QMainWindow>
#include <QMessageBox>
#include <QStringList>

#include <deque>
#include <optional>
#include <vector>

#include "engines/runner.h"
#include "models/run_document.h"
#include "pages/attention_page.h"
#include "pages/collective_page.h"
#include "pages/example_runs.h"
#include "pages/precision_page.h"
#include "pages/sweep_page.h"
#include "pages/welcome_page.h"
#include "views/breakdown_view.h"
#include "views/compare_view.h"
#include "views/kernel_timeline_view.h"
#include "views/memory_view.h"
#include "views/ranks_view.h"
#include "views/step_timing_view.h"
#include "widgets/run_view.h"

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QToolButton;
class QPushButton;
class QTabWidget;

namespace stepscope::ui {

class CategoryRulesControl;
class ConfigPanel;
class ExportMenu;
class FileOpener;
class FolderWatch;
class Messages;
class OpenWorkflow;
class RecentFiles;
class RunController;
class RunList;
class RunSaving;
class RunWorkflow;

// One tab of the window, as the table of tabs lists it (tabOf() makes one).
struct TabSpec {
    const char* title;  // translated in MainWindow's context
    const char* icon;   // an icon of resources/icons, by name; nullptr: none
    QWidget* (*make)();
    // What it offers the Export menu while it is in front; nullptr: nothing.
    QList<ExportTarget> (*exports)(QWidget* tab);
};

// The table's entry for a tab of type `Tab`: made with `new Tab`; a RunView
// is shown every selected run; a tab with exportTargets() offers them.
template <class Tab>
TabSpec tabOf(const char* title, const char* icon) {
    TabSpec spec{title, icon, []() -> QWidget* { return new Tab; }, nullptr};
    if constexpr (requires(Tab & tab) { tab.exportTargets(); }) {
        spec.exports = [](QWidget* tab) { return static_cast<Tab*>(tab)->exportTargets(); };
    }
    return spec;
}

// The desktop app: configuration on the left, runs of the session below it,
// one tab per view. The window builds its tabs from a table, holds its menus
// and wires the controllers that do the rest: RunWorkflow (runs, sweeps,
// attention grids), OpenWorkflow (what FileOpener reads, where it goes),
// RunSaving, FolderWatch, RunList, ExportMenu, Messages, RecentFiles.
class MainWindow final : public QMainWindow {
    Q_OBJECT

public:
    // The window's tabs, in order: adding a tab is adding it here.
    static std::vector<TabSpec> defaultTabs();

    explicit MainWindow(QWidget* parent = nullptr);
    // With these tabs, which hold at least those of defaultTabs() (the
    // window wires those it knows); for tests and demonstrations.
    explicit MainWindow(const std::vector<TabSpec>& tabs, QWidget* parent = nullptr);
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
    // The first tab of type T; nullptr when none. The window's own tabs
    // are named below (their headers come with this one).
    template <class T>
    T* tab() const {
        return static_cast<T*>(findTab(T::staticMetaObject));
    }

    const std::deque<RunDocument>& documents() const;
    const RunDocument* currentDocument() const;
    ConfigPanel* configPanel() const { return config_; }
    StepTimingView* stepTimingView() const { return tab<StepTimingView>(); }
    CompareView* compareView() const { return tab<CompareView>(); }
    SweepPage* sweepPage() const { return tab<SweepPage>(); }
    AttentionPage* attentionPage() const { return tab<AttentionPage>(); }
    BreakdownView* breakdownView() const { return tab<BreakdownView>(); }
    KernelTimelineView* timelineView() const { return tab<KernelTimelineView>(); }
    MemoryView* memoryView() const { return tab<MemoryView>(); }
    RanksView* ranksView() const { return tab<RanksView>(); }  // nullptr in a table without it
    PrecisionPage* precisionPage() const { return tab<PrecisionPage>(); }
    CollectivePage* collectivePage() const { return tab<CollectivePage>(); }  // nullptr: none
    WelcomePage* welcomePage() const { return tab<WelcomePage>(); }
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
    void setUnsavedRunsFolder(const QString& folder);
    // What the Export menu offers of the tab in front.
    QList<ExportTarget> currentExportTargets();
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
    QDockWidget* createDock();
    void createTabs(const std::vector<TabSpec>& tabs);
    void createStatusBar();
    void createMenus();
    void createFileMenu();
    void createHelpMenu();
    void createCornerToolBar();
    void createWorkflows();
    void connectWorkflows();
    void connectTabs();
    QWidget* findTab(const QMetaObject& type) const;
    void loadSettings();
    void saveSettings();
    void loadExamples();
    void showRunTabIfWelcome();  // a run opened or started from the welcome page
    void offerExports();

    void onSelectionChanged();
    void showCurrent();
    void refreshCompare();
    void onBusyChanged(bool busy);

    ConfigPanel* config_;
    QPushButton *runButton_, *stopButton_;
    QTabWidget* tabs_;
    std::vector<TabSpec> tabSpecs_;  // one per tab, in order
    QList<RunView*> views_;          // the tabs that show the selected run
    QLabel* progressLabel_;
    QProgressBar* progressBar_;
    QToolButton* cancelWork_ = nullptr;  // beside the status: cancels an open or an apply
    QMenu* exportMenu_;
    QMenu* examplesMenu_;
    QAction* openAction_;
    QAction* openFolderAction_;
    QAction* saveAction_;
    QAction* runAction_;
    QAction* stopAction_;

    Messages* messages_;
    RunList* runs_;
    RunController* runner_;
    FileOpener* opener_;
    CategoryRulesControl* categoryRules_;
    FolderWatch* folders_;
    RecentFiles* recent_;
    ExportMenu* export_;
    RunWorkflow* workflow_;
    OpenWorkflow* opening_;
    RunSaving* saving_;
};

}  // namespace stepscope::ui
