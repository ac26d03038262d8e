#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QEventLoop>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>

#include "controllers/category_rules_control.h"
#include "controllers/export_menu.h"
#include "controllers/file_opener.h"
#include "controllers/folder_watch.h"
#include "controllers/messages.h"
#include "controllers/opening_status.h"
#include "controllers/preflight.h"
#include "controllers/recent_files.h"
#include "controllers/run_controller.h"
#include "controllers/run_list.h"
#include "controllers/sweep_launch.h"
#include "engines/build_info.h"
#include "engines/environment.h"
#include "engines/runner.h"
#include "experiments/study.h"
#include "models/format.h"
#include "models/run_label.h"
#include "pages/attention_page.h"
#include "pages/config_panel.h"
#include "pages/precision_page.h"
#include "pages/sweep_page.h"
#include "pages/welcome_page.h"
#include "results/run_file.h"
#include "views/breakdown_view.h"
#include "views/compare_view.h"
#include "views/kernel_timeline_view.h"
#include "views/memory_view.h"
#include "views/step_timing_view.h"
#include "widgets/app_icons.h"
#include "widgets/corner_toolbar.h"
#include "widgets/form_scroll_area.h"
#include "widgets/unsaved_runs.h"

namespace stepscope::ui {

namespace {

// "run-3_nano_ctx32_train-step.json" in `folder`, or with "-2", "-3", … where
// that name is taken: Save all never writes over a file.
QString freeRunFileName(const QString& folder, const RunResult& result, int id) {
    QString stem = QString("run-%1_%2_ctx%3_%4")
                       .arg(id)
                       .arg(QString::fromStdString(result.config.model.name))
                       .arg(result.config.contextLength)
                       .arg(QString::fromStdString(toString(result.config.mode)));
    stem.replace(QRegularExpression("[^A-Za-z0-9._-]"), "_");
    QString path = QDir(folder).filePath(stem + ".json");
    for (int n = 2; QFileInfo::exists(path); ++n) {
        path = QDir(folder).filePath(QString("%1-%2.json").arg(stem).arg(n));
    }
    return path;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(tr("StepScope"));
    setWindowIcon(applicationIcon());
    setAcceptDrops(true);
    messages_ = new Messages(this);
    runs_ = new RunList(this);
    runner_ = new RunController(this);
    opener_ = new FileOpener(this);
    categoryRules_ = new CategoryRulesControl(runs_, opener_, this);
    folders_ = new FolderWatch(runs_, this);

    const DeviceInventory devices = probeDevices();
    config_ = new ConfigPanel(devices.cudaAvailable);
    runButton_ = new QPushButton(appIcon("run"), tr("Run"));
    runButton_->setDefault(true);
    stopButton_ = new QPushButton(appIcon("stop"), tr("Stop"));
    stopButton_->setEnabled(false);
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
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    tabs_ = new QTabWidget;
    auto* central = new QWidget;
    auto* centralLayout = new QVBoxLayout(central);
    // The banner comes and goes under the tabs: showing it never moves the
    // tabs or what is under the pointer in them.
    centralLayout->addWidget(tabs_, 1);
    centralLayout->addWidget(messages_->banner());
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
        if (!errors) {
            messages_->clearBannerAbout(Messages::About::ConfigErrors);  // they are fixed
        }
        updateEstimate(!errors);
        sweep_->setBaseConfig(config_->config());
    });
    connect(runs_, &RunList::currentChanged, this, &MainWindow::onSelectionChanged);
    connect(runs_, &RunList::comparedChanged, this, &MainWindow::refreshCompare);
    connect(runs_, &RunList::saved, recent_, &RecentFiles::add);
    connect(runs_, &RunList::saveFailed, messages_, &Messages::showError);
    connectRuns();
    connectOpener();
    connectSnapshotDevices();

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
    connect(welcome_, &WelcomePage::exampleRequested, this,
            [this](const ExampleRun& example) { openFiles({example.path}, example.tab); });
    connect(welcome_, &WelcomePage::recentFileRequested, this,
            [this](const QString& path) { openFiles({path}); });
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
            tr("StepScope files (*.json sweep.csv sweep.md study.csv study.md);;PyTorch memory "
               "snapshots (*.pickle *.pkl *.json);;All files (*)"));
        if (!paths.isEmpty()) {
            openFiles(paths);
        }
    });
    open->setIcon(appIcon("document-open"));
    QAction* openFolder = file->addAction(tr("Open &folder (sweep or attention)…"), this, [this] {
        const QString path = QFileDialog::getExistingDirectory(
            this, tr("Open a sweep's folder or an attention folder"));
        if (!path.isEmpty()) {
            openFiles({path});
        }
    });
    openFolder->setIcon(appIcon("folder-open"));
    openFolder->setIconText(tr("Open folder"));
    recent_ = new RecentFiles(file->addMenu(tr("Open &recent")), this);
    connect(recent_, &RecentFiles::openRequested, this,
            [this](const QString& path) { openFiles({path}); });
    connect(recent_, &RecentFiles::changed, welcome_, &WelcomePage::setRecentFiles);
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

    QMenu* exportMenu = menuBar()->addMenu(tr("&Export"));
    export_ = new ExportMenu(exportMenu, this);
    connect(export_, &ExportMenu::aboutToShow, this, &MainWindow::offerExports);
    connect(export_, &ExportMenu::failed, messages_, &Messages::showError);
    offerExports();

    QMenu* settings = menuBar()->addMenu(tr("&Settings"));
    settings->addAction(tr("Memory &category rules…"), categoryRules_, &CategoryRulesControl::edit);
    connect(memory_, &MemoryView::categoryRulesRequested, categoryRules_,
            &CategoryRulesControl::edit);
    // Snapshots categorised again: what shows them draws them again.
    connect(categoryRules_, &CategoryRulesControl::applied, this, [this] {
        showCurrent();
        refreshCompare();
    });

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

    // Its own action: an icon on the menu's would replace "Export" in the menu bar.
    auto* exportAction = new QAction(appIcon("export"), tr("Export"), this);
    exportAction->setMenu(exportMenu);
    auto* welcome = new QAction(appIcon("welcome"), tr("Welcome"), this);
    connect(welcome, &QAction::triggered, this, &MainWindow::showWelcome);
    addCornerToolBar(menuBar(), {open, openFolder, save, nullptr, runAction_, stopAction_, nullptr,
                                 exportAction, nullptr, welcome});
}

