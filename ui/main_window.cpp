#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QCollator>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <functional>
#include <tuple>

#include "bench/build_info.h"
#include "bench/cost_model.h"
#include "bench/environment.h"
#include "bench/memory_estimate.h"
#include "bench/runner.h"
#include "bench/slurm_array.h"
#include "bench/slurm_attention.h"
#include "bench/study.h"
#include "engines/isolated_run.h"
#include "exporter.h"
#include "models/format.h"
#include "models/run_label.h"
#include "pages/attention_page.h"
#include "pages/config_panel.h"
#include "pages/precision_page.h"
#include "pages/sweep_page.h"
#include "pages/welcome_page.h"
#include "results/attention_file.h"
#include "results/run_file.h"
#include "run_job.h"
#include "util/atomic_file.h"
#include "views/breakdown_view.h"
#include "views/compare_view.h"
#include "views/kernel_timeline_view.h"
#include "views/memory_view.h"
#include "views/step_timing_view.h"
#include "widgets/app_icons.h"

namespace stepscope::ui {

namespace {

constexpr int kMaxRecentFiles = 8;
constexpr int kIdRole = Qt::UserRole + 1;
constexpr qint64 kFormatHeadBytes = 64 * 1024;

// "batch 8 → 3, context 1024 → 512": what shrinking changed.
QString shrinkChanges(const RunConfig& from, const RunConfig& to) {
    QStringList changes;
    if (from.batchSize != to.batchSize) {
        changes << MainWindow::tr("batch %1 → %2").arg(from.batchSize).arg(to.batchSize);
    }
    if (from.contextLength != to.contextLength) {
        changes << MainWindow::tr("context %1 → %2").arg(from.contextLength).arg(to.contextLength);
    }
    return changes.join(", ");
}

enum class FileKind { Run, Attention, DtypeFlow, Other };

// What a file is, by its format field. The field sits near the top (keys are
// sorted: config, environment, flop_groups, format): the head says what the
// file is without reading a million memory events twice. Sets `error` when
// the file cannot be read at all.
FileKind fileKind(const QString& path, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = MainWindow::tr("cannot open '%1': %2").arg(path, file.errorString());
        return FileKind::Other;
    }
    QByteArray head = file.read(kFormatHeadBytes);
    if (!head.contains("\"stepscope-") && !file.atEnd()) {
        head += file.readAll();  // written by another tool in another key order
    }
    if (head.contains("\"stepscope-attention\"")) {
        return FileKind::Attention;
    }
    if (head.contains("\"stepscope-run\"")) {
        return FileKind::Run;
    }
    // `stepscope-cli dtypes --json`: an array of {what, kind, dtype}.
    return head.trimmed().startsWith('[') && head.contains("\"dtype\"") ? FileKind::DtypeFlow
                                                                        : FileKind::Other;
}

// A timer that calls `scan` once, 150 ms after the last of a burst of
// changes `watcher` reports (a rename into place is several events).
QTimer* rescanAfterChanges(QFileSystemWatcher* watcher, std::function<void()> scan) {
    auto* timer = new QTimer(watcher);
    timer->setSingleShot(true);
    timer->setInterval(150);
    QObject::connect(watcher, &QFileSystemWatcher::directoryChanged, timer,
                     qOverload<>(&QTimer::start));
    QObject::connect(watcher, &QFileSystemWatcher::fileChanged, timer, qOverload<>(&QTimer::start));
    QObject::connect(timer, &QTimer::timeout, watcher, std::move(scan));
    return timer;
}

// The points a Slurm array's folder will hold, in the array's order: each
// task's run file (absolute) and the config it runs. Empty for a folder that
// is no sweep array. Throws for an array file that cannot be read.
std::vector<std::pair<QString, RunConfig>> slurmSweepPlan(const QString& directory) {
    std::vector<std::pair<QString, RunConfig>> plan;
    const auto array = readSlurmArray(directory.toStdString());
    if (!array || array->kind != "sweep") {
        return plan;
    }
    const QDir dir(directory);
    for (const SlurmTask& task : array->tasks) {
        plan.emplace_back(
            QDir::cleanPath(dir.absoluteFilePath(QString::fromStdString(task.resultFile))),
            runConfigFromJson(task.inputText));
    }
    return plan;
}

// A sweep's points in its order: models by size, then context, mode and
// precision; the file name (numbers by value) for the rest.
bool sweepPointBefore(const RunResult& a, const QString& aFile, const RunResult& b,
                      const QString& bFile) {
    const auto key = [](const RunResult& r) {
        return std::tuple(r.parameterCount, r.config.contextLength, int(r.config.mode),
                          int(r.config.precision));
    };
    if (key(a) != key(b)) {
        return key(a) < key(b);
    }
    QCollator collator;
    collator.setNumericMode(true);
    return collator.compare(QFileInfo(aFile).fileName(), QFileInfo(bFile).fileName()) < 0;
}

// The files a user picks that stand for the folder that holds them.
bool standsForItsFolder(const QString& fileName) {
    static const QStringList names = {"sweep.csv", "sweep.md", "study.csv", "study.md",
                                      "attention.csv"};
    return names.contains(fileName);
}

// Compare columns are narrow: "#id" and what differs among the runs only.
QStringList compareLabels(const QList<const RunDocument*>& runs) {
    QList<RunConfig> configs;
    for (const RunDocument* run : runs) {
        configs << run->result.config;
    }
    const QStringList differing = differingFields(configs);
    QStringList labels;
    for (int i = 0; i < runs.size(); ++i) {
        labels << QString("#%1 %2").arg(runs[i]->id).arg(differing[i]).trimmed();
    }
    return labels;
}

// The configuration form in a scroll area that asks for the form's whole
// height: all of it shows where the screen has room; where it has not, the
// form scrolls rather than the window outgrowing the screen.
class FormScrollArea final : public QScrollArea {
public:
    explicit FormScrollArea(QWidget* form) {
        setWidget(form);
        setWidgetResizable(true);
        setFrameShape(QFrame::NoFrame);
        setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        form->installEventFilter(this);
    }
    QSize sizeHint() const override {
        const QSize form = widget()->sizeHint();
        return {form.width() + verticalScrollBar()->sizeHint().width(), form.height()};
    }
    QSize minimumSizeHint() const override {
        return {widget()->minimumSizeHint().width() + verticalScrollBar()->sizeHint().width(),
                kMinimumHeight};
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (watched == widget() && event->type() == QEvent::LayoutRequest) {
            updateGeometry();  // an error label or the read-only header came or went
        }
        return QScrollArea::eventFilter(watched, event);
    }

private:
    static constexpr int kMinimumHeight = 160;
};

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(tr("StepScope"));
    setWindowIcon(applicationIcon());
    setAcceptDrops(true);
    job_ = new RunJob(this);

