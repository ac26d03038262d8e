// The Sweep tab: any config field as an axis, points in fresh processes, the
// named studies (warm-up, precision, attention) and the chart's pivot. The
// pivot is checked on hand-made runs; everything else on real runs, each
// table cell held against the run the app keeps for it.

#include <QtTest/QtTest>

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>

#include "config/config_field.h"
#include "engines/runner.h"
#include "experiments/study.h"
#include "main_window.h"
#include "models/format.h"
#include "models/sweep_chart_data.h"
#include "pages/attention_page.h"
#include "pages/config_panel.h"
#include "pages/sweep_page.h"
#include "results/run_file.h"
#include "results/statistics.h"

using namespace stepscope;
using namespace stepscope::ui;

namespace {

RunConfig quickConfig(int warmup, int steps) {
    RunConfig config;
    config.model = *findPreset("nano");
    config.model.vocabSize = 97;
    config.contextLength = 8;
    config.batchSize = 1;
    config.warmupSteps = warmup;
    config.measuredSteps = steps;
    return config;
}

// Runs `stepscope-cli ARGUMENTS`; true when it exits 0.
bool runCli(const QStringList& arguments) {
    QProcess cli;
    cli.start(STEPSCOPE_CLI, arguments);
    return cli.waitForFinished(60000) && cli.exitCode() == 0;
}

// Runs task `index` of a Slurm array folder's job script by hand, as Slurm would.
bool runArrayTask(const QString& dir, int index) {
    QProcess task;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("SLURM_ARRAY_TASK_ID", QString::number(index));
    task.setProcessEnvironment(environment);
    task.start("bash", {dir + "/stepscope.sbatch"});
    return task.waitForFinished(60000) && task.exitCode() == 0;
}

QStringList headers(QTableWidget* table) {
    QStringList out;
    for (int c = 0; c < table->columnCount(); ++c) {
        out << table->horizontalHeaderItem(c)->text().replace('\n', ' ');  // as exported
    }
    return out;
}

// A spread of one step is no spread: "–" (issue 40).
QString meanStd(const Stats& stats) {
    return QString("%1 ± %2").arg(formatMs(stats.mean),
                                  stats.count > 1 ? formatMs(stats.std) : QString("–"));
}

void choose(QComboBox* box, const QString& data) {
    QVERIFY2(box, "no such box");
    const int index = box->findData(data);
    QVERIFY2(index >= 0, qPrintable("no choice " + data));
    box->setCurrentIndex(index);
}

}  // namespace

