#pragma once

#include <QElapsedTimer>
#include <QList>
#include <QMainWindow>
#include <QPointer>

#include <deque>

#include "bench/runner.h"
#include "run_document.h"

class QLabel;
class QListWidget;
class QMenu;
#include <QMessageBox>

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
    // Opens a run file into the session; on error shows a dialog and changes nothing.
    bool openRunFile(const QString& path);
    bool saveDocument(int id, const QString& path);
    // Ticks these runs in the run list, which the Compare view shows.
    void setCompared(const QList<int>& ids);
    void selectDocument(int id);
    bool selectTab(const QString& title);  // false when no tab has that title

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
    QMessageBox* lastErrorDialog() const { return errorDialog_; }
    QString progressText() const;
    QString bannerText() const;
    // Pre-flight and the runner act as if this much memory were free (nullopt:
    // what the system reports). For tests and demonstrations.
    void setAvailableMemory(std::optional<int64_t> bytes) { availableMemory_ = bytes; }
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
    enum class BannerAbout { Nothing, ConfigErrors, Run, Other };
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
    QLabel* banner_;
    QLabel* progressLabel_;
    QProgressBar* progressBar_;
    QMenu* recentMenu_;
    QMenu* exportMenu_;
    RunJob* job_;
    QPointer<QMessageBox> errorDialog_;
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
    QStringList recentFiles_;
};

}  // namespace stepscope::ui