    const DeviceInventory devices = probeDevices();
    config_ = new ConfigPanel(devices.cudaAvailable);
    runButton_ = new QPushButton(appIcon("run"), tr("Run"));
    runButton_->setDefault(true);
    stopButton_ = new QPushButton(appIcon("stop"), tr("Stop"));
    stopButton_->setEnabled(false);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(runButton_);
    buttons->addWidget(stopButton_);
    runList_ = new QListWidget;
    runList_->setMinimumHeight(150);  // several runs visible beside a tall form
    runList_->setToolTip(tr("Runs of this session. Tick two or more to compare them."));

    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->addWidget(new FormScrollArea(config_));
    leftLayout->addLayout(buttons);
    leftLayout->addWidget(new QLabel(tr("Runs")));
    leftLayout->addWidget(runList_, 1);
    auto* dock = new QDockWidget(tr("Configuration"), this);
    dock->setObjectName("configurationDock");
    dock->setWidget(left);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    banner_ = new QLabel;
    banner_->setWordWrap(true);
    banner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    banner_->hide();
    tabs_ = new QTabWidget;
    auto* central = new QWidget;
    auto* centralLayout = new QVBoxLayout(central);
    centralLayout->addWidget(banner_);
    centralLayout->addWidget(tabs_, 1);
    setCentralWidget(central);
    createViews();

    progressLabel_ = new QLabel(tr("Ready"));
    progressBar_ = new QProgressBar;
    progressBar_->setMaximumWidth(220);
    progressBar_->hide();
    statusBar()->addWidget(progressLabel_, 1);
    statusBar()->addPermanentWidget(progressBar_);

    createMenus();

    connect(runButton_, &QPushButton::clicked, this, &MainWindow::startRun);
    connect(stopButton_, &QPushButton::clicked, this, &MainWindow::stopRun);
    connect(config_, &ConfigPanel::runAgainRequested, this, &MainWindow::startRun);
    connect(config_, &ConfigPanel::changed, this, [this] {
        const bool errors = config_->showErrors(validate(config_->config(), validationContext()));
        if (!errors && bannerAbout_ == BannerAbout::ConfigErrors) {
            setBanner(QString(), false);  // the errors it spoke of are fixed
        }
        updateEstimate(!errors);
        sweep_->setBaseConfig(config_->config());
    });
    connect(runList_, &QListWidget::currentItemChanged, this, &MainWindow::onSelectionChanged);
    connect(runList_, &QListWidget::itemChanged, this, &MainWindow::refreshCompare);
    connect(job_, &RunJob::busyChanged, this, &MainWindow::onBusyChanged);
    connect(job_, &RunJob::runFinished, this, &MainWindow::onRunFinished);
    connect(job_, &RunJob::sweepFinished, this, [this](const QString& error) {
        sweep_->finish(error);
        progressLabel_->setText(error.isEmpty() ? tr("Sweep finished") : tr("Sweep ended early"));
        if (!error.isEmpty()) {
            setBanner(error, true);
        }
        Q_EMIT sweepFinished();
    });
    connect(job_->bridge(), &RunBridge::stepsArrived, this, &MainWindow::onStepsArrived);
    connect(job_->bridge(), &RunBridge::progressChanged, this, &MainWindow::onProgress);
    progressTick_ = new QTimer(this);
    progressTick_->setInterval(1000);
    connect(progressTick_, &QTimer::timeout, this, [this] {
        // Unless something else (Stop) has spoken since.
        if (lastProgress_ && progressLabel_->text() == progressShown_) {
            showProgress();
        }
    });
    connect(job_->bridge(), &RunBridge::sweepPointFinished, this,
            [this](int index, int, const RunResult& result, const QString& file) {
                addDocument(result, file);
                sweep_->addPoint(index, result);
            });
    connect(sweep_, &SweepPage::startRequested, this, &MainWindow::startSweep);
    connect(attention_, &AttentionPage::startRequested, this, &MainWindow::startAttention);
    connect(attention_, &AttentionPage::stopRequested, this, &MainWindow::stopRun);
    connect(job_->bridge(), &RunBridge::attentionPointsArrived, attention_,
            &AttentionPage::addPoints);
    connect(job_, &RunJob::attentionFinished, this, [this](const QString& error) {
        attention_->finish(error);
        progressLabel_->setText(error.isEmpty() ? tr("Attention grid finished")
                                                : tr("Attention grid ended early"));
        if (!error.isEmpty()) {
            setBanner(error, true);
        }
        Q_EMIT attentionFinished();
    });
    connect(sweep_, &SweepPage::stopRequested, this, &MainWindow::stopRun);

    // A sweep folder or a Slurm attention array filling elsewhere.
    sweepWatcher_ = new QFileSystemWatcher(this);
    sweepRescan_ = rescanAfterChanges(sweepWatcher_, [this] { scanSweepDirectory(); });
    attentionWatcher_ = new QFileSystemWatcher(this);
    rescanAfterChanges(attentionWatcher_, [this] { scanAttentionArray(); });

    loadSettings();
    loadExamples();
    tabs_->setCurrentWidget(welcome_);  // until something is opened or run
    sweep_->setBaseConfig(config_->config());
    updateEstimate(validate(config_->config(), validationContext()).empty());
}

MainWindow::~MainWindow() = default;

