// The desktop app, driven as a user would (QT_QPA_PLATFORM=offscreen): run,
// stop, invalid input, open, compare, export, settings.
#include <QtTest/QtTest>

#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QImage>
#include <QLineEdit>
#include <QMimeData>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>

#include "attention_page.h"
#include "bench/cost_model.h"
#include "bench/environment.h"
#include "bench/runner.h"
#include "breakdown_view.h"
#include "compare_view.h"
#include "config_panel.h"
#include "exporter.h"
#include "format.h"
#include "kernel_timeline_view.h"
#include "main_window.h"
#include "memory_view.h"
#include "precision/accumulation_lab.h"
#include "precision/dtype_flow.h"
#include "precision_page.h"
#include "results/breakdown.h"
#include "results/run_file.h"
#include "step_table_model.h"
#include "step_timing_view.h"
#include "sweep_page.h"

using namespace stepscope;
using namespace stepscope::ui;

namespace {

RunConfig quickConfig(int warmup, int steps, int64_t context = 16) {
    RunConfig config;
    config.model = *findPreset("nano");
    config.model.vocabSize = 97;
    config.contextLength = context;
    config.batchSize = 2;
    config.warmupSteps = warmup;
    config.measuredSteps = steps;
    return config;
}

QString cliRun(const QString& path, const QStringList& extra = {}) {
    QProcess process;
    process.start(QStringLiteral(STEPSCOPE_CLI),
                  QStringList{"run", "--model", "nano", "--vocab", "97", "--ctx", "16", "--batch",
                              "2", "--warmup", "1", "--steps", "3", "--out", path} +
                      extra);
    process.waitForFinished(120000);
    return process.exitCode() == 0 ? QString() : QString::fromUtf8(process.readAllStandardError());
}

int csvDataRows(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return -1;
    }
    return int(file.readAll().trimmed().split('\n').size()) - 1;
}

}  // namespace

