#pragma once

#include <QDateTime>
#include <QElapsedTimer>
#include <QList>
#include <QMainWindow>
#include <QMessageBox>
#include <QPointer>

#include <deque>
#include <map>
#include <utility>

#include "bench/runner.h"
#include "models/run_document.h"
#include "pages/example_runs.h"

class QAction;
class QFileSystemWatcher;
class QLabel;
class QListWidget;
class QMenu;

class QProgressBar;
class QPushButton;
class QTabWidget;
class QTimer;

namespace stepscope::ui {

class AttentionPage;
class BreakdownView;
class KernelTimelineView;
class MemoryView;
class PrecisionPage;
class CompareView;
class ConfigPanel;
class RunJob;
class RunView;
class StepTimingView;
class SweepPage;
class WelcomePage;
struct ExportTarget;

// The desktop app: configuration on the left, runs of the session below it,
// one tab per view. Heavy work runs in RunJob's worker thread.
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
    // Opens what `stepscope` and `stepscope-cli` write: a run file into the
    // run list; an attention file (attention.json, or its folder) into the
    // Attention tab; a sweep's folder (its run files; its sweep.csv or
    // sweep.md stand for it) into the Sweep tab and the run list, watched
    // while it is shown so that points still arriving appear. Anything else,
    // or a file that cannot be read, is a message naming the path and what
    // was expected; nothing changes then.
    // A dtype flow (`stepscope-cli dtypes --json`) opens in the Precision tab.
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

    const std::deque<RunDocument>& documents() const { return documents_; }
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
    // The error message on screen; messages that arrive while one is shown
    // wait their turn (each file that fails to open has its own).
    QMessageBox* lastErrorDialog() const { return errorDialog_; }
    int waitingErrorCount() const { return int(waitingErrors_.size()); }
    // The sweep folder the Sweep tab shows and watches; empty when none.
    QString watchedSweepDirectory() const { return sweepDir_; }
    QString progressText() const;
    QString bannerText() const;
    // Pre-flight and the runner act as if this much memory were free (nullopt:
    // what the system reports). For tests and demonstrations.
    void setAvailableMemory(std::optional<int64_t> bytes) { availableMemory_ = bytes; }
    // The stepscope-cli that runs points in fresh processes (default: the
    // one beside this program).
    void setPointCli(const QString& cli) { pointCli_ = cli.toStdString(); }
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
    void loadSettings();
    void saveSettings();
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();
    void rebuildExportMenu();
    void loadExamples();
    void showRunTabIfWelcome();  // a run opened or started from the welcome page
    QList<ExportTarget> currentExportTargets();
    void exportChart(const ExportTarget& target);
    void exportTable(const ExportTarget& target);
    void exportReport();
    void saveCurrent(bool askForPath);

    RunDocument& addDocument(RunResult result, const QString& path);
    RunDocument* documentById(int id);
    void refreshRunList();
    void onSelectionChanged();
    void showCurrent();
    QList<const RunDocument*> comparedDocuments() const;
    void refreshCompare();
    void showError(const QString& title, const QString& message);
    // What the banner says is about: it goes when that stops being true.
    enum class BannerAbout { Nothing, ConfigErrors, Run, SweepFiles, Other };
    void setBanner(const QString& text, bool error, BannerAbout about = BannerAbout::Other,
                   int runId = 0);
    bool preflight(RunConfig& config);
    void updateEstimate(bool configValid);

    void onStepsArrived(const std::vector<StepRecord>& steps);
    void onProgress(const RunProgress& progress);
    void showProgress();
    void onRunFinished(const RunResult& result);
    void startSweep();
    void startAttention();
    bool openAttentionFile(const QString& path, const std::string& text);
    // A Slurm attention array's folder before --collect: the points done so
    // far in the Attention tab, read again as tasks write theirs.
    bool openAttentionArray(const QString& directory);
    void scanAttentionArray();
    bool openDirectory(const QString& path);
    bool openSweepDirectory(const QString& path);
    void scanSweepDirectory();        // reads the run files that appeared since the last scan
    QList<int> showSweepDirectory();  // the points' documents, in the table's order
    void stopWatchingSweep();
    void showNextError();
    void onBusyChanged(bool busy);

    ConfigPanel* config_;
    QPushButton *runButton_, *stopButton_;
    QListWidget* runList_;
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
    QLabel* banner_;
    QLabel* progressLabel_;
    QProgressBar* progressBar_;
    QMenu* recentMenu_;
    QMenu* exportMenu_;
    QMenu* examplesMenu_;
    QAction* runAction_;
    QAction* stopAction_;
    RunJob* job_;
    QPointer<QMessageBox> errorDialog_;
    QList<std::pair<QString, QString>> waitingErrors_;  // title, message
    // The sweep folder shown in the Sweep tab: its run files by path and the
    // documents they became; files that could not be read, with their
    // modification time and why (read again once they change).
    QString sweepDir_;
    std::map<QString, int> sweepFiles_;
    std::map<QString, std::pair<QDateTime, QString>> sweepUnreadable_;
    // A Slurm array's folder: the points it will hold, in its order (the
    // run file each task writes and the config it runs); empty otherwise.
    std::vector<std::pair<QString, RunConfig>> sweepPlan_;
    QString attentionArrayDir_;
    QFileSystemWatcher* attentionWatcher_;
    QFileSystemWatcher* sweepWatcher_;
    QTimer* sweepRescan_;
    QTimer* progressTick_;
    std::optional<RunProgress> lastProgress_;  // of the job under way
    QElapsedTimer sinceProgress_;
    QString progressShown_;

    std::deque<RunDocument> documents_;  // stable addresses as runs are added
    int nextId_ = 1;
    int liveId_ = 0;  // the document a run in progress fills, 0 when none
    BannerAbout bannerAbout_ = BannerAbout::Nothing;
    int bannerRunId_ = 0;  // the run a Run banner is about
    std::optional<int64_t> availableMemory_;
    std::string pointCli_;
    QStringList recentFiles_;
};

}  // namespace stepscope::ui