void MainWindow::createViews() {
    welcome_ = new WelcomePage;
    tabs_->addTab(welcome_, appIcon("welcome"), tr("Welcome"));
    connect(welcome_, &WelcomePage::exampleRequested, this, &MainWindow::openExample);
    connect(welcome_, &WelcomePage::recentFileRequested, this, &MainWindow::openRunFile);
    connect(welcome_, &WelcomePage::newRunRequested, this, &MainWindow::focusNewRun);
    // One line per view: later views (memory, attention, kernels) join here.
    timing_ = new StepTimingView;
    breakdown_ = new BreakdownView;
    timeline_ = new KernelTimelineView;
    memory_ = new MemoryView;
    views_ << timing_ << breakdown_ << timeline_ << memory_;
    for (RunView* view : views_) {
        tabs_->addTab(view, view->title());
    }
    compare_ = new CompareView;
    tabs_->addTab(compare_, tr("Compare"));
    sweep_ = new SweepPage;
    tabs_->addTab(sweep_, tr("Sweep"));
    attention_ = new AttentionPage;
    tabs_->addTab(attention_, tr("Attention"));
    // The timeline's visible range narrows the memory view when both come
    // from one run: they share the tracers' clock.
    connect(timeline_, &KernelTimelineView::visibleRangeChanged, this,
            [this](double startUs, double endUs) {
                const RunDocument* document = currentDocument();
                if (!memory_->followsTimeline() || !document || document->result.memory.empty() ||
                    document->result.timeline.step < 0) {
                    return;  // unlinked in the memory view, or nothing to link
                }
                const double shift =
                    document->result.timeline.clockOriginUs - document->result.memory.clockOriginUs;
                memory_->setTimeRange(startUs + shift, endUs + shift);
            });
    precision_ = new PrecisionPage;
    tabs_->addTab(precision_, tr("Precision"));
    // Each tab's icon, drawn for it (resources/icons/tab-*.svg).
    for (int i = 0; i < tabs_->count(); ++i) {
        const QString name = "tab-" + tabs_->tabText(i).toLower().replace(' ', '-');
        if (QFile::exists(":/icons/" + name + ".svg")) {
            tabs_->setTabIcon(i, appIcon(name));
        }
    }
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
        const QStringList paths = QFileDialog::getOpenFileNames(
            this, tr("Open run, attention or sweep files"), QString(),
            tr("StepScope files (*.json sweep.csv sweep.md study.csv study.md);;All files (*)"));
        for (const QString& path : paths) {
            openRunFile(path);
        }
    });
    open->setIcon(appIcon("document-open"));
    QAction* openFolder = file->addAction(tr("Open &folder (sweep or attention)…"), this, [this] {
        const QString path = QFileDialog::getExistingDirectory(
            this, tr("Open a sweep's folder or an attention folder"));
        if (!path.isEmpty()) {
            openRunFile(path);
        }
    });
    openFolder->setIcon(appIcon("folder-open"));
    openFolder->setIconText(tr("Open folder"));
    recentMenu_ = file->addMenu(tr("Open &recent"));
    QAction* save = file->addAction(appIcon("document-save"), tr("&Save run"), QKeySequence::Save,
                                    this, [this] { saveCurrent(false); });
    file->addAction(tr("Save run &as…"), QKeySequence::SaveAs, this, [this] { saveCurrent(true); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    runAction_ = run->addAction(appIcon("run"), tr("&Run"), QKeySequence(Qt::CTRL | Qt::Key_R),
                                this, &MainWindow::startRun);
    stopAction_ = run->addAction(appIcon("stop"), tr("&Stop"), QKeySequence(Qt::Key_Escape), this,
                                 &MainWindow::stopRun);
    stopAction_->setEnabled(false);

    exportMenu_ = menuBar()->addMenu(tr("&Export"));
    connect(exportMenu_, &QMenu::aboutToShow, this, &MainWindow::rebuildExportMenu);
    rebuildExportMenu();

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    examplesMenu_ = help->addMenu(appIcon("welcome"), tr("&Examples"));
    help->addAction(tr("&About StepScope"), this, [this] {
        QMessageBox::about(
            this, tr("About StepScope"),
            tr("<p><b>StepScope</b>: what a Transformer training step costs.</p>"
               "<pre>%1</pre>")
                .arg(QString::fromStdString(versionText("stepscope")).toHtmlEscaped()));
    });

    // The toolbar shares the menu bar's row: a row of its own would make the
    // window taller than a 700 px screen, the Sweep page's form being as tall
    // as it is. The icons are drawn on a 16 px grid.
    auto* toolbar = new QToolBar(tr("Main"), this);
    toolbar->setObjectName("mainToolBar");
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolbar->setIconSize(QSize(16, 16));
    toolbar->setMovable(false);
    toolbar->setContentsMargins(0, 0, 0, 0);
    menuBar()->setCornerWidget(toolbar, Qt::TopRightCorner);
    toolbar->addAction(open);
    toolbar->addAction(openFolder);
    toolbar->addAction(save);
    toolbar->addSeparator();
    toolbar->addAction(runAction_);
    toolbar->addAction(stopAction_);
    toolbar->addSeparator();
    // Its own action: an icon on the menu's would replace "Export" in the menu bar.
    auto* exportAction = new QAction(appIcon("export"), tr("Export"), this);
    exportAction->setMenu(exportMenu_);
    toolbar->addAction(exportAction);
    if (auto* button = qobject_cast<QToolButton*>(toolbar->widgetForAction(exportAction))) {
        button->setPopupMode(QToolButton::InstantPopup);
    }
    toolbar->addSeparator();
    toolbar->addAction(appIcon("welcome"), tr("Welcome"), this, &MainWindow::showWelcome);
}

// ---- welcome page and examples --------------------------------------------

void MainWindow::loadExamples() {
    QStringList searched;
    const QString directory = examplesDirectory(&searched);
    const QList<ExampleRun> examples = readExampleRuns(directory);
    welcome_->setExamples(examples, directory, searched);
    examplesMenu_->clear();
    for (const ExampleRun& example : examples) {
        QAction* action = examplesMenu_->addAction(example.title, this,
                                                   [this, example] { openExample(example); });
        action->setToolTip(example.description);
    }
    if (examples.isEmpty()) {
        examplesMenu_->addAction(tr("No examples found"))->setEnabled(false);
    }
    examplesMenu_->addSeparator();
    examplesMenu_->addAction(appIcon("welcome"), tr("&Welcome page"), this,
                             &MainWindow::showWelcome);
}

void MainWindow::showWelcome() {
    loadExamples();
    tabs_->setCurrentWidget(welcome_);
}

bool MainWindow::openExample(const ExampleRun& example) {
    if (!openRunFile(example.path)) {
        return false;
    }
    if (!example.tab.isEmpty()) {
        selectTab(example.tab);
    }
    return true;
}

void MainWindow::focusNewRun() {
    if (auto* dock = findChild<QDockWidget*>("configurationDock")) {
        dock->show();
        dock->raise();
    }
    showRunTabIfWelcome();
    if (config_->isReadOnly()) {
        config_->editCopy();  // a past run's config was shown: a new run starts from a copy
    }
    // The first field of the form that takes focus, where a new configuration begins.
    for (QWidget* field = config_->nextInFocusChain();
         field != config_ && config_->isAncestorOf(field); field = field->nextInFocusChain()) {
        if ((field->focusPolicy() & Qt::TabFocus) && field->isVisibleTo(config_) &&
            field->isEnabled()) {
            field->setFocus(Qt::TabFocusReason);
            break;
        }
    }
    progressLabel_->setText(tr("New run: set the configuration on the left, then press Run."));
}

void MainWindow::showRunTabIfWelcome() {
    if (tabs_->currentWidget() == welcome_) {
        tabs_->setCurrentWidget(timing_);
    }
}

// ---- settings -------------------------------------------------------------

void MainWindow::loadSettings() {
    QSettings settings;
    restoreGeometry(settings.value("window/geometry").toByteArray());
    restoreState(settings.value("window/state").toByteArray());
    recentFiles_ = settings.value("files/recent").toStringList();
    const QString config = settings.value("run/lastConfig").toString();
    if (!config.isEmpty()) {
        try {
            config_->setConfig(runConfigFromJson(config.toStdString()));
        } catch (const RunFileError&) {
            // A config from an older version: keep the defaults.
        }
    }
    rebuildRecentMenu();
}

void MainWindow::saveSettings() {
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    settings.setValue("files/recent", recentFiles_);
    settings.setValue("run/lastConfig", QString::fromStdString(runConfigToJson(config_->config())));
}

void MainWindow::addRecentFile(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recentFiles_.removeAll(absolute);
    recentFiles_.prepend(absolute);
    while (recentFiles_.size() > kMaxRecentFiles) {
        recentFiles_.removeLast();
    }
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    recentMenu_->clear();
    for (const QString& path : recentFiles_) {
        recentMenu_->addAction(path, this, [this, path] { openRunFile(path); });
    }
    recentMenu_->setEnabled(!recentFiles_.isEmpty());
    welcome_->setRecentFiles(recentFiles_);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    job_->cancel();
    saveSettings();
    event->accept();
}

// ---- documents ------------------------------------------------------------

RunDocument& MainWindow::addDocument(RunResult result, const QString& path) {
    RunDocument document;
    document.id = nextId_++;
    document.title = QString("#%1 %2").arg(document.id).arg(defaultTitle(result));  // until listed
    document.result = std::move(result);
    document.path = path;
    document.modified = path.isEmpty();
    documents_.push_back(std::move(document));
    auto* item = new QListWidgetItem(documents_.back().title);
    item->setData(kIdRole, documents_.back().id);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(Qt::Unchecked);
    runList_->addItem(item);
    refreshRunList();
    return documents_.back();
}

RunDocument* MainWindow::documentById(int id) {
    for (auto& document : documents_) {
        if (document.id == id) {
            return &document;
        }
    }
    return nullptr;
}

const RunDocument* MainWindow::currentDocument() const {
    const QListWidgetItem* item = runList_->currentItem();
    if (!item) {
        return nullptr;
    }
    const int id = item->data(kIdRole).toInt();
    for (const auto& document : documents_) {
        if (document.id == id) {
            return &document;
        }
    }
    return nullptr;
}

void MainWindow::refreshRunList() {
    // Titles name what differs among the runs of the session.
    QList<RunConfig> configs;
    for (const RunDocument& document : documents_) {
        configs << document.result.config;
    }
    const QStringList labels = listLabels(configs);
    for (size_t i = 0; i < documents_.size(); ++i) {
        documents_[i].title = QString("#%1 %2").arg(documents_[i].id).arg(labels[int(i)]);
    }
    const QSignalBlocker blocker(runList_);
    for (int row = 0; row < runList_->count(); ++row) {
        QListWidgetItem* item = runList_->item(row);
        const RunDocument* document = documentById(item->data(kIdRole).toInt());
        QString text = document->title;
        if (document->id == liveId_) {
            text += tr(" (running)");
        } else if (document->result.status != RunStatus::Ok) {
            text += " [" + QString::fromStdString(toString(document->result.status)) + "]";
        }
        if (document->modified) {
            text += " *";
        }
        item->setText(text);
        item->setToolTip(configSummary(document->result.config) + "\n" +
                         (document->path.isEmpty() ? tr("not saved") : document->path));
    }
}

void MainWindow::selectDocument(int id) {
    for (int row = 0; row < runList_->count(); ++row) {
        if (runList_->item(row)->data(kIdRole).toInt() == id) {
            runList_->setCurrentRow(row);
            return;
        }
    }
}

bool MainWindow::selectTab(const QString& title) {
    for (int i = 0; i < tabs_->count(); ++i) {
        if (tabs_->tabText(i).compare(title, Qt::CaseInsensitive) == 0) {
            tabs_->setCurrentIndex(i);
            return true;
        }
    }
    return false;
}

QWidget* MainWindow::currentTab() const {
    return tabs_->currentWidget();
}

QString MainWindow::currentTabTitle() const {
    return tabs_->tabText(tabs_->currentIndex());
}

void MainWindow::onSelectionChanged() {
    const RunDocument* document = currentDocument();
    if (document) {
        config_->showRunConfig(document->result.config, document->title);
    }
    if (bannerAbout_ == BannerAbout::Run && (!document || document->id != bannerRunId_)) {
        setBanner(QString(), false);  // it spoke of a run no longer shown
    }
    if (!job_->isRunning()) {
        progressLabel_->setText(tr("Ready"));  // the last run's outcome is its own business
    }
    showCurrent();
}

void MainWindow::showCurrent() {
    const RunDocument* document = currentDocument();
    for (RunView* view : views_) {
        view->showRun(document);
    }
}

void MainWindow::setCompared(const QList<int>& ids) {
    {
        const QSignalBlocker blocker(runList_);
        for (int row = 0; row < runList_->count(); ++row) {
            QListWidgetItem* item = runList_->item(row);
            item->setCheckState(ids.contains(item->data(kIdRole).toInt()) ? Qt::Checked
                                                                          : Qt::Unchecked);
        }
    }
    refreshCompare();
}

QList<const RunDocument*> MainWindow::comparedDocuments() const {
    QList<const RunDocument*> runs;
    for (int row = 0; row < runList_->count(); ++row) {
        const QListWidgetItem* item = runList_->item(row);
        const int id = item->data(kIdRole).toInt();
        const auto found = std::find_if(documents_.begin(), documents_.end(),
                                        [id](const RunDocument& d) { return d.id == id; });
        if (item->checkState() == Qt::Checked && found != documents_.end()) {
            runs << &*found;
        }
    }
    return runs;
}

void MainWindow::refreshCompare() {
    const QList<const RunDocument*> runs = comparedDocuments();
    compare_->showRuns(runs, compareLabels(runs));
}

bool MainWindow::openRunFile(const QString& path) {
    const QFileInfo info(path);
    if (info.isDir()) {
        return openDirectory(path);
    }
    if (!info.exists()) {
        showError(tr("Cannot open"), tr("'%1' does not exist.").arg(path));
        return false;
    }
    if (standsForItsFolder(info.fileName())) {
        return openDirectory(info.path());
    }
    QString error;
    const FileKind kind = fileKind(path, &error);
    if (!error.isEmpty()) {
        showError(tr("Cannot open run file"), error);
        return false;
    }
    RunResult result;
    try {
        if (kind == FileKind::Attention) {
            return openAttentionFile(path, readFile(path.toStdString()));
        }
        if (kind == FileKind::DtypeFlow) {
            if (!precision_->openDtypeFlowFile(path, &error)) {
                showError(tr("Cannot open dtype flow"), error);
                return false;
            }
            addRecentFile(path);
            tabs_->setCurrentWidget(precision_);
            return true;
        }
        if (kind != FileKind::Run) {
            // An image, a notebook, someone else's JSON: say so, not what a parser met.
            showError(tr("Cannot open run file"),
                      tr("'%1' is not a StepScope run file (a JSON file made by StepScope's "
                         "app or its command line, \"format\": \"stepscope-run\"), nor an "
                         "attention file (\"format\": \"stepscope-attention\").")
                          .arg(path));
            return false;
        }
        result = readRunFile(path.toStdString());  // its errors name the path
    } catch (const std::runtime_error& error) {
        showError(tr("Cannot open run file"), QString::fromUtf8(error.what()));
        return false;
    }
    RunDocument& document = addDocument(std::move(result), path);
    addRecentFile(path);
    selectDocument(document.id);
    showRunTabIfWelcome();
    return true;
}

bool MainWindow::openDirectory(const QString& path) {
    const QDir dir(path);
    if (dir.exists("attention.json")) {
        return openRunFile(dir.filePath("attention.json"));
    }
    try {
        if (const auto array = readSlurmArray(path.toStdString());
            array && array->kind == kAttentionArrayKind) {
            return openAttentionArray(path);
        }
    } catch (const std::exception& error) {
        showError(tr("Cannot open folder"), QString::fromUtf8(error.what()));
        return false;
    }
    // A Slurm array's folder is a sweep before any of its points is done.
    bool sweep = dir.exists("sweep.csv") || dir.exists("sweep.md") || dir.exists(kSlurmArrayFile);
    const QFileInfoList jsonFiles = dir.entryInfoList({"*.json"}, QDir::Files);
    for (qsizetype i = 0; !sweep && i < jsonFiles.size(); ++i) {
        QString error;
        sweep = fileKind(jsonFiles[i].absoluteFilePath(), &error) == FileKind::Run;
    }
    if (!sweep) {
        showError(tr("Cannot open folder"),
                  tr("'%1' is neither a sweep's folder (run files, with sweep.csv and sweep.md, "
                     "as stepscope-cli sweep --out DIR writes them) nor an attention folder "
                     "(attention.json, as stepscope-cli attention --out DIR writes it): it holds "
                     "no StepScope file. A sweep whose first point is still running has none "
                     "yet: open its folder again once that point is done.")
                      .arg(path));
        return false;
    }
    return openSweepDirectory(path);
}

bool MainWindow::openSweepDirectory(const QString& path) {
    const QString dir = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
    if (dir != sweepDir_) {
        stopWatchingSweep();
        sweepDir_ = dir;
        sweepWatcher_->addPath(dir);
        try {
            sweepPlan_ = slurmSweepPlan(dir);
        } catch (const std::exception& error) {
            showError(tr("Cannot open folder"), QString::fromUtf8(error.what()));
        }
    }
    scanSweepDirectory();
    const QList<int> points = showSweepDirectory();
    addRecentFile(dir);
    tabs_->setCurrentWidget(sweep_);
    if (!points.isEmpty()) {
        selectDocument(points.first());  // the sweep's first point, its config in the panel
    }
    return true;
}

void MainWindow::scanSweepDirectory() {
    if (sweepDir_.isEmpty()) {
        return;
    }
    const QDir dir(sweepDir_);
    if (!dir.exists()) {
        setBanner(
            tr("The sweep's folder %1 is gone; its points stay in the run list.").arg(sweepDir_),
            true, BannerAbout::SweepFiles);
        return;
    }
    std::vector<std::pair<QString, RunResult>> fresh;
    QStringList problems;
    // A Slurm array's tasks write into points/, which appears with the first.
    QFileInfoList candidates = dir.entryInfoList({"*.json"}, QDir::Files, QDir::Name);
    if (const QString points = dir.filePath("points"); QFileInfo(points).isDir()) {
        if (!sweepWatcher_->directories().contains(points)) {
            sweepWatcher_->addPath(points);
        }
        candidates += QDir(points).entryInfoList({"*.json"}, QDir::Files, QDir::Name);
    }
    for (const QFileInfo& info : candidates) {
        if (info.fileName() == kSlurmArrayFile) {
            continue;
        }
        const QString file = info.absoluteFilePath();
        if (sweepFiles_.count(file)) {
            continue;
        }
        if (const auto seen = sweepUnreadable_.find(file);
            seen != sweepUnreadable_.end() && seen->second.first == info.lastModified()) {
            if (!seen->second.second.isEmpty()) {
                problems << seen->second.second;
            }
            continue;  // unchanged since it was read
        }
        QString error;
        const FileKind kind = fileKind(file, &error);
        try {
            if (!error.isEmpty()) {
                throw std::runtime_error(error.toStdString());
            }
            if (kind != FileKind::Run) {
                // Not a run file (yet: a writer that does not rename into
                // place): looked at again when it changes.
                sweepUnreadable_[file] = {info.lastModified(), QString()};
                sweepWatcher_->addPath(file);
                continue;
            }
            fresh.emplace_back(file, readRunFile(file.toStdString()));
            if (sweepUnreadable_.erase(file)) {
                sweepWatcher_->removePath(file);
            }
        } catch (const std::exception& failure) {
            const QString why = QString::fromUtf8(failure.what());
            sweepUnreadable_[file] = {info.lastModified(), why};
            sweepWatcher_->addPath(file);  // read again once it changes
            problems << why;
        }
    }
    // Into the run list in the sweep's order; a run opened before (from this
    // folder or on its own) is not listed twice.
    std::sort(fresh.begin(), fresh.end(), [](const auto& a, const auto& b) {
        return sweepPointBefore(a.second, a.first, b.second, b.first);
    });
    for (auto& [file, result] : fresh) {
        const auto known =
            std::find_if(documents_.begin(), documents_.end(), [&](const RunDocument& d) {
                return !d.modified && QFileInfo(d.path).absoluteFilePath() == file;
            });
        sweepFiles_[file] =
            known != documents_.end() ? known->id : addDocument(std::move(result), file).id;
    }
    if (!fresh.empty()) {
        showSweepDirectory();
    }
    if (!problems.isEmpty()) {
        setBanner(tr("%1 of the sweep in %2 could not be read:")
                          .arg(countText(problems.size(), "run file"), sweepDir_) +
                      "\n" + problems.join('\n'),
                  true, BannerAbout::SweepFiles);
    } else if (bannerAbout_ == BannerAbout::SweepFiles) {
        setBanner(QString(), false);
    }
}

QList<int> MainWindow::showSweepDirectory() {
    QList<std::pair<const RunDocument*, QString>> points;
    for (const auto& [file, id] : sweepFiles_) {
        if (const RunDocument* document = documentById(id)) {
            points.append({document, file});
        }
    }
    std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
        return sweepPointBefore(a.first->result, a.second, b.first->result, b.second);
    });
    std::vector<SweepPage::Row> rows;
    QList<int> ids;
    if (sweepPlan_.empty()) {
        for (const auto& [document, name] : points) {
            rows.push_back({document->result.config, &document->result});
            ids << document->id;
        }
    } else {  // the array's order, its points still to come among them
        for (const auto& [file, config] : sweepPlan_) {
            const auto done = std::find_if(points.begin(), points.end(),
                                           [&](const auto& point) { return point.second == file; });
            rows.push_back({config, done == points.end() ? nullptr : &done->first->result});
            if (done != points.end()) {
                ids << done->first->id;
            }
        }
    }
    sweep_->showPoints(sweepDir_, rows, true);
    return ids;
}