class TestSweepTab final : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    std::vector<const RunDocument*> sweepDocuments(MainWindow& window) {
        std::vector<const RunDocument*> out;
        for (const auto& document : window.documents()) {
            out.push_back(&document);
        }
        return out;
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("StepScopeTest");
        QCoreApplication::setApplicationName("StepScopeSweepTab");
    }

    // ---- the app ----------------------------------------------------------

    void sweepVariesBatchAndAttention() {
        MainWindow window;
        window.configPanel()->setConfig(quickConfig(0, 1));
        SweepPage* page = window.sweepPage();
        QCOMPARE(page->axisEdit("batch")->placeholderText(), QString("1"));  // the panel's
        page->modelsEdit()->setText("nano");
        page->contextsEdit()->setText("8");
        page->modesEdit()->setText("forward");
        page->axisEdit("batch")->setText("1,2");
        page->axisEdit("attention")->setText("naive,sdpa");
        QSignalSpy finished(&window, &MainWindow::sweepFinished);
        Q_EMIT page->startRequested();
        QTableWidget* table = page->table();
        QCOMPARE(table->rowCount(), 4);
        QCOMPARE(headers(table).mid(0, 7), (QStringList{"model", "ctx", "mode", "precision",
                                                        "batch", "attention", "status"}));
        QCOMPARE(page->column(SweepPage::Status), 6);
        QVERIFY(finished.wait(120000));
        QCOMPARE(window.bannerText(), QString());

        const auto documents = sweepDocuments(window);
        QCOMPARE(int(documents.size()), 4);
        QSet<QString> combinations;
        for (int row = 0; row < 4; ++row) {
            const RunDocument& document = *documents[size_t(row)];
            const RunResult stored = readRunFile(document.path.toStdString());
            QCOMPARE(table->item(row, 4)->text(), QString::number(stored.config.batchSize));
            QCOMPARE(table->item(row, 5)->text(), QString::fromStdString(stored.config.attention));
            QCOMPARE(table->item(row, page->column(SweepPage::Status))->text(), QString("ok"));
            QCOMPARE(table->item(row, page->column(SweepPage::Total))->text(),
                     meanStd(stored.summary.total));
            // The file's name carries the axes, so no two points share one.
            QVERIFY2(QFileInfo(document.path)
                         .fileName()
                         .contains(QString("_batch%1_%2")
                                       .arg(stored.config.batchSize)
                                       .arg(QString::fromStdString(stored.config.attention))),
                     qPrintable(document.path));
            combinations << table->item(row, 4)->text() + table->item(row, 5)->text();
        }
        QCOMPARE(combinations.size(), 4);

        // Batch on x, attention held at sdpa: one line, the sdpa points' means.
        choose(page->xAxisBox(), "batch");
        choose(page->heldBox("attention"), "sdpa");
        QCustomPlot* plot = page->plot();
        QCOMPARE(plot->graphCount(), 1);
        QCOMPARE(plot->graph(0)->dataCount(), 2);
        for (const RunDocument* document : documents) {
            const RunResult& run = document->result;
            if (run.config.attention != "sdpa") {
                continue;
            }
            const auto at = plot->graph(0)->data()->findBegin(double(run.config.batchSize), false);
            QCOMPARE(at->key, double(run.config.batchSize));
            QCOMPARE(at->value, run.summary.total.mean);
        }
        // A line per value again: two.
        choose(page->heldBox("attention"), "");
        QCOMPARE(plot->graphCount(), 2);
    }

    void isolatedPointsRunInTheirOwnProcesses() {
        MainWindow window;
        window.setPointCli(STEPSCOPE_CLI);
        window.configPanel()->setConfig(quickConfig(0, 1));
        SweepPage* page = window.sweepPage();
        page->modelsEdit()->setText("nano");
        page->contextsEdit()->setText("8,16");
        page->modesEdit()->setText("forward");
        page->isolateBox()->setChecked(true);
        QSignalSpy finished(&window, &MainWindow::sweepFinished);
        Q_EMIT page->startRequested();
        QVERIFY(finished.wait(120000));
        const auto documents = sweepDocuments(window);
        QCOMPARE(int(documents.size()), 2);
        QSet<int> pids;
        for (const RunDocument* document : documents) {
            const RunResult stored = readRunFile(document->path.toStdString());
            QVERIFY2(stored.status == RunStatus::Ok, stored.message.c_str());
            QVERIFY(stored.environment.isolated);
            QVERIFY(stored.environment.processId != QCoreApplication::applicationPid());
            pids << stored.environment.processId;
        }
        QCOMPARE(pids.size(), 2);
    }

    void warmupStudyFromTheSweepTab() {
        MainWindow window;
        window.setPointCli(STEPSCOPE_CLI);
        window.configPanel()->setConfig(quickConfig(0, 3));
        SweepPage* page = window.sweepPage();
        page->setStudy(SweepPage::Study::Warmup);
        QVERIFY(page->isolateBox()->isChecked());  // fresh processes, always
        QVERIFY(!page->isolateBox()->isEnabled());
        page->warmupsEdit()->setText("0,2");
        QSignalSpy finished(&window, &MainWindow::sweepFinished);
        Q_EMIT page->startRequested();
        QVERIFY(finished.wait(120000));
        QCOMPARE(window.bannerText(), QString());

        QTableWidget* table = page->table();
        QCOMPARE(table->rowCount(), 2);
        const int warmupColumn = page->column("warmup");
        const int first = page->column("1st step ms");
        const int second = page->column("2nd step ms");
        QVERIFY(warmupColumn >= 0 && first >= 0 && second >= 0);
        const auto documents = sweepDocuments(window);
        QCOMPARE(int(documents.size()), 2);
        for (int row = 0; row < 2; ++row) {
            const RunResult stored = readRunFile(documents[size_t(row)]->path.toStdString());
            QCOMPARE(table->item(row, warmupColumn)->text(),
                     QString::number(stored.config.warmupSteps));
            QVERIFY(stored.environment.isolated);
            const auto& steps = stored.steps;
            QCOMPARE(int(steps.size()), stored.config.warmupSteps + 3);
            QCOMPARE(table->item(row, first)->text(),
                     formatMs(steps[size_t(stored.config.warmupSteps)].totalMs));
            QCOMPARE(table->item(row, second)->text(),
                     formatMs(steps[size_t(stored.config.warmupSteps) + 1].totalMs));
        }
        // The chart: every measured step, a line per warm-up count.
        QCOMPARE(page->xAxisBox()->currentData().toString(), QString("step"));
        QCustomPlot* plot = page->plot();
        QCOMPARE(plot->graphCount(), 2);
        for (int g = 0; g < 2; ++g) {
            const RunResult& run = documents[size_t(g)]->result;
            QCOMPARE(plot->graph(g)->name(), QString("warmup %1").arg(run.config.warmupSteps));
            QCOMPARE(plot->graph(g)->dataCount(), 3);
            for (int i = 0; i < 3; ++i) {
                QCOMPARE(plot->graph(g)->data()->at(i)->value,
                         run.steps[size_t(run.config.warmupSteps + i)].totalMs);
            }
        }
        // The study's own table beside the run files.
        const QString outDir = QFileInfo(documents[0]->path).absolutePath();
        QVERIFY(QFileInfo::exists(outDir + "/study.md"));
        QVERIFY(page->statusText().contains(outDir));
    }

    void precisionStudyFromTheSweepTab() {
        MainWindow window;
        RunConfig traced = quickConfig(0, 2);
        traced.traceMemory = true;  // the study's peak column
        window.configPanel()->setConfig(traced);
        SweepPage* page = window.sweepPage();
        page->setStudy(SweepPage::Study::Precision);
        QCOMPARE(page->precisionsEdit()->text(), QString("fp32,bf16,fp16"));
        page->precisionsEdit()->setText("fp32,bf16");
        page->modelsEdit()->setText("nano");
        page->contextsEdit()->setText("8");
        page->modesEdit()->setText("forward");
        QSignalSpy finished(&window, &MainWindow::sweepFinished);
        Q_EMIT page->startRequested();
        QVERIFY(finished.wait(120000));
        const auto documents = sweepDocuments(window);
        QCOMPARE(int(documents.size()), 2);
        const int speedup = page->column("× fp32");
        QVERIFY(speedup >= 0);
        const double fp32 = documents[0]->result.summary.total.mean;
        const double bf16 = documents[1]->result.summary.total.mean;
        QVERIFY(documents[1]->result.config.precision == Precision::Bf16);
        QCOMPARE(page->table()->item(0, speedup)->text(), QString("1.00×"));
        QCOMPARE(page->table()->item(1, speedup)->text(),
                 QString::number(fp32 / bf16, 'f', 2) + "×");
        const int peak = page->column("peak");
        QVERIFY(peak >= 0);
        for (int row = 0; row < 2; ++row) {
            const MemoryTrace& memory = documents[size_t(row)]->result.memory;
            QVERIFY(!memory.empty());
            QCOMPARE(page->table()->item(row, peak)->text(),
                     bytesText(summarizeMemory(memory, 0).peakBytes));
        }
        QVERIFY(QFileInfo::exists(QFileInfo(documents[0]->path).absolutePath() + "/study.md"));
    }

    void attentionStudyFillsAndRunsTheGrid() {
        MainWindow window;
        window.configPanel()->setConfig(quickConfig(0, 1));
        SweepPage* page = window.sweepPage();
        page->setStudy(SweepPage::Study::Attention);
        QVERIFY(page->isolateBox()->isHidden());
        QSignalSpy finished(&window, &MainWindow::attentionFinished);
        Q_EMIT page->startRequested();
        QCOMPARE(window.currentTab(), window.attentionPage());
        const AttentionBenchSpec expected = attentionStudySpec(DeviceKind::Cpu);
        const AttentionBenchSpec shown = window.attentionPage()->spec(DeviceKind::Cpu);
        QCOMPARE(shown.backends, expected.backends);
        QCOMPARE(shown.headDims, expected.headDims);
        QCOMPARE(shown.seqLens, defaultSeqLens(DeviceKind::Cpu));
        QCOMPARE(shown.batch, expected.batch);
        QCOMPARE(shown.causal, expected.causal);
        QCOMPARE(shown.repeats, expected.repeats);
        QVERIFY(window.isRunning());
        window.stopRun();  // the grid itself is tst_main_window's and tst_attention's
        QVERIFY(finished.wait(300000));
    }

    // A Slurm array's folder: every point listed from the start, pending
    // until its task writes the run file into points/, the app watching.
    void slurmArrayFolderFillsInAsTasksFinish() {
        const QString dir = dir_.filePath("slurm-sweep");
        QVERIFY(
            runCli({"sweep", "--model", "nano", "--vocab", "97", "--batch", "1", "--ctx", "8,16",
                    "--mode", "forward", "--warmup", "0", "--steps", "1", "--slurm", dir}));
        QVERIFY(runArrayTask(dir, 0));

        MainWindow window;
        QVERIFY(window.openRunFile(dir));  // the folder, as File → Open folder
        QCOMPARE(window.watchedSweepDirectory(), dir);
        QCOMPARE(window.currentTab(), window.sweepPage());
        SweepPage* page = window.sweepPage();
        QTableWidget* table = page->table();
        QCOMPARE(table->rowCount(), 2);
        QCOMPARE(table->item(0, page->column(SweepPage::Context))->text(), QString("8"));
        QCOMPARE(table->item(0, page->column(SweepPage::Status))->text(), QString("ok"));
        QCOMPARE(table->item(1, page->column(SweepPage::Context))->text(), QString("16"));
        QCOMPARE(table->item(1, page->column(SweepPage::Status))->text(), QString("pending"));
        QVERIFY2(page->statusText().startsWith("1 of 2 points from " + dir),
                 qPrintable(page->statusText()));
        QCOMPARE(int(window.documents().size()), 1);

        QVERIFY(runArrayTask(dir, 1));
        QTRY_COMPARE_WITH_TIMEOUT(table->item(1, page->column(SweepPage::Status))->text(),
                                  QString("ok"), 10000);
        QVERIFY2(page->statusText().startsWith("2 points from " + dir),
                 qPrintable(page->statusText()));
        const RunResult stored = readRunFile(window.documents()[1].path.toStdString());
        QCOMPARE(stored.config.contextLength, int64_t(16));
        QCOMPARE(table->item(1, page->column(SweepPage::Total))->text(),
                 meanStd(stored.summary.total));
    }

    // An attention array's folder before --collect: the Attention tab shows
    // the points done and takes the others as their tasks write them.
    void slurmAttentionFolderFillsInAsTasksFinish() {
        const QString dir = dir_.filePath("slurm-attention");
        QVERIFY(runCli({"attention", "--backends", "naive", "--d", "16", "--seq", "32,64",
                        "--batch", "1", "--warmup", "0", "--repeats", "1", "--slurm", dir}));
        QVERIFY(runArrayTask(dir, 1));

        MainWindow window;
        QVERIFY(window.openRunFile(dir));
        QCOMPARE(window.currentTab(), window.attentionPage());
        AttentionPage* page = window.attentionPage();
        QCOMPARE(int(page->points().size()), 1);
        QCOMPARE(page->points()[0].seq, int64_t(64));
        QVERIFY2(page->statusText().startsWith("1 of 2 points from " + dir),
                 qPrintable(page->statusText()));

        QVERIFY(runArrayTask(dir, 0));
        QTRY_COMPARE_WITH_TIMEOUT(int(page->points().size()), 2, 10000);
        QCOMPARE(page->points()[0].seq, int64_t(32));  // the grid's order
        QVERIFY2(page->statusText().startsWith("2 of 2 points from " + dir),
                 qPrintable(page->statusText()));
    }

    void badAxisValuesAreNamedInTheBanner() {
        MainWindow window;
        window.configPanel()->setConfig(quickConfig(0, 1));
        SweepPage* page = window.sweepPage();
        page->axisEdit("attention")->setText("naive,flash9");
        Q_EMIT page->startRequested();
        QVERIFY(!window.isRunning());
        QVERIFY2(window.bannerText().contains("flash9"), qPrintable(window.bannerText()));
        page->axisEdit("attention")->clear();
        page->setStudy(SweepPage::Study::Warmup);
        page->warmupsEdit()->setText("0,-1");
        Q_EMIT page->startRequested();
        QVERIFY(!window.isRunning());
        QVERIFY2(window.bannerText().contains("'-1' is not allowed"),
                 qPrintable(window.bannerText()));
    }
};

QTEST_MAIN(TestSweepTab)
#include "tst_sweep_tab.moc"
