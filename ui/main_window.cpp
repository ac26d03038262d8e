#include "main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <stdexcept>
#include <string>
#include <utility>

#include "controllers/category_rules_control.h"
#include "controllers/export_menu.h"
#include "controllers/file_opener.h"
#include "controllers/folder_watch.h"
#include "controllers/messages.h"
#include "controllers/open_workflow.h"
#include "controllers/recent_files.h"
#include "controllers/run_controller.h"
#include "controllers/run_list.h"
#include "controllers/run_saving.h"
#include "controllers/run_workflow.h"
#include "engines/build_info.h"
#include "engines/environment.h"
#include "models/file_filters.h"
#include "pages/config_panel.h"
#include "results/run_file.h"
#include "widgets/app_icons.h"
#include "widgets/corner_toolbar.h"
#include "widgets/dock_room.h"
#include "widgets/file_dialogs.h"
#include "widgets/form_scroll_area.h"
#include "widgets/tabbed_window_keys.h"

namespace stepscope::ui {

namespace {

// What the tabs need to show a chart beside its legend and a table's
// figures whole: on a small screen the dock narrows to leave them this.
constexpr int kCentralWidth = 680;

}  // namespace

// The table of tabs (docs/developing.md, "Adding a tab"). A tab the window
// does not know needs nothing more: a RunView is shown every selected run,
// and exportTargets() joins the Export menu.
std::vector<TabSpec> MainWindow::defaultTabs() {
    return {
        tabOf<WelcomePage>(QT_TR_NOOP("Welcome"), "welcome"),
        tabOf<StepTimingView>(QT_TR_NOOP("Step timing"), "tab-step-timing"),
        tabOf<BreakdownView>(QT_TR_NOOP("Breakdown"), "tab-breakdown"),
        tabOf<KernelTimelineView>(QT_TR_NOOP("Timeline"), "tab-timeline"),
        tabOf<MemoryView>(QT_TR_NOOP("Memory"), "tab-memory"),
        tabOf<RanksView>(QT_TR_NOOP("Ranks"), "tab-ranks"),
        tabOf<CompareView>(QT_TR_NOOP("Compare"), "tab-compare"),
        tabOf<SweepPage>(QT_TR_NOOP("Sweep"), "tab-sweep"),
        tabOf<AttentionPage>(QT_TR_NOOP("Attention"), "tab-attention"),
        tabOf<CollectivePage>(QT_TR_NOOP("Collectives"), "tab-collectives"),
        tabOf<PrecisionPage>(QT_TR_NOOP("Precision"), "tab-precision"),
    };
}

MainWindow::MainWindow(QWidget* parent) : MainWindow(defaultTabs(), parent) {}

MainWindow::MainWindow(const std::vector<TabSpec>& tabs, QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(tr("StepScope"));
    setWindowIcon(applicationIcon());
    setAcceptDrops(true);
    messages_ = new Messages(this);
    runs_ = new RunList(this);
    runner_ = new RunController(this);
    opener_ = new FileOpener(this);
    categoryRules_ = new CategoryRulesControl(runs_, opener_, this);
    folders_ = new FolderWatch(runs_, this);
    config_ = new ConfigPanel(probeDevices().cudaAvailable);
    QDockWidget* dock = createDock();
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    tabs_ = new QTabWidget;
    auto* central = new QWidget;
    auto* centralLayout = new QVBoxLayout(central);
    // The banner comes and goes under the tabs: showing it never moves the
    // tabs or what is under the pointer in them.
    centralLayout->addWidget(tabs_, 1);
    centralLayout->addWidget(messages_->banner());
    setCentralWidget(central);
    createTabs(tabs);
    createStatusBar();
    createMenus();
    installTabbedWindowKeys(this, tabs_, config_, {runButton_, stopButton_, runs_->widget()});
    createWorkflows();
    connectWorkflows();
    connectTabs();

    loadSettings();
    keepRoomForCentralWidget(this, dock, kCentralWidth);
    loadExamples();
    tabs_->setCurrentWidget(welcomePage());  // until something is opened or run
    workflow_->configLoaded();
}

MainWindow::~MainWindow() = default;

// The configuration, Run and Stop, and the runs of the session.
QDockWidget* MainWindow::createDock() {
    runButton_ = new QPushButton(appIcon("run"), tr("Run"));
    runButton_->setDefault(true);
    stopButton_ = new QPushButton(appIcon("stop"), tr("Stop"));
    stopButton_->setEnabled(false);
    connect(runButton_, &QPushButton::clicked, this, &MainWindow::startRun);
    connect(stopButton_, &QPushButton::clicked, this, &MainWindow::stopRun);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(runButton_);
    buttons->addWidget(stopButton_);

    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->addWidget(new FormScrollArea(config_));
    leftLayout->addLayout(buttons);
    leftLayout->addWidget(new QLabel(tr("Runs")));
    leftLayout->addWidget(runs_->widget(), 1);
    leftLayout->addWidget(runs_->legend());
    auto* dock = new QDockWidget(tr("Configuration"), this);
    dock->setObjectName("configurationDock");
    dock->setWidget(left);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    return dock;
}

void MainWindow::createTabs(const std::vector<TabSpec>& tabs) {
    tabSpecs_ = tabs;
    for (const TabSpec& spec : tabSpecs_) {
        QWidget* page = spec.make();
        tabs_->addTab(page, tr(spec.title));
        if (spec.icon) {
            tabs_->setTabIcon(tabs_->count() - 1, appIcon(spec.icon));
        }
        if (auto* view = qobject_cast<RunView*>(page)) {
            views_ << view;
        }
    }
    // The window wires these: a table without one is a programming error,
    // said here rather than met as a null pointer on first use.
    const std::pair<const char*, QWidget*> wired[] = {
        {"Welcome", welcomePage()},     {"Step timing", stepTimingView()},
        {"Breakdown", breakdownView()}, {"Timeline", timelineView()},
        {"Memory", memoryView()},       {"Compare", compareView()},
        {"Sweep", sweepPage()},         {"Attention", attentionPage()},
        {"Precision", precisionPage()}};
    for (const auto& [title, tab] : wired) {
        if (!tab) {
            throw std::logic_error(std::string("MainWindow: the table of tabs has no ") + title +
                                   " tab, which the window wires (start from defaultTabs())");
        }
    }
}

QWidget* MainWindow::findTab(const QMetaObject& type) const {
    for (int i = 0; i < tabs_->count(); ++i) {
        if (tabs_->widget(i)->metaObject()->inherits(&type)) {
            return tabs_->widget(i);
        }
    }
    return nullptr;
}

void MainWindow::createStatusBar() {
    progressLabel_ = new QLabel(tr("Ready"));
    progressBar_ = new QProgressBar;
    progressBar_->setMaximumWidth(220);
    progressBar_->hide();
    cancelWork_ = new QToolButton;
    cancelWork_->setObjectName("cancelWork");
    cancelWork_->setText(tr("Cancel"));
    cancelWork_->setToolTip(tr("Stop opening files or applying category rules"));
    statusBar()->addWidget(progressLabel_, 1);
    statusBar()->addPermanentWidget(cancelWork_);
    statusBar()->addPermanentWidget(progressBar_);
}

void MainWindow::createWorkflows() {
    workflow_ = new RunWorkflow({runner_, runs_, config_, sweepPage(), attentionPage(), folders_,
                                 messages_, progressLabel_, progressBar_},
                                this);
    opening_ = new OpenWorkflow(
        {opener_, runs_, recent_, folders_, categoryRules_, messages_, sweepPage(), attentionPage(),
         precisionPage(), collectivePage(), progressLabel_, cancelWork_},
        this);
    saving_ = new RunSaving(runs_, workflow_, this);
}

// What the controllers say, shown: which tab comes to the front, what the
// selected run's views show, which buttons may be pressed.
void MainWindow::connectWorkflows() {
    connect(workflow_, &RunWorkflow::busyChanged, this, &MainWindow::onBusyChanged);
    connect(workflow_, &RunWorkflow::shownRunChanged, this, &MainWindow::showCurrent);
    // The steps arrive live in the run's views: from Sweep, Precision, Compare
    // or Welcome they would go unseen, so Step timing comes to the front.
    connect(workflow_, &RunWorkflow::runStarted, this, [this] {
        if (!views_.contains(qobject_cast<RunView*>(tabs_->currentWidget()))) {
            tabs_->setCurrentWidget(stepTimingView());
        }
    });
    connect(workflow_, &RunWorkflow::attentionStarted, this,
            [this] { tabs_->setCurrentWidget(attentionPage()); });
    connect(workflow_, &RunWorkflow::runFinished, this, &MainWindow::runFinished);
    connect(workflow_, &RunWorkflow::sweepFinished, this, &MainWindow::sweepFinished);
    connect(workflow_, &RunWorkflow::attentionFinished, this, &MainWindow::attentionFinished);
    connect(opening_, &OpenWorkflow::runOpened, this, [this](bool memoryOnly) {
        if (memoryOnly) {
            tabs_->setCurrentWidget(memoryView());
        } else {
            showRunTabIfWelcome();
        }
    });
    connect(opening_, &OpenWorkflow::pageWanted, tabs_, &QTabWidget::setCurrentWidget);
    connect(opening_, &OpenWorkflow::tabWanted, this, &MainWindow::selectTab);
    connect(runs_, &RunList::currentChanged, this, &MainWindow::onSelectionChanged);
    connect(runs_, &RunList::comparedChanged, this, &MainWindow::refreshCompare);
    connect(runs_, &RunList::saved, recent_, &RecentFiles::add);
    connect(runs_, &RunList::saveFailed, messages_, &Messages::showError);
    // Snapshots categorised again: what shows them draws them again.
    connect(categoryRules_, &CategoryRulesControl::applied, this, [this] {
        showCurrent();
        refreshCompare();
    });
}

// What one tab asks of another, or of a controller.
void MainWindow::connectTabs() {
    WelcomePage* welcome = welcomePage();
    connect(welcome, &WelcomePage::exampleRequested, this,
            [this](const ExampleRun& example) { openFiles({example.path}, example.tab); });
    connect(welcome, &WelcomePage::recentFileRequested, this,
            [this](const QString& path) { openFiles({path}); });
    connect(welcome, &WelcomePage::newRunRequested, this, &MainWindow::focusNewRun);
    connect(recent_, &RecentFiles::changed, welcome, &WelcomePage::setRecentFiles);
    MemoryView* memory = memoryView();
    connect(memory, &MemoryView::categoryRulesRequested, categoryRules_,
            &CategoryRulesControl::edit);
    connect(memory, &MemoryView::snapshotDeviceRequested, opening_,
            &OpenWorkflow::showSnapshotDevice);
    // The timeline's visible range narrows the memory view when both come
    // from one run: they share the tracers' clock.
    connect(timelineView(), &KernelTimelineView::visibleRangeChanged, this,
            [this, memory](double startUs, double endUs) {
                const RunDocument* document = currentDocument();
                if (!memory->followsTimeline() || !document || !document->hasMemory() ||
                    document->result.timeline.step < 0) {
                    return;  // unlinked in the memory view, or nothing to link
                }
                const double shift =
                    document->result.timeline.clockOriginUs - document->result.memory.clockOriginUs;
                memory->setTimeRange(startUs + shift, endUs + shift);
            });
}

void MainWindow::createMenus() {
    createFileMenu();
    QMenu* run = menuBar()->addMenu(tr("&Run"));
    runAction_ = run->addAction(appIcon("run"), tr("&Run"), QKeySequence(Qt::CTRL | Qt::Key_R),
                                this, &MainWindow::startRun);
    stopAction_ = run->addAction(appIcon("stop"), tr("&Stop"), QKeySequence(Qt::Key_Escape), this,
                                 &MainWindow::stopRun);
    stopAction_->setEnabled(false);

    exportMenu_ = menuBar()->addMenu(tr("&Export"));
    export_ = new ExportMenu(exportMenu_, this);
    connect(export_, &ExportMenu::aboutToShow, this, &MainWindow::offerExports);
    connect(export_, &ExportMenu::failed, messages_, &Messages::showError);
    offerExports();

    QMenu* settings = menuBar()->addMenu(tr("&Settings"));
    settings->addAction(tr("Memory &category rules…"), categoryRules_, &CategoryRulesControl::edit);
    createHelpMenu();
    createCornerToolBar();
}

void MainWindow::createFileMenu() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    // Every kind the opener reads, as core/files' table names it and its patterns.
    openAction_ = file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
        const QStringList paths = askOpenFiles(this, tr("Open runs, recordings or results"),
                                               openFileFilters(FileOpener::kindsOpened()));
        if (!paths.isEmpty()) {
            openFiles(paths);
        }
    });
    openAction_->setIcon(appIcon("document-open"));
    openFolderAction_ =
        file->addAction(tr("Open &folder (sweep, attention, traces)…"), this, [this] {
            const QString path = askFolder(this, openFolderCaption(FileOpener::kindsOpened()));
            if (!path.isEmpty()) {
                openFiles({path});
            }
        });
    openFolderAction_->setIcon(appIcon("folder-open"));
    openFolderAction_->setIconText(tr("Open folder"));
    recent_ = new RecentFiles(file->addMenu(tr("Open &recent")), this);
    connect(recent_, &RecentFiles::openRequested, this,
            [this](const QString& path) { openFiles({path}); });
    saveAction_ = file->addAction(appIcon("document-save"), tr("&Save run"), QKeySequence::Save,
                                  this, [this] { saving_->saveCurrent(false); });
    file->addAction(tr("Save run &as…"), QKeySequence::SaveAs, this,
                    [this] { saving_->saveCurrent(true); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

void MainWindow::createHelpMenu() {
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    examplesMenu_ = help->addMenu(appIcon("welcome"), tr("&Examples"));
    help->addAction(tr("&About StepScope"), this, [this] {
        // The library's path may break after each '/': in a <pre> it ran
        // on one line past the box's edge.
        QString version = QString::fromStdString(versionText("stepscope")).toHtmlEscaped();
        version.replace('/', QStringLiteral("/\u200B")).replace('\n', QStringLiteral("<br>"));
        QMessageBox::about(this, tr("About StepScope"),
                           tr("<p><b>StepScope</b>: what a Transformer training step costs.</p>"
                              "<p>%1</p>")
                               .arg(version));
    });
}

void MainWindow::createCornerToolBar() {
    // Its own action: an icon on the menu's would replace "Export" in the menu bar.
    auto* exportAction = new QAction(appIcon("export"), tr("Export"), this);
    exportAction->setMenu(exportMenu_);
    auto* welcome = new QAction(appIcon("welcome"), tr("Welcome"), this);
    connect(welcome, &QAction::triggered, this, &MainWindow::showWelcome);
    addCornerToolBar(menuBar(), {openAction_, openFolderAction_, saveAction_, nullptr, runAction_,
                                 stopAction_, nullptr, exportAction, nullptr, welcome});
}

// ---- welcome page and examples --------------------------------------------

void MainWindow::loadExamples() {
    QStringList searched;
    const QString directory = examplesDirectory(&searched);
    const QList<ExampleRun> examples = readExampleRuns(directory);
    welcomePage()->setExamples(examples, directory, searched);
    fillExamplesMenu(examplesMenu_, examples,
                     [this](const ExampleRun& example) { openFiles({example.path}, example.tab); });
    examplesMenu_->addSeparator();
    examplesMenu_->addAction(appIcon("welcome"), tr("&Welcome page"), this,
                             &MainWindow::showWelcome);
}

void MainWindow::showWelcome() {
    loadExamples();
    tabs_->setCurrentWidget(welcomePage());
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
    if (tabs_->currentWidget() == welcomePage()) {
        tabs_->setCurrentWidget(stepTimingView());
    }
}

// ---- settings and closing -------------------------------------------------

void MainWindow::loadSettings() {
    QSettings settings;
    restoreGeometry(settings.value("window/geometry").toByteArray());
    restoreState(settings.value("window/state").toByteArray());
    const QString config = settings.value("run/lastConfig").toString();
    if (!config.isEmpty()) {
        try {
            config_->setConfig(runConfigFromJson(config.toStdString()));
        } catch (const RunFileError&) {
            // A config from an older version: keep the defaults.
        }
    }
    recent_->load();
}

void MainWindow::saveSettings() {
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    recent_->save();
    // Code a received file names is not carried into the next start, where
    // it would run without the question (issue 45): the last config of the
    // user's own stays.
    if (config_->codeFromFile().empty()) {
        settings.setValue("run/lastConfig",
                          QString::fromStdString(runConfigToJson(config_->config())));
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!saving_->keepUnsaved()) {
        event->ignore();  // the user cancelled: nothing closes, nothing is lost
        return;
    }
    runner_->stop();
    opener_->cancel();  // a file still being read is not shown in a closed window
    saveSettings();
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (FileOpener::acceptsDrop(event->mimeData())) {
        event->acceptProposedAction();
    }
}

void MainWindow::dropEvent(QDropEvent* event) {
    if (const QStringList paths = FileOpener::droppedPaths(event->mimeData()); !paths.isEmpty()) {
        openFiles(paths);
    }
}

// ---- documents and tabs ---------------------------------------------------

const std::deque<RunDocument>& MainWindow::documents() const {
    return runs_->documents();
}

const RunDocument* MainWindow::currentDocument() const {
    return runs_->current();
}

void MainWindow::selectDocument(int id) {
    runs_->select(id);
}

void MainWindow::setCompared(const QList<int>& ids) {
    runs_->setCompared(ids);
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
        if (document->canShowConfig()) {
            config_->showRunConfig(document->result.config, document->title, !document->madeHere);
        } else {
            config_->showNoConfig(document->title, document->recordingFacts());
        }
    }
    messages_->clearRunBannerUnlessAbout(document ? document->id : 0);
    if (!isRunning()) {
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

void MainWindow::refreshCompare() {
    const QList<const RunDocument*> runs = runs_->compared();
    compareView()->showRuns(runs, RunList::compareLabels(runs));
}

bool MainWindow::saveDocument(int id, const QString& path) {
    return saving_->save(id, path);
}

int MainWindow::openFiles(const QStringList& paths, const QString& tab) {
    return opening_->openFiles(paths, tab);
}

bool MainWindow::openRunFile(const QString& path) {
    return opening_->openRunFile(path);
}

// ---- running --------------------------------------------------------------

bool MainWindow::isRunning() const {
    return workflow_->isRunning();
}

bool MainWindow::startRun() {
    if (!config_->formShown()) {
        // A recording's facts stood in the form's place: the run is made from
        // the form, and its errors are shown beside its fields, so show them.
        config_->editCopy();
    }
    return workflow_->startRun();
}

void MainWindow::stopRun() {
    workflow_->stopRun();
}

void MainWindow::onBusyChanged(bool busy) {
    runButton_->setEnabled(!busy);
    runAction_->setEnabled(!busy);
    stopButton_->setEnabled(busy);
    stopAction_->setEnabled(busy);
}

void MainWindow::setAvailableMemory(std::optional<int64_t> bytes) {
    runner_->setAvailableMemory(bytes);
}

void MainWindow::setPointCli(const QString& cli) {
    runner_->setPointCli(cli.toStdString());
}

void MainWindow::setUnsavedRunsFolder(const QString& folder) {
    saving_->setUnsavedRunsFolder(folder);
}

// ---- export ---------------------------------------------------------------

QList<ExportTarget> MainWindow::currentExportTargets() {
    const int shown = tabs_->currentIndex();
    const TabSpec* spec =
        shown >= 0 && size_t(shown) < tabSpecs_.size() ? &tabSpecs_[size_t(shown)] : nullptr;
    return spec && spec->exports ? spec->exports(tabs_->widget(shown)) : QList<ExportTarget>();
}

void MainWindow::offerExports() {
    const QList<ExportTarget> targets = currentExportTargets();
    QStringList titles;
    for (const ExportTarget& target : targets) {
        titles << chartTitle(target);
    }
    QList<ExportTarget> report;
    for (RunView* view : views_) {
        report += view->exportTargets();
    }
    export_->offer(targets, titles, currentDocument(), report);
}

QString MainWindow::chartTitle(const ExportTarget& target) const {
    QWidget* page = tabs_->currentWidget();
    if (page == compareView()) {
        return runs_->compareTitle(target.name);
    }
    if (qobject_cast<RunView*>(page)) {
        if (const RunDocument* document = currentDocument()) {
            return target.name + " — " + document->title + "\n" + document->summary();
        }
    }
    return target.name;
}

// ---- messages -------------------------------------------------------------

QMessageBox* MainWindow::lastErrorDialog() const {
    return messages_->lastErrorDialog();
}

int MainWindow::waitingErrorCount() const {
    return messages_->waitingErrorCount();
}

QString MainWindow::watchedSweepDirectory() const {
    return folders_->sweepDirectory();
}

QString MainWindow::progressText() const {
    return progressLabel_->text();
}

QString MainWindow::bannerText() const {
    return messages_->bannerText();
}

}  // namespace stepscope::ui