void MainWindow::stopWatchingSweep() {
    if (!sweepWatcher_->directories().isEmpty()) {
        sweepWatcher_->removePaths(sweepWatcher_->directories());
    }
    if (!sweepWatcher_->files().isEmpty()) {
        sweepWatcher_->removePaths(sweepWatcher_->files());
    }
    sweepRescan_->stop();
    sweepDir_.clear();
    sweepFiles_.clear();
    sweepUnreadable_.clear();
    sweepPlan_.clear();
    if (bannerAbout_ == BannerAbout::SweepFiles) {
        setBanner(QString(), false);
    }
}

bool MainWindow::openAttentionArray(const QString& directory) {
    attentionArrayDir_ = QDir::cleanPath(QFileInfo(directory).absoluteFilePath());
    if (!attentionWatcher_->directories().isEmpty()) {
        attentionWatcher_->removePaths(attentionWatcher_->directories());
    }
    attentionWatcher_->addPath(attentionArrayDir_);
    scanAttentionArray();
    addRecentFile(attentionArrayDir_);
    tabs_->setCurrentWidget(attention_);
    return true;
}

void MainWindow::scanAttentionArray() {
    const QString points = attentionArrayDir_ + "/points";
    if (QFileInfo(points).isDir() && !attentionWatcher_->directories().contains(points)) {
        attentionWatcher_->addPath(points);  // made with the first task's file
    }
    try {
        const AttentionCollection collection =
            readSlurmAttention(attentionArrayDir_.toStdString(), "folder");
        attention_->setPoints(collection.points);
        attention_->finish(
            tr("%1 of %2 points from %3; watched: points appear as their tasks finish%4.")
                .arg(collection.finished())
                .arg(collection.total)
                .arg(attentionArrayDir_)
                .arg(collection.failed.empty()
                         ? QString()
                         : tr("; %1 failed (stepscope-cli attention --collect lists them)")
                               .arg(collection.failed.size())));
    } catch (const std::exception& error) {
        setBanner(QString::fromUtf8(error.what()), true);
    }
}