class TestMainWindow : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope,
                           dir_.filePath("settings"));
        QCoreApplication::setOrganizationName("StepScopeTest");
        QCoreApplication::setApplicationName("StepScopeTest");
        qRegisterMetaType<stepscope::RunResult>("stepscope::RunResult");
    }

    void runFillsChartAndSummary() {
        MainWindow window;
        window.show();
        window.configPanel()->setConfig(quickConfig(1, 4));
        QSignalSpy finished(&window, &MainWindow::runFinished);
        QVERIFY(window.startRun());
        QVERIFY(finished.wait(120000));
        const auto result = finished.at(0).at(0).value<RunResult>();
        QCOMPARE(toString(result.status), std::string("ok"));
        QCOMPARE(window.stepTimingView()->plottedSteps(), 5);
        QCOMPARE(window.stepTimingView()->summaryTable()->item(0, 0)->text(),
                 formatMs(result.summary.total.mean));
        QCOMPARE(int(window.documents().size()), 1);
        QCOMPARE(window.currentDocument()->result.steps.size(), size_t(5));
        QVERIFY(window.progressText().contains("ok"));
    }

    void stopEndsWithinOneStepKeepingSteps() {
        MainWindow window;
        window.show();
        // tiny at ctx 256: a step takes far longer than the UI's 33 ms batching.
        RunConfig config = quickConfig(0, 400, 256);
        config.model = *findPreset("tiny");
        config.model.vocabSize = 97;
        config.batchSize = 4;
        window.configPanel()->setConfig(config);
        QSignalSpy finished(&window, &MainWindow::runFinished);
        QVERIFY(window.startRun());
        QTRY_VERIFY_WITH_TIMEOUT(window.currentDocument()->result.steps.size() >= 2, 60000);
        const size_t seenAtStop = window.currentDocument()->result.steps.size();
        window.stopRun();
        QVERIFY(finished.wait(60000));
        const auto result = finished.at(0).at(0).value<RunResult>();
        QCOMPARE(toString(result.status), std::string("cancelled"));
        // At most the step buffered for the UI and the one under way finish after Stop.
        QVERIFY2(
            result.steps.size() <= seenAtStop + 2,
            qPrintable(
                QString("%1 steps, %2 seen at stop").arg(result.steps.size()).arg(seenAtStop)));
        QVERIFY(result.steps.size() >= seenAtStop);
        QCOMPARE(window.currentDocument()->result.steps.size(), result.steps.size());
        QVERIFY(window.bannerText().contains("cancelled"));
    }

    void invalidInputShowsMessageAndStartsNothing() {
        MainWindow window;
        window.show();
        RunConfig config = quickConfig(0, 1);
        config.model.name = "custom";
        config.model.dModel = 96;
        config.model.heads = 5;
        window.configPanel()->setConfig(config);
        QVERIFY(!window.startRun());
        QVERIFY2(window.configPanel()->errorText("heads").contains("not divisible"),
                 qPrintable(window.configPanel()->errorText("heads")));
        QVERIFY(window.documents().empty());
        QVERIFY(!window.isRunning());

        window.configPanel()->headsBox()->setValue(4);  // 96 / 4: the app stays usable
        QVERIFY(window.configPanel()->errorText("heads").isEmpty());
        QSignalSpy finished(&window, &MainWindow::runFinished);
        QVERIFY(window.startRun());
        QVERIFY(finished.wait(120000));
    }

    void opensCliRunFileAndRejectsCorruptOne() {
        const QString path = dir_.filePath("cli-run.json");
        const QString error = cliRun(path);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const RunResult stored = readRunFile(path.toStdString());

        MainWindow window;
        window.show();
        QVERIFY(window.openRunFile(path));
        QCOMPARE(window.stepTimingView()->plottedSteps(), 4);
        QCOMPARE(window.stepTimingView()->summaryTable()->item(0, 0)->text(),
                 formatMs(stored.summary.total.mean));

        const QString corrupt = dir_.filePath("corrupt.json");
        QFile file(corrupt);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\"format\": \"stepscope-run\", \"version\": 1");
        file.close();
        const RunDocument* before = window.currentDocument();
        QVERIFY(!window.openRunFile(corrupt));
        QVERIFY(window.lastErrorDialog() && window.lastErrorDialog()->isVisible());
        QVERIFY(window.lastErrorDialog()->text().contains("not valid JSON"));
        QCOMPARE(int(window.documents().size()), 1);
        QCOMPARE(window.currentDocument(), before);
        QCOMPARE(window.stepTimingView()->plottedSteps(), 4);
    }

    void compareShowsRatioOfStoredMeans() {
        const QString first = dir_.filePath("first.json");
        const QString second = dir_.filePath("second.json");
        QVERIFY(cliRun(first).isEmpty());
        QVERIFY(cliRun(second, {"--mode", "forward"}).isEmpty());
        const double mean1 = readRunFile(first.toStdString()).summary.total.mean;
        const double mean2 = readRunFile(second.toStdString()).summary.total.mean;

        MainWindow window;
        QVERIFY(window.openRunFile(first));
        QVERIFY(window.openRunFile(second));
        window.setCompared({window.documents()[0].id, window.documents()[1].id});
        QTableWidget* table = window.compareView()->table();
        QCOMPARE(table->columnCount(), 3);  // two means and one ratio
        QCOMPARE(table->item(0, 0)->text(), formatMs(mean1));
        QCOMPARE(table->item(0, 1)->text(), formatMs(mean2));
        QCOMPARE(table->item(0, 2)->data(Qt::UserRole).toDouble(), mean1 / mean2);
        QVERIFY(table->item(2, 2)->text() == "–");  // forward mode has no backward
    }

    void exportsReReadAsExpected() {
        const QString path = dir_.filePath("export-run.json");
        QVERIFY(cliRun(path).isEmpty());
        const RunResult stored = readRunFile(path.toStdString());
        MainWindow window;
        window.show();
        QVERIFY(window.openRunFile(path));
        const auto targets = window.stepTimingView()->exportTargets();
        QCustomPlot* plot = targets[0].plot;
        QVERIFY(plot);

        const QString png = dir_.filePath("chart.png");
        QCOMPARE(exporter::savePlot(plot, png, 800, 500), QString());
        const QImage image(png);
        QCOMPARE(image.size(), QSize(800, 500));
        const QString pdf = dir_.filePath("chart.pdf");
        QCOMPARE(exporter::savePlot(plot, pdf, 800, 500), QString());
        QFile pdfFile(pdf);
        QVERIFY(pdfFile.open(QIODevice::ReadOnly));
        QVERIFY(pdfFile.read(5) == "%PDF-");

        const QString csv = dir_.filePath("steps.csv");
        QCOMPARE(exporter::saveTable(targets[2].table, csv), QString());
        QCOMPARE(csvDataRows(csv), int(stored.steps.size()));
        const QString summary = dir_.filePath("summary.md");
        QCOMPARE(exporter::saveTable(targets[1].table, summary), QString());
        QFile summaryFile(summary);
        QVERIFY(summaryFile.open(QIODevice::ReadOnly));
        const QString markdown = QString::fromUtf8(summaryFile.readAll());
        QVERIFY(markdown.contains("| total | " + formatMs(stored.summary.total.mean) + " |"));

        const QString report = dir_.filePath("report.md");
        QCOMPARE(exporter::saveReport(*window.currentDocument(), targets, report), QString());
        QFile reportFile(report);
        QVERIFY(reportFile.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(reportFile.readAll());
        QVERIFY(text.contains("## Time per step"));
        QVERIFY(text.contains("![report-step-timing.png](report-step-timing.png)"));
        QVERIFY(!QImage(dir_.filePath("report-step-timing.png")).isNull());
        QCOMPARE(csvDataRows(dir_.filePath("report-steps.csv")), int(stored.steps.size()));

        QCOMPARE(exporter::savePlot(plot, dir_.filePath("chart.gif"), 800, 500).isEmpty(), false);
    }

    void sweepFillsTable() {
        MainWindow window;
        window.configPanel()->setConfig(quickConfig(0, 1));
        window.sweepPage()->modelsEdit()->setText("nano");
        window.sweepPage()->contextsEdit()->setText("8,16");
        QSignalSpy finished(&window, &MainWindow::sweepFinished);
        Q_EMIT window.sweepPage()->startRequested();
        QVERIFY(finished.wait(120000));
        QCOMPARE(window.sweepPage()->table()->rowCount(), 4);  // 2 contexts × 2 modes
        QCOMPARE(int(window.documents().size()), 4);

        window.sweepPage()->contextsEdit()->setText("8,abc");
        Q_EMIT window.sweepPage()->startRequested();
        QVERIFY(!window.isRunning());
        QVERIFY(window.bannerText().contains("'abc' is not a positive integer"));
    }

    void attentionGridFromTheApp() {
        MainWindow window;
        AttentionPage* page = window.attentionPage();
        page->backendsEdit()->setText("naive,tiled,cuda-flash");
        page->dimsEdit()->setText("16,32");
        page->seqEdit()->setText("32,64");
        QSignalSpy finished(&window, &MainWindow::attentionFinished);
        Q_EMIT page->startRequested();
        QVERIFY(finished.wait(120000));
        QCOMPARE(page->table()->rowCount(), 12);  // 3 backends × 2 dims × 2 lengths
        int unavailable = 0;
        for (int row = 0; row < 12; ++row) {
            unavailable += page->table()->item(row, 5)->text() == "unavailable";
        }
        QCOMPARE(unavailable, 4);  // cuda-flash says why instead of failing
        const auto targets = page->exportTargets();
        QCOMPARE(targets.size(), 4);  // a time chart per head dim, memory, table
        QCOMPARE(targets[0].name, QString("attention-time-d16"));
        const QString csv = dir_.filePath("attention-grid.csv");
        QCOMPARE(exporter::saveTable(targets[3].table, csv), QString());
        QCOMPARE(csvDataRows(csv), 12);
        QCOMPARE(exporter::savePlot(targets[0].plot, dir_.filePath("attention.png"), 640, 400),
                 QString());

        page->seqEdit()->setText("32,x");
        Q_EMIT page->startRequested();
        QVERIFY(!window.isRunning());
        QVERIFY(window.bannerText().contains("'x' is not a positive integer"));
    }

    void opensAttentionFileFromCli() {
        QProcess process;
        process.start(QStringLiteral(STEPSCOPE_CLI),
                      {"attention", "--backends", "naive,tiled", "--d", "16", "--seq", "32",
                       "--batch", "2", "--repeats", "1", "--out", dir_.path()});
        QVERIFY(process.waitForFinished(120000));
        QCOMPARE(process.exitCode(), 0);
        MainWindow window;
        QVERIFY(window.openRunFile(dir_.filePath("attention.json")));
        QCOMPARE(int(window.attentionPage()->points().size()), 2);
        QCOMPARE(window.attentionPage()->table()->rowCount(), 2);
        QVERIFY(window.documents().empty());  // not a step run
    }

    void droppedFilesOpenAndBecomeRecent() {
        const QString path = dir_.filePath("dropped.json");
        QVERIFY(cliRun(path).isEmpty());
        {
            MainWindow window;
            window.show();
            QMimeData mime;
            mime.setUrls({QUrl::fromLocalFile(path)});
            QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                                  Qt::NoModifier);
            QApplication::sendEvent(&window, &enter);
            QVERIFY(enter.isAccepted());
            QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(&window, &drop);
            QCOMPARE(int(window.documents().size()), 1);
            QCOMPARE(window.currentDocument()->path, path);
            window.close();
        }
        const QStringList recent = QSettings().value("files/recent").toStringList();
        QVERIFY(!recent.isEmpty());
        QCOMPARE(recent.first(), QFileInfo(path).absoluteFilePath());
    }

    void savedRunReopensUnchanged() {
        MainWindow window;
        window.configPanel()->setConfig(quickConfig(1, 2));
        QSignalSpy finished(&window, &MainWindow::runFinished);
        QVERIFY(window.startRun());
        QVERIFY(finished.wait(120000));
        const int id = window.currentDocument()->id;
        QVERIFY(window.currentDocument()->modified);
        const QString path = dir_.filePath("saved-from-app.json");
        QVERIFY(window.saveDocument(id, path));
        QVERIFY(!window.currentDocument()->modified);
        const RunResult reread = readRunFile(path.toStdString());
        QCOMPARE(reread.steps.size(), window.currentDocument()->result.steps.size());
        QCOMPARE(reread.summary.total.mean, window.currentDocument()->result.summary.total.mean);
    }

    void cudaChoiceIsDisabledWithoutADevice() {
        if (probeDevices().cudaAvailable) {
            QSKIP("a CUDA device is present here");
        }
        MainWindow window;
        QComboBox* device = window.configPanel()->deviceBox();
        const int cuda = device->findText("cuda");
        auto* model = qobject_cast<QStandardItemModel*>(device->model());
        QVERIFY(!model->item(cuda)->isEnabled());
        QVERIFY(device->itemData(cuda, Qt::ToolTipRole).toString().contains("No CUDA device"));
    }

    void failedRunIsAMessageNotACrash() {
        MainWindow window;
        RunConfig config = quickConfig(0, 1);
        config.attention = "cuda-flash";  // listed, but reports itself unavailable
        window.configPanel()->setConfig(config);
        QSignalSpy finished(&window, &MainWindow::runFinished);
        QVERIFY(window.startRun());
        QVERIFY(finished.wait(60000));
        QCOMPARE(toString(finished.at(0).at(0).value<RunResult>().status),
                 std::string("unavailable"));
        QVERIFY2(window.bannerText().contains("cuda-flash"), qPrintable(window.bannerText()));
        QVERIFY(!window.isRunning());
    }

    void lastConfigurationPersists() {
        {
            MainWindow window;
            window.configPanel()->setConfig(quickConfig(3, 7, 48));
            window.close();
        }
        MainWindow again;
        const RunConfig restored = again.configPanel()->config();
        QCOMPARE(restored.contextLength, int64_t{48});
        QCOMPARE(restored.measuredSteps, 7);
    }

    void breakdownViewGroupsATracedRun() {
        const QString path = dir_.filePath("traced.json");
        QCOMPARE(cliRun(path, {"--ops", "--mode", "train-step"}), QString());
        const RunResult run = readRunFile(path.toStdString());
        MainWindow window;
        QVERIFY(window.openRunFile(path));
        BreakdownView* view = window.breakdownView();
        const std::pair<QString, QString> groupings[] = {
            {"op", "all"}, {"category", "forward"}, {"op", "backward"}, {"category", "all"}};
        for (const auto& [by, phase] : groupings) {
            view->setGrouping(by, phase);
            const auto expected = breakdown(run, phase.toStdString(), by.toStdString());
            QCOMPARE(view->tableModel()->rowCount(), int(expected.size()));
            // Shown largest first, as the engine sorts them.
            QCOMPARE(view->tableModel()->index(0, 0).data().toString().toStdString(),
                     expected.front().name);
            QCOMPARE(view->tableModel()->index(0, 4).data(Qt::UserRole).toDouble(),
                     expected.front().totalMs);
        }
        // A CPU run has no kernels: that grouping falls back to operators.
        view->setGrouping("kernel", "all");
        QCOMPARE(view->tableModel()->rowCount(), 0);
        QCOMPARE(view->flopModel()->rowCount(), int(run.flopGroups.size()));
        QVERIFY(view->sharesPlot()->plottableCount() > 2);  // one per category
        QAbstractItemModelTester tester(view->tableModel());
    }

    void timelineShowsTheTracedStep() {
        const QString path = dir_.filePath("timeline.json");
        QCOMPARE(cliRun(path, {"--ops"}), QString());
        const RunResult run = readRunFile(path.toStdString());
        MainWindow window;
        QVERIFY(window.openRunFile(path));
        KernelTimelineView* view = window.timelineView();
        int operators = 0;
        const TimelineSpan* longest = nullptr;
        for (const auto& span : run.timeline.spans) {
            if (span.kind == SpanKind::Operator) {
                ++operators;
                if (!longest || span.durationUs > longest->durationUs) {
                    longest = &span;
                }
            }
        }
        QVERIFY(longest);
        QCOMPARE(view->drawnSpans(), operators);
        const int track = int(view->tracks().indexOf(QString::fromStdString(longest->track)));
        QVERIFY(track >= 0);
        const TimelineSpan* hit = view->spanAt(longest->startUs + longest->durationUs / 2, track);
        QVERIFY(hit);
        QCOMPARE(hit->name, longest->name);
        QVERIFY(view->describe(*hit).contains(QString::fromStdString(longest->name)));
        QVERIFY(!view->spanAt(-10, track));
        QSignalSpy range(view, &KernelTimelineView::visibleRangeChanged);
        view->setVisibleRange(10, 20);
        QVERIFY(!range.isEmpty());
        QCOMPARE(range.last().at(0).toDouble(), 10.0);
        QCOMPARE(range.last().at(1).toDouble(), 20.0);
    }

    void memoryViewShowsTheTrace() {
        const QString path = dir_.filePath("memory.json");
        QCOMPARE(cliRun(path, {"--memory", "--ops", "--mode", "train-step"}), QString());
        const RunResult run = readRunFile(path.toStdString());
        const MemorySummary summary = summarizeMemory(run.memory, 1);
        MainWindow window;
        QVERIFY(window.openRunFile(path));
        MemoryView* view = window.memoryView();
        QCOMPARE(view->plot()->graphCount(), int(kMemoryCategories));
        QVERIFY(view->plottedPoints() > 10 && view->plottedPoints() <= MemoryView::kMaxPoints);
        // Decimation keeps the peak: the top of the stack reaches it exactly.
        double top = 0;
        const auto* data = view->plot()->graph(int(kMemoryCategories) - 1)->data().data();
        for (auto it = data->constBegin(); it != data->constEnd(); ++it) {
            top = std::max(top, it->value);
        }
        QCOMPARE(qint64(std::llround(top * 1024 * 1024)), qint64(summary.peakBytes));
        // Estimator beside the measurement, and the largest allocation first.
        QCOMPARE(view->estimateModel()->index(0, 3).data(Qt::UserRole).toLongLong(),
                 qint64(estimateMemory(run.config).parameters));
        QCOMPARE(view->topModel()->index(0, 0).data(Qt::UserRole).toLongLong(),
                 qint64(summary.top.front().bytes));
        // Narrowing to setup leaves only what setup made.
        double firstPhase = run.memory.phases.front().startUs;
        view->setTimeRange(0, firstPhase - 1);
        QVERIFY(view->topModel()->rowCount() > 0);
        for (int row = 0; row < view->topModel()->rowCount(); ++row) {
            QCOMPARE(view->topModel()->index(row, 2).data().toString(), QString("setup"));
        }
        // The bottom of the stack at the start is the first parameter.
        const MemoryAllocation* hit = view->allocationAt(run.memory.timeUs[0] + 0.001, 1);
        QVERIFY(hit);
        QCOMPARE(hit->category, MemoryCategory::Parameters);
        QVERIFY(view->describe(*hit).contains("parameters"));
        // The timeline's range moves the memory view, on the shared clock.
        const double shift = run.timeline.clockOriginUs - run.memory.clockOriginUs;
        window.timelineView()->setVisibleRange(100, 900);
        QCOMPARE(view->plot()->xAxis->range().lower, (100 + shift) / 1e3);
        QCOMPARE(view->plot()->xAxis->range().upper, (900 + shift) / 1e3);
    }

    void precisionPageRunsBothTools() {
        MainWindow window;
        PrecisionPage* page = window.precisionPage();
        QSignalSpy finished(page, &PrecisionPage::finished);
        page->accumulate(1000);
        QVERIFY(finished.wait(30000));
        const auto sums = runAccumulationLab(0.01, 1000);
        QCOMPARE(page->accumulationModel()->rowCount(), int(sums.size()));
        for (int row = 0; row < int(sums.size()); ++row) {
            QCOMPARE(page->accumulationModel()->index(row, 2).data(Qt::UserRole).toDouble(),
                     sums[size_t(row)].result);
        }
        QVERIFY(std::abs(sums.front().result - 10.0) < 1e-3);  // fp32 first

        page->inspectDtypes("nano", "bf16");
        QVERIFY(finished.wait(60000));
        RunConfig config;
        config.model = *findPreset("nano");
        config.contextLength = 16;
        config.batchSize = 2;
        config.precision = Precision::Bf16;
        const auto rows = inspectDtypeFlow(config);
        QCOMPARE(page->dtypeModel()->rowCount(), int(rows.size()));
        for (int row = 0; row < int(rows.size()); ++row) {
            QCOMPARE(page->dtypeModel()->index(row, 2).data().toString().toStdString(),
                     rows[size_t(row)].dtype);
        }
    }

    void stepTableModelIsAWellBehavedModel() {
        StepTableModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        std::vector<StepRecord> steps(3);
        for (int i = 0; i < 3; ++i) {
            steps[i].index = i;
            steps[i].totalMs = 10 + i;
        }
        model.setSteps(steps);
        QCOMPARE(model.rowCount(), 3);
        steps.resize(5);
        steps[3].index = 3;
        steps[4].index = 4;
        model.setSteps(steps);  // a live run grows
        QCOMPARE(model.rowCount(), 5);
        model.setSteps({});
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