// ---- welcome page and examples --------------------------------------------

void MainWindow::loadExamples() {
    QStringList searched;
    const QString directory = examplesDirectory(&searched);
    const QList<ExampleRun> examples = readExampleRuns(directory);
    welcome_->setExamples(examples, directory, searched);
    fillExamplesMenu(examplesMenu_, examples,
                     [this](const ExampleRun& example) { openFiles({example.path}, example.tab); });
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
    settings.setValue("run/lastConfig", QString::fromStdString(runConfigToJson(config_->config())));
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!keepUnsavedRuns()) {
        event->ignore();  // the user cancelled: nothing closes, nothing is lost
        return;
    }
    runner_->stop();
    opener_->cancel();  // a file still being read is not shown in a closed window
    saveSettings();
    event->accept();
}

// Runs made in this session and not saved would be gone with the window:
// asks (Save all, Discard, Cancel) as document apps do. False: stay open.
bool MainWindow::keepUnsavedRuns() {
    QStringList titles;
    for (const RunDocument& document : runs_->documents()) {
        if (document.modified) {
            titles << document.title;
        }
    }
    if (titles.isEmpty()) {
        return true;
    }
    switch (askAboutUnsavedRuns(this, titles, runner_->isRunning())) {
        case UnsavedRunsAnswer::Discard:
            return true;
        case UnsavedRunsAnswer::Cancel:
            return false;
        case UnsavedRunsAnswer::SaveAll:
            break;
    }
    const QString folder =
        unsavedRunsFolder_.isEmpty()
            ? QFileDialog::getExistingDirectory(this, tr("Save the unsaved runs into"),
                                                QSettings().value("files/saveAllFolder").toString())
            : unsavedRunsFolder_;
    if (folder.isEmpty()) {
        return false;
    }
    QSettings().setValue("files/saveAllFolder", folder);
    finishRunInProgress();
    for (const RunDocument& document : runs_->documents()) {
        if (document.modified &&
            !saveDocument(document.id, document.path.isEmpty()
                                           ? freeRunFileName(folder, document.result, document.id)
                                           : document.path)) {
            return false;  // the message says why; the window stays
        }
    }
    return true;
}