bool MainWindow::openAttentionFile(const QString& path, const std::string& text) {
    try {
        attention_->setPoints(attentionResultFromJson(text), path);
    } catch (const RunFileError& error) {
        showError(tr("Cannot open attention file"),
                  QString("'%1': %2").arg(path, QString::fromUtf8(error.what())));
        return false;
    }
    addRecentFile(path);
    tabs_->setCurrentWidget(attention_);
    return true;
}

bool MainWindow::saveDocument(int id, const QString& path) {
    RunDocument* document = documentById(id);
    if (!document) {
        return false;
    }
    try {
        writeRunFile(document->result, path.toStdString());
    } catch (const std::exception& error) {
        showError(tr("Cannot save run"), QString::fromUtf8(error.what()));
        return false;
    }
    document->path = path;
    document->modified = false;
    addRecentFile(path);
    refreshRunList();
    return true;
}

void MainWindow::saveCurrent(bool askForPath) {
    const RunDocument* document = currentDocument();
    if (!document || document->id == liveId_) {
        return;
    }
    QString path = document->path;
    if (askForPath || path.isEmpty()) {
        path =
            QFileDialog::getSaveFileName(this, tr("Save run"), path, tr("StepScope runs (*.json)"));
    }
    if (!path.isEmpty()) {
        saveDocument(document->id, path);
    }
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) {
        event->acceptProposedAction();
    }
}

void MainWindow::dropEvent(QDropEvent* event) {
    for (const QUrl& url : event->mimeData()->urls()) {
        if (url.isLocalFile()) {
            openRunFile(url.toLocalFile());
        }
    }
}

// ---- running --------------------------------------------------------------

bool MainWindow::isRunning() const {
    return job_->isRunning();
}

bool MainWindow::startRun() {
    if (job_->isRunning()) {
        return false;
    }
    RunConfig config = config_->config();
    if (config_->showErrors(validate(config, validationContext()))) {
        setBanner(tr("The configuration has errors; they are shown beside their fields."), true,
                  BannerAbout::ConfigErrors);
        return false;
    }
    setBanner(QString(), false);
    if (!preflight(config)) {
        return false;
    }
    RunResult live;
    live.config = config;
    // A user's Python model says its own count when the worker starts it.
    live.parameterCount = config.pyModel.empty() ? parameterCount(config.model) : 0;
    liveId_ = addDocument(live, QString()).id;
    selectDocument(liveId_);
    showRunTabIfWelcome();
    job_->startRun(config, availableMemory_);
    return true;
}

// "Will this fit?" answered as the user edits, before anything runs.
void MainWindow::updateEstimate(bool configValid) {
    if (!configValid) {
        config_->showEstimate(tr("Memory estimate: once the errors above are fixed."), QString(),
                              std::nullopt);
        return;
    }
    const RunConfig config = config_->config();
    if (!config.pyModel.empty()) {
        config_->showEstimate(tr("Memory estimate: none for a Python model of your own; StepScope "
                                 "predicts its reference model only."),
                              QString(), std::nullopt);
        return;
    }
    const MemoryPrediction prediction = predictMemory(config);
    size_t largest = 0;
    for (size_t c = 1; c < kMemoryCategories; ++c) {
        if (prediction.maxByCategory[c] > prediction.maxByCategory[largest]) {
            largest = c;
        }
    }
    QString text =
        tr("Estimated peak %1 in %2; largest: %3 %4.")
            .arg(bytesText(prediction.peakBytes), phaseName(prediction.peakPhase),
                 toString(MemoryCategory(largest)), bytesText(prediction.maxByCategory[largest]));
    std::optional<bool> fits;
    if (config.device == DeviceKind::Cpu) {
        const int64_t available = availableMemory_.value_or(availableSystemMemory());
        fits = preflightBytes(config) <= available;
        text += " " + (*fits ? tr("Fits in the %1 free, with a %2% margin.")
                             : tr("Does not fit in the %1 free, with a %2% margin."))
                          .arg(bytesText(available))
                          .arg(int(kPreflightMargin * 100));
    } else if (prediction.deviceBytes) {
        fits = prediction.peakBytes <= *prediction.deviceBytes;
        text += " " + (*fits ? tr("Fits in the device's %1.") : tr("Exceeds the device's %1."))
                          .arg(bytesText(*prediction.deviceBytes));
    }
    QStringList details;
    for (const std::string& line : prediction.explanation) {
        details << QString::fromStdString(line);
    }
    config_->showEstimate(text, details.join('\n'), fits);
}