void MainWindow::finishRunInProgress() {
    if (!runner_->isRunning()) {
        return;
    }
    QEventLoop loop;
    connect(runner_, &RunController::busyChanged, &loop, [&loop](bool busy) {
        if (!busy) {
            loop.quit();
        }
    });
    stopRun();
    loop.exec();  // after the step under way; the live document is then whole
}

// ---- documents ------------------------------------------------------------

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
            config_->showRunConfig(document->result.config, document->title);
        } else {
            config_->showNoConfig(document->title);
        }
    }
    messages_->clearRunBannerUnlessAbout(document ? document->id : 0);
    if (!runner_->isRunning()) {
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
    compare_->showRuns(runs, RunList::compareLabels(runs));
}

bool MainWindow::saveDocument(int id, const QString& path) {
    return runs_->save(id, path);
}

void MainWindow::saveCurrent(bool askForPath) {
    const RunDocument* document = currentDocument();
    if (!document || document->id == runs_->liveId()) {
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

// ---- opening --------------------------------------------------------------

int MainWindow::openFiles(const QStringList& paths, const QString& tab) {
    tabAfterOpen_ = tab;  // the latest open's: an older one's tab no longer matters
    return opener_->open(paths);
}

bool MainWindow::openRunFile(const QString& path) {
    QEventLoop loop;
    std::optional<bool> opened;
    const int job = openFiles({path});
    const auto done = [&](int which, bool ok) {
        if (which == job) {
            opened = ok;
            loop.quit();
        }
    };
    const auto finished = connect(opener_, &FileOpener::finished, &loop, done);
    const auto dropped =
        connect(opener_, &FileOpener::dropped, &loop, [&](int which) { done(which, false); });
    loop.exec();  // the window answers while the file is read
    disconnect(finished);
    disconnect(dropped);
    return opened.value_or(false);
}

void MainWindow::connectSnapshotDevices() {
    connect(memory_, &MemoryView::snapshotDeviceRequested, this, [this](int device) {
        if (const RunDocument* document = currentDocument(); document && document->snapshot()) {
            opener_->openSnapshotDevice(document->id, *document, device);
        }
    });
    connect(opener_, &FileOpener::snapshotDeviceOpened, this,
            [this](int id, std::shared_ptr<RunDocument> run) {
                runs_->replace(id, std::move(*categoryRules_->withCurrentRules(std::move(run))));
            });
}

void MainWindow::connectOpener() {
    auto* opening = new OpeningStatus(opener_, progressLabel_, this);
    connect(opening, &OpeningStatus::newestFinished, this, [this](bool opened) {
        if (opened && !tabAfterOpen_.isEmpty()) {
            selectTab(tabAfterOpen_);
        }
    });
    connect(opener_, &FileOpener::openFailed, messages_, &Messages::showError);
    connect(opener_, &FileOpener::runOpened, this,
            [this](const QString& path, std::shared_ptr<RunDocument> run) {
                // Read with the rules of when the open began; saved since.
                run = categoryRules_->withCurrentRules(std::move(run));
                // A file open already is selected, not listed twice.
                const RunDocument* open = runs_->openedFrom(path);
                // A PyTorch memory snapshot is a memory trace and nothing else.
                const bool memoryOnly = !run->hasSteps() && run->hasMemory();
                const int id = open ? open->id : runs_->add(std::move(*run)).id;
                recent_->add(path);
                runs_->select(id);
                if (memoryOnly) {
                    tabs_->setCurrentWidget(memory_);
                } else {
                    showRunTabIfWelcome();
                }
            });
    connect(opener_, &FileOpener::attentionOpened, this,
            [this](const QString& path, const std::vector<AttentionPoint>& points) {
                attention_->setPoints(points, path);
                recent_->add(path);
                tabs_->setCurrentWidget(attention_);
            });
    connect(opener_, &FileOpener::dtypeFlowOpened, this,
            [this](const QString& path, const std::vector<DtypeRow>& rows) {
                precision_->showDtypeFlow(rows, path);
                recent_->add(path);
                tabs_->setCurrentWidget(precision_);
            });
    connect(opener_, &FileOpener::attentionArrayOpened, this,
            [this](const AttentionArrayRead& array) {
                folders_->watchAttentionArray(array);
                recent_->add(array.directory);
                tabs_->setCurrentWidget(attention_);
            });
    connect(folders_, &FolderWatch::attentionArrayRead, this,
            [this](const AttentionArrayRead& read) {
                if (!read.error.isEmpty()) {
                    messages_->setBanner(read.error, true);
                    return;
                }
                attention_->setPoints(read.points);
                attention_->finish(read.status);
            });
    connect(opener_, &FileOpener::sweepFolderOpened, this,
            [this](std::shared_ptr<SweepFolderRead> folder) {
                if (!folder->planError.isEmpty()) {
                    messages_->showError(tr("Cannot open folder"), folder->planError);
                }
                folders_->watchSweep(*folder);
                const QList<int> points = showSweepFolder();
                recent_->add(folder->directory);
                tabs_->setCurrentWidget(sweep_);
                if (!points.isEmpty()) {
                    runs_->select(points.first());  // its first point, its config in the panel
                }
            });
    connect(folders_, &FolderWatch::sweepPointsAdded, this, &MainWindow::showSweepFolder);
    connect(folders_, &FolderWatch::sweepProblem, this, [this](const QString& text) {
        if (text.isEmpty()) {
            messages_->clearBannerAbout(Messages::About::SweepFiles);
        } else {
            messages_->setBanner(text, true, Messages::About::SweepFiles);
        }
    });
}

QList<int> MainWindow::showSweepFolder() {
    std::vector<SweepPage::Row> rows;
    QList<int> ids;
    for (const FolderWatch::Point& point : folders_->sweepPoints()) {
        rows.push_back({point.config, point.result});
        if (point.result) {
            ids << point.id;
        }
    }
    sweep_->showPoints(folders_->sweepDirectory(), rows, true);
    return ids;
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

// ---- running --------------------------------------------------------------

void MainWindow::connectRuns() {
    connect(runner_, &RunController::busyChanged, this, &MainWindow::onBusyChanged);
    connect(runner_, &RunController::progressChanged, this, [this](const QString& text, bool tick) {
        // A tick only unless something else (Stop) has spoken since.
        if (!tick || progressLabel_->text() == progressShown_) {
            progressLabel_->setText(text);
            progressShown_ = text;
        }
    });
    connect(runner_, &RunController::stepProgress, this, [this](int step, int total) {
        progressBar_->setRange(0, total);
        progressBar_->setValue(step);
    });
    connect(runner_, &RunController::configShrunk, this,
            [this](const RunConfig& config, const QString& note) {
                config_->setConfig(config);
                config_->editCopy();  // the form now holds a new config, not a past run's
                messages_->setBanner(note, false);
            });
    connect(runner_, &RunController::stepsArrived, this, &MainWindow::onStepsArrived);
    connect(runner_, &RunController::runFinished, this, &MainWindow::onRunFinished);
    connect(runner_, &RunController::sweepPointFinished, this,
            [this](int index, const RunResult& result, const QString& file) {
                runs_->add(result, file);
                sweep_->addPoint(index, result);
            });
    connect(runner_, &RunController::sweepFinished, this, [this](const QString& error) {
        sweep_->finish(error);
        batchFinished(error, tr("Sweep finished"), tr("Sweep ended early"));
        Q_EMIT sweepFinished();
    });
    connect(runner_, &RunController::attentionPointsArrived, attention_, &AttentionPage::addPoints);
    connect(runner_, &RunController::attentionFinished, this, [this](const QString& error) {
        attention_->finish(error);
        batchFinished(error, tr("Attention grid finished"), tr("Attention grid ended early"));
        Q_EMIT attentionFinished();
    });
    connect(sweep_, &SweepPage::startRequested, this, &MainWindow::startSweep);
    connect(sweep_, &SweepPage::stopRequested, this, &MainWindow::stopRun);
    connect(attention_, &AttentionPage::startRequested, this, &MainWindow::startAttention);
    connect(attention_, &AttentionPage::stopRequested, this, &MainWindow::stopRun);
}

// A sweep, study or attention grid ended: said in the status bar, its error
// in the banner.
void MainWindow::batchFinished(const QString& error, const QString& done, const QString& early) {
    progressLabel_->setText(error.isEmpty() ? done : early);
    if (!error.isEmpty()) {
        messages_->setBanner(error, true);
    }
}

bool MainWindow::isRunning() const {
    return runner_->isRunning();
}

bool MainWindow::startRun() {
    if (runner_->isRunning()) {
        return false;
    }
    RunConfig config = config_->config();
    if (config_->showErrors(validate(config, validationContext()))) {
        messages_->setBanner(
            tr("The configuration has errors; they are shown beside their fields."), true,
            Messages::About::ConfigErrors);
        return false;
    }
    messages_->clearBanner();
    if (!runner_->preflight(config)) {
        return false;
    }
    RunResult live;
    live.config = config;
    // A user's Python model says its own count when the worker starts it.
    live.parameterCount = config.pyModel.empty() ? parameterCount(config.model) : 0;
    const int id = runs_->add(live, QString()).id;
    runs_->setLive(id);
    runs_->select(id);
    // The steps arrive live in the run's views: from Sweep, Precision, Compare
    // or Welcome they would go unseen, so Step timing comes to the front.
    if (!views_.contains(qobject_cast<RunView*>(tabs_->currentWidget()))) {
        tabs_->setCurrentWidget(timing_);
    }
    runner_->startRun(config);
    return true;
}

void MainWindow::updateEstimate(bool configValid) {
    const MemoryEstimateText estimate =
        memoryEstimateText(config_->config(), configValid, runner_->availableMemory());
    config_->showEstimate(estimate.text, estimate.details, estimate.fits);
}

void MainWindow::stopRun() {
    if (runner_->isRunning()) {
        runner_->stop();
        progressLabel_->setText(tr("Stopping after the step under way…"));
    }
}

void MainWindow::onBusyChanged(bool busy) {
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
    const RunDocument* document = runs_->addLiveSteps(steps);
    if (document && currentDocument() == document) {
        showCurrent();
    }
}

namespace {

// The user's attention could not be loaded or failed its correctness gate
// before any step (the worker's message starts "py_attention: "): bad input,
// said beside its field, as the CLI exits 2 naming --py-attention.
std::optional<QString> refusedAttention(const RunResult& result) {
    const std::string prefix = "py_attention: ";
    if (result.status != RunStatus::Failed || !result.steps.empty() ||
        result.message.rfind(prefix, 0) != 0) {
        return std::nullopt;
    }
    const std::string why = result.message.substr(prefix.size());
    return QString::fromStdString(why.substr(0, why.find('\n')));
}

}  // namespace

void MainWindow::onRunFinished(const RunResult& result) {
    if (const auto why = refusedAttention(result)) {
        runs_->remove(runs_->liveId());
        config_->setConfig(result.config);
        config_->editCopy();  // re-validates the form, so the error goes in after
        config_->showErrors({{"py-attention", why->toStdString()}});
        messages_->setBanner(tr("Your attention was not run: %1").arg(*why), true,
                             Messages::About::ConfigErrors);
        progressLabel_->setText(tr("Run not started"));
        showCurrent();
        Q_EMIT runFinished(result);
        return;
    }
    RunDocument* document = runs_->byId(runs_->liveId());
    runs_->setLive(0);
    if (document) {
        document->result = result;
        document->modified = true;
    }
    runs_->refresh();
    showCurrent();
    const QString status = QString::fromStdString(toString(result.status));
    const QString who = document ? QString("#%1").arg(document->id) : QString();
    progressLabel_->setText(tr("Run %1 %2").arg(who, status));
    if (result.status != RunStatus::Ok) {
        const QString message = QString::fromStdString(result.message);
        // "Run #4: cancelled after 7 of 27 steps", not "cancelled: cancelled after …".
        messages_->setBanner(message.startsWith(status) ? tr("Run %1: %2").arg(who, message)
                             : message.isEmpty()        ? tr("Run %1 %2").arg(who, status)
                                                 : tr("Run %1 %2: %3").arg(who, status, message),
                             result.status != RunStatus::Cancelled, Messages::About::Run,
                             document ? document->id : 0);
    }
    Q_EMIT runFinished(result);
}

void MainWindow::startSweep() {
    if (runner_->isRunning()) {
        return;
    }
    const SweepPage::Study study = sweep_->study();
    if (study == SweepPage::Study::Attention) {
        attention_->setForm(attentionStudySpec(config_->config().device));
        tabs_->setCurrentWidget(attention_);
        startAttention();
        return;
    }
    SweepLaunch launch;
    try {
        launch = sweepLaunchFor(*sweep_, config_->config(), runner_->pointCli());
    } catch (const InvalidConfigError& error) {
        messages_->setBanner(config_->inPanelTerms(QString::fromUtf8(error.what()).trimmed()),
                             true);
        return;
    }
    messages_->clearBanner();
    folders_->stopSweep();  // the tab shows this sweep now, not a folder's
    sweep_->begin(
        launch.spec,
        launch.spec.base.device == DeviceKind::Cpu
            ? std::optional<int64_t>(runner_->availableMemory().value_or(availableSystemMemory()))
            : std::nullopt);
    runner_->startSweep(launch);
}

void MainWindow::startAttention() {
    if (runner_->isRunning()) {
        return;
    }
    AttentionBenchSpec spec;
    try {
        const RunConfig config = config_->config();
        spec = attention_->spec(config.device);
        // "your own…" in the attention field adds the user's attention to the grid.
        spec.pyAttention = config.pyAttention;
        spec.pyPath = config.pyAttention.empty() ? std::string() : config.pyPath;
        validateAttentionSpec(spec);
    } catch (const InvalidConfigError& error) {
        messages_->setBanner(QString::fromUtf8(error.what()).trimmed(), true);
        return;
    }
    messages_->clearBanner();
    attention_->begin(int(attentionGridPoints(spec).size()));
    runner_->startAttention(spec);
}

void MainWindow::setAvailableMemory(std::optional<int64_t> bytes) {
    runner_->setAvailableMemory(bytes);
}

void MainWindow::setPointCli(const QString& cli) {
    runner_->setPointCli(cli.toStdString());
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
    if (page == compare_) {
        return runs_->compareTitle(target.name);
    }
    if (qobject_cast<RunView*>(page)) {
        if (const RunDocument* document = currentDocument()) {
            return target.name + " — " + document->title + "\n" +
                   configSummary(document->result.config);
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