// On the CPU a run that does not fit ends the whole program: offer to shrink
// it to what the estimate says fits, or to run anyway. False: do not start.
bool MainWindow::preflight(RunConfig& config) {
    // A user's Python model is not ours to predict (nor does the runner try).
    if (config.device != DeviceKind::Cpu || !config.pyModel.empty()) {
        return true;
    }
    const int64_t needed = preflightBytes(config);
    const int64_t available = availableMemory_.value_or(availableSystemMemory());
    if (available <= 0 || needed <= available) {
        return true;
    }
    const std::optional<RunConfig> shrunk = shrinkToFit(config, available);
    QString text = tr("The run's predicted peak is %1 (%2 with a %3% margin), but only %4 is "
                      "free. %5")
                       .arg(bytesText(predictMemory(config).peakBytes), bytesText(needed))
                       .arg(int(kPreflightMargin * 100))
                       .arg(bytesText(available))
                       .arg(config.engine == Engine::LibTorch
                                ? tr("Running out of memory on the CPU ends the whole program.")
                                : tr("Running out of memory on the CPU ends the Python worker, "
                                     "or another program the system picks."));
    if (shrunk) {
        text +=
            "\n\n" + tr("Shrink to fit: %1 (about %2).")
                         .arg(shrinkChanges(config, *shrunk), bytesText(preflightBytes(*shrunk)));
    } else {
        RunConfig smallest = config;
        smallest.batchSize = 1;
        smallest.contextLength = 1;
        const MemoryEstimate floor = estimateMemory(smallest);
        text +=
            "\n\n" + tr("No batch or context fits: even batch 1 at context 1 needs about %1, "
                        "of which parameters, gradients and optimizer state are %2. Choose a "
                        "smaller model, or a machine with more memory.")
                         .arg(bytesText(preflightBytes(smallest)),
                              bytesText(floor.parameters + floor.gradients + floor.optimizerState));
    }
    QMessageBox box(QMessageBox::Warning, tr("This run may not fit in memory"), text,
                    QMessageBox::Cancel, this);
    QPushButton* shrink =
        shrunk ? box.addButton(tr("Shrink to fit"), QMessageBox::AcceptRole) : nullptr;
    QPushButton* force = box.addButton(tr("Run anyway"), QMessageBox::DestructiveRole);
    // Enter must never start a run the box just said may end the program.
    if (shrink) {
        box.setDefaultButton(shrink);
    } else {
        box.setDefaultButton(QMessageBox::Cancel);
    }
    box.exec();
    if (shrink && box.clickedButton() == shrink) {
        const QString changes = shrinkChanges(config, *shrunk);
        config = *shrunk;
        config_->setConfig(config);
        config_->editCopy();  // the form now holds a new config, not a past run's
        setBanner(tr("Shrunk to fit in %1: %2.").arg(bytesText(available), changes), false);
        return true;
    }
    if (box.clickedButton() == force) {
        config.force = true;
        return true;
    }
    return false;
}

void MainWindow::stopRun() {
    if (job_->isRunning()) {
        job_->cancel();
        progressLabel_->setText(tr("Stopping after the step under way…"));
    }
}

void MainWindow::onBusyChanged(bool busy) {
    lastProgress_.reset();
    if (busy) {
        progressTick_->start();
    } else {
        progressTick_->stop();
    }
    runButton_->setEnabled(!busy);
    runAction_->setEnabled(!busy);
    config_->runAgainButton()->setEnabled(!busy);
    stopButton_->setEnabled(busy);
    stopAction_->setEnabled(busy);
    sweep_->setRunning(busy);
    attention_->setRunning(busy);
    progressBar_->setVisible(busy);
    if (!busy) {
        progressBar_->reset();
    }
}

void MainWindow::onStepsArrived(const std::vector<StepRecord>& steps) {
    RunDocument* document = documentById(liveId_);
    if (!document) {
        return;  // a sweep: its points arrive whole
    }
    document->result.steps.insert(document->result.steps.end(), steps.begin(), steps.end());
    document->result.summary =
        summarizeSteps(document->result.steps, document->result.config, std::nullopt);
    if (currentDocument() == document) {
        showCurrent();
    }
}

void MainWindow::onProgress(const RunProgress& progress) {
    lastProgress_ = progress;
    sinceProgress_.restart();
    showProgress();
    progressBar_->setRange(0, progress.totalSteps);
    progressBar_->setValue(progress.step);
}

// The last progress, its elapsed time counting on between reports: a
// torch.compile can take minutes without one.
void MainWindow::showProgress() {
    const RunProgress& progress = *lastProgress_;
    const int done = progress.step;
    // Steps are named by their index, as the step table and the CLI name them.
    const RunDocument* live = documentById(liveId_);
    QString text = progress.phase == "setup" ? tr("Building the model and data")
                   : progress.phase == "compile"
                       ? tr("Compiling the model (torch.compile, mode %1)")
                             .arg(live ? QString::fromStdString(live->result.config.compileMode)
                                       : QString("default"))
                       : tr("Step %1 (%2) · %3")
                             .arg(progress.step)
                             .arg(progress.warmup ? tr("warm-up") : tr("measured"),
                                  QString::fromStdString(progress.phase));
    text += tr(" · %1 of %2 steps done").arg(done).arg(progress.totalSteps);
    const double elapsedMs = progress.elapsedMs + double(sinceProgress_.elapsed());
    text += tr(" · %1 s elapsed").arg(elapsedMs / 1000, 0, 'f', 1);
    if (done > 0) {
        const double remaining = progress.elapsedMs / done * (progress.totalSteps - done);
        text += tr(" · about %1 s left").arg(remaining / 1000, 0, 'f', 1);
    }
    progressLabel_->setText(text);
    progressShown_ = text;
}

void MainWindow::onRunFinished(const RunResult& result) {
    RunDocument* document = documentById(liveId_);
    liveId_ = 0;
    if (document) {
        document->result = result;
        document->modified = true;
    }
    refreshRunList();
    showCurrent();
    const QString status = QString::fromStdString(toString(result.status));
    const QString who = document ? QString("#%1").arg(document->id) : QString();
    progressLabel_->setText(tr("Run %1 %2").arg(who, status));
    if (result.status != RunStatus::Ok) {
        const QString message = QString::fromStdString(result.message);
        // "Run #4: cancelled after 7 of 27 steps", not "cancelled: cancelled after …".
        setBanner(message.startsWith(status) ? tr("Run %1: %2").arg(who, message)
                  : message.isEmpty()        ? tr("Run %1 %2").arg(who, status)
                                             : tr("Run %1 %2: %3").arg(who, status, message),
                  result.status != RunStatus::Cancelled, BannerAbout::Run,
                  document ? document->id : 0);
    }
    Q_EMIT runFinished(result);
}

void MainWindow::startSweep() {
    if (job_->isRunning()) {
        return;
    }
    const SweepPage::Study study = sweep_->study();
    if (study == SweepPage::Study::Attention) {
        attention_->setForm(attentionStudySpec(config_->config().device));
        tabs_->setCurrentWidget(attention_);
        startAttention();
        return;
    }
    const QString outDir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) +
                           "/sweeps/" + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss");
    const std::string cli = pointCli_.empty() ? cliBesideExecutable() : pointCli_;
    SweepSpec spec;
    WarmupStudySpec warmup;
    try {
        if (study == SweepPage::Study::Warmup) {
            warmup = sweep_->warmupSpec(config_->config(), outDir);
            warmup.cli = cli;
            spec = warmupStudySweep(warmup);
        } else {
            spec = sweep_->spec(config_->config(), outDir);
        }
        std::vector<ConfigError> errors;
        const ValidationContext context = validationContext();
        for (const auto& point : expandSweep(spec)) {
            for (auto& error : validate(point, context)) {
                error.message += " (" + sweepPointFileName(point, spec.axes) + ")";
                errors.push_back(error);
            }
        }
        if (!errors.empty()) {
            throw InvalidConfigError(errors);
        }
    } catch (const InvalidConfigError& error) {
        setBanner(QString::fromUtf8(error.what()).trimmed(), true);
        return;
    }
    setBanner(QString(), false);
    stopWatchingSweep();  // the tab shows this sweep now, not a folder's
    sweep_->begin(spec,
                  spec.base.device == DeviceKind::Cpu
                      ? std::optional<int64_t>(availableMemory_.value_or(availableSystemMemory()))
                      : std::nullopt);
    const bool isolated = sweep_->isolated();
    job_->startSweep(spec.axes, [study, spec, warmup, isolated, cli](const SweepControl& given) {
        SweepControl control = given;
        if (isolated) {
            control.runPoint = freshProcessRunner(cli);
        }
        switch (study) {
            case SweepPage::Study::Warmup:
                runWarmupStudy(warmup, control);
                break;
            case SweepPage::Study::Precision:
                runPrecisionStudy(spec, control);
                break;
            default:
                runSweep(spec, control);
                break;
        }
    });
}

void MainWindow::startAttention() {
    if (job_->isRunning()) {
        return;
    }
    AttentionBenchSpec spec;
    try {
        spec = attention_->spec(config_->config().device);
        validateAttentionSpec(spec);
    } catch (const InvalidConfigError& error) {
        setBanner(QString::fromUtf8(error.what()).trimmed(), true);
        return;
    }
    setBanner(QString(), false);
    attention_->begin(int(spec.backends.size() * spec.headDims.size() * spec.seqLens.size() *
                          spec.precisions.size()));
    job_->startAttention(spec);
}

// ---- export ---------------------------------------------------------------

QList<ExportTarget> MainWindow::currentExportTargets() {
    QWidget* page = tabs_->currentWidget();
    if (auto* view = qobject_cast<RunView*>(page)) {
        return view->exportTargets();
    }
    if (page == compare_) {
        return compare_->exportTargets();
    }
    if (page == sweep_) {
        return sweep_->exportTargets();
    }
    if (page == attention_) {
        return attention_->exportTargets();
    }
    return {};
}

void MainWindow::rebuildExportMenu() {
    exportMenu_->clear();
    for (const ExportTarget& target : currentExportTargets()) {
        if (target.plot) {
            exportMenu_->addAction(tr("Chart “%1” as PNG or PDF…").arg(target.name), this,
                                   [this, target] { exportChart(target); });
        } else {
            exportMenu_->addAction(tr("Table “%1” as CSV or Markdown…").arg(target.name), this,
                                   [this, target] { exportTable(target); });
        }
    }
    exportMenu_->addSeparator();
    QAction* report =
        exportMenu_->addAction(tr("Report of the current run…"), this, &MainWindow::exportReport);
    report->setEnabled(currentDocument() != nullptr);
}

void MainWindow::exportChart(const ExportTarget& target) {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export chart"), target.name + ".png", tr("PNG image (*.png);;PDF (*.pdf)"));
    if (path.isEmpty()) {
        return;
    }
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Chart size"));
    auto* width = new QSpinBox;
    width->setRange(200, 8000);
    width->setValue(1600);
    auto* height = new QSpinBox;
    height->setRange(150, 8000);
    height->setValue(900);
    auto* form = new QFormLayout(&dialog);
    form->addRow(tr("Width (px)"), width);
    form->addRow(tr("Height (px)"), height);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    if (const QString error = exporter::savePlot(target.plot, path, width->value(), height->value(),
                                                 chartTitle(target));
        !error.isEmpty()) {
        showError(tr("Export failed"), error);
    }
}

QString MainWindow::chartTitle(const ExportTarget& target) const {
    QWidget* page = tabs_->currentWidget();
    if (page == compare_) {
        // The runs by what differs, then what they share.
        const QList<const RunDocument*> runs = comparedDocuments();
        QStringList shared = runs.isEmpty() ? QStringList() : configFields(runs[0]->result.config);
        for (const RunDocument* run : runs) {
            const QStringList fields = configFields(run->result.config);
            shared.erase(std::remove_if(shared.begin(), shared.end(),
                                        [&](const QString& f) { return !fields.contains(f); }),
                         shared.end());
        }
        return target.name + " — " + compareLabels(runs).join(" vs ") + "\n" + shared.join(" · ");
    }
    if (qobject_cast<RunView*>(page)) {
        if (const RunDocument* document = currentDocument()) {
            return target.name + " — " + document->title + "\n" +
                   configSummary(document->result.config);
        }
    }
    return target.name;
}

void MainWindow::exportTable(const ExportTarget& target) {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export table"), target.name + ".csv", tr("CSV (*.csv);;Markdown (*.md)"));
    if (!path.isEmpty()) {
        if (const QString error = exporter::saveTable(target.table, path); !error.isEmpty()) {
            showError(tr("Export failed"), error);
        }
    }
}

void MainWindow::exportReport() {
    const RunDocument* document = currentDocument();
    if (!document) {
        return;
    }
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export report"), "report.md", tr("Markdown (*.md)"));
    if (path.isEmpty()) {
        return;
    }
    QList<ExportTarget> targets;
    for (RunView* view : views_) {
        targets += view->exportTargets();
    }
    if (const QString error = exporter::saveReport(*document, targets, path); !error.isEmpty()) {
        showError(tr("Export failed"), error);
    }
}

// ---- messages -------------------------------------------------------------

void MainWindow::showError(const QString& title, const QString& message) {
    // One at a time, none lost: two files that fail to open are two messages,
    // the second shown when the first is dismissed.
    if (errorDialog_ && errorDialog_->isVisible()) {
        waitingErrors_.append({title, message});
        errorDialog_->setInformativeText(
            tr("%1 after this one.").arg(countText(waitingErrors_.size(), "more message")));
        return;
    }
    // Window-modal and non-blocking, so that a run in progress keeps streaming.
    errorDialog_ = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
    errorDialog_->setAttribute(Qt::WA_DeleteOnClose);
    connect(errorDialog_, &QDialog::finished, this,
            [this] { QTimer::singleShot(0, this, &MainWindow::showNextError); });
    errorDialog_->open();
}

void MainWindow::showNextError() {
    if (waitingErrors_.isEmpty() || (errorDialog_ && errorDialog_->isVisible())) {
        return;
    }
    const auto [title, message] = waitingErrors_.takeFirst();
    showError(title, message);
    if (!waitingErrors_.isEmpty()) {
        errorDialog_->setInformativeText(
            tr("%1 after this one.").arg(countText(waitingErrors_.size(), "more message")));
    }
}

void MainWindow::setBanner(const QString& text, bool error, BannerAbout about, int runId) {
    bannerAbout_ = text.isEmpty() ? BannerAbout::Nothing : about;
    bannerRunId_ = runId;
    banner_->setText(text);
    banner_->setStyleSheet(error ? "background: #fdecea; color: #8a1f11; padding: 6px;"
                                 : "background: #eef5fb; padding: 6px;");
    banner_->setVisible(!text.isEmpty());
}

QString MainWindow::progressText() const {
    return progressLabel_->text();
}
QString MainWindow::bannerText() const {
    return banner_->isHidden() ? QString() : banner_->text();
}

}  // namespace stepscope::ui
