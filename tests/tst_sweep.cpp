// Sweeps: the cartesian product over any config field, and that a sweep which
// stops or dies halfway keeps every finished point on disk (run files and
// tables).
#include <QtTest/QtTest>

#include <QDir>
#include <QTemporaryDir>

#include <set>

#include "experiments/sweep.h"
#include "results/report.h"
#include "results/run_file.h"
#include "test_support.h"

using namespace stepscope;

namespace {

SweepSpec twoByTwo(const QString& dir) {
    SweepSpec spec;
    spec.base = test::tinyCpuConfig();
    spec.base.warmupSteps = 0;
    spec.base.measuredSteps = 1;
    spec.models = {*findPreset("nano")};
    spec.contexts = {8, 16};
    spec.modes = {RunMode::Forward, RunMode::TrainStep};
    spec.precisions = {Precision::Fp32};
    spec.outDir = dir.toStdString();
    return spec;
}

// sweep.csv as rows of cells by column name (no quoted commas in these runs).
QList<QMap<QString, QString>> csvTable(const QString& dir) {
    QFile csv(dir + "/sweep.csv");
    QList<QMap<QString, QString>> rows;
    if (!csv.open(QIODevice::ReadOnly)) {
        return rows;
    }
    const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split('\n');
    const QStringList header = lines.front().split(',');
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QStringList cells = lines[i].split(',');
        QMap<QString, QString> row;
        for (qsizetype c = 0; c < header.size() && c < cells.size(); ++c) {
            row[header[c]] = cells[c];
        }
        rows.push_back(row);
    }
    return rows;
}

int csvRows(const QString& dir) {
    QFile csv(dir + "/sweep.csv");
    if (!csv.open(QIODevice::ReadOnly)) {
        return -1;
    }
    return int(csv.readAll().trimmed().split('\n').size()) - 1;  // minus the header
}

// What --resume said about the run files it did not reuse.
class RerunLog final : public SweepObserver {
public:
    void onPointRerun(int index, const std::string& file, const std::string& why) override {
        reruns.push_back({index, file, why});
    }
    struct Rerun {
        int index;
        std::string file;
        std::string why;
    };
    std::vector<Rerun> reruns;
};

class CancelAfterPoints final : public SweepObserver {
public:
    CancelAfterPoints(std::atomic<bool>& flag, int points) : flag_(flag), points_(points) {}
    void onPointFinished(int index, int, const RunResult&, const std::string&) override {
        if (index + 1 == points_) {
            flag_.store(true);
        }
    }

private:
    std::atomic<bool>& flag_;
    int points_;
};

}  // namespace

class TestSweep : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void expandsTheCartesianProduct() {
        SweepSpec spec = twoByTwo("unused");
        spec.models.push_back(*findPreset("tiny"));
        spec.precisions.push_back(Precision::Bf16);
        const auto points = expandSweep(spec);
        QCOMPARE(int(points.size()), 2 * 2 * 2 * 2);
        QCOMPARE(points[0].model.vocabSize, int64_t{97});  // base fields carried over
        QCOMPARE(sweepPointFileName(points[1]), std::string("nano_ctx8_forward_bf16.json"));
    }

    void completeSweepWritesEveryPoint() {
        QTemporaryDir dir;
        const auto results = runSweep(twoByTwo(dir.path()));
        QCOMPARE(int(results.size()), 4);
        QCOMPARE(csvRows(dir.path()), 4);
        const RunResult reread =
            readRunFile((dir.path() + "/nano_ctx16_train-step_fp32.json").toStdString());
        QCOMPARE(reread.config.contextLength, int64_t{16});
        QVERIFY(reread.summary.optimizer.has_value());
        QFile markdown(dir.path() + "/sweep.md");
        QVERIFY(markdown.open(QIODevice::ReadOnly));
        QCOMPARE(markdown.readAll().count("| nano |"), 4);
    }

    void cancelledSweepKeepsFinishedPoints() {
        QTemporaryDir dir;
        std::atomic<bool> cancel{false};
        CancelAfterPoints observer(cancel, 2);
        SweepControl control;
        control.observer = &observer;
        control.cancel = &cancel;
        const auto results = runSweep(twoByTwo(dir.path()), control);
        QCOMPARE(int(results.size()), 2);
        QCOMPARE(csvRows(dir.path()), 2);
        QCOMPARE(QDir(dir.path()).entryList({"nano_*.json"}).size(), 2);
    }

    void sweepThatDiesKeepsFinishedPoints() {
        QTemporaryDir dir;
        int calls = 0;
        SweepControl control;
        control.runPoint = [&calls](const RunConfig& config, const RunControl& runControl) {
            if (++calls == 3) {
                throw std::runtime_error("simulated crash");
            }
            return runBenchmark(config, runControl);
        };
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, runSweep(twoByTwo(dir.path()), control));
        QCOMPARE(csvRows(dir.path()), 2);
        const QStringList files = QDir(dir.path()).entryList({"nano_*.json"});
        QCOMPARE(files.size(), 2);
        for (const auto& file : files) {
            QCOMPARE(toString(readRunFile((dir.path() + "/" + file).toStdString()).status),
                     std::string("ok"));
        }

        // --resume runs only what is missing.
        calls = 0;
        SweepSpec spec = twoByTwo(dir.path());
        spec.resume = true;
        control.runPoint = [&calls](const RunConfig& config, const RunControl& runControl) {
            ++calls;
            return runBenchmark(config, runControl);
        };
        QCOMPARE(int(runSweep(spec, control).size()), 4);
        QCOMPARE(calls, 2);
        QCOMPARE(csvRows(dir.path()), 4);
    }

    // Issue 33: resuming with --batch 2 a folder made with --batch 1 ran
    // nothing and reported batch 1.
    void resumeRunsAgainThePointsMadeWithAnotherConfigAndSaysSo() {
        QTemporaryDir dir;
        SweepSpec first = twoByTwo(dir.path());
        first.base.batchSize = 1;
        runSweep(first);

        SweepSpec second = twoByTwo(dir.path());
        second.base.batchSize = 2;
        second.resume = true;
        int calls = 0;
        RerunLog log;
        SweepControl control;
        control.observer = &log;
        control.runPoint = [&calls](const RunConfig& config, const RunControl& runControl) {
            ++calls;
            return runBenchmark(config, runControl);
        };
        const auto results = runSweep(second, control);
        QCOMPARE(calls, 4);
        QCOMPARE(int(log.reruns.size()), 4);
        for (const auto& rerun : log.reruns) {
            QVERIFY2(rerun.why.find("batch: 1 (file), 2 (here)") != std::string::npos,
                     rerun.why.c_str());
        }
        for (const auto& result : results) {
            QCOMPARE(result.config.batchSize, int64_t{2});
            QCOMPARE(
                readRunFile(dir.filePath(QString::fromStdString(sweepPointFileName(result.config)))
                                .toStdString())
                    .config.batchSize,
                int64_t{2});
        }

        // The same config again: every point is reused, none said.
        calls = 0;
        log.reruns.clear();
        runSweep(second, control);
        QCOMPARE(calls, 0);
        QVERIFY(log.reruns.empty());
    }

    void sweepOverBatchAndAttentionRunsEveryCombination() {
        QTemporaryDir dir;
        SweepSpec spec = twoByTwo(dir.path());
        spec.contexts = {16};
        spec.modes = {RunMode::Forward};
        spec.axes = {{"batch", {"2", "3"}}, {"attention", {"naive", "sdpa"}}};
        const auto results = runSweep(spec);
        QCOMPARE(int(results.size()), 4);

        // One point per combination, the last axis fastest, each in its own file.
        const std::vector<std::pair<int64_t, std::string>> expected = {
            {2, "naive"}, {2, "sdpa"}, {3, "naive"}, {3, "sdpa"}};
        const auto rows = csvTable(dir.path());
        QCOMPARE(int(rows.size()), 4);
        for (size_t i = 0; i < expected.size(); ++i) {
            const auto& [batch, attention] = expected[i];
            QCOMPARE(results[i].config.batchSize, batch);
            QCOMPARE(results[i].config.attention, attention);
            QCOMPARE(toString(results[i].status), std::string("ok"));
            const QString file = QString("nano_ctx16_forward_fp32_batch%1_%2.json")
                                     .arg(batch)
                                     .arg(QString::fromStdString(attention));
            const RunResult reread = readRunFile((dir.path() + "/" + file).toStdString());
            QCOMPARE(reread.config.batchSize, batch);
            QCOMPARE(reread.config.attention, attention);
            // The CSV row says the same, in its own columns.
            QCOMPARE(rows[qsizetype(i)]["batch"], QString::number(batch));
            QCOMPARE(rows[qsizetype(i)]["attention"], QString::fromStdString(attention));
            QVERIFY2(rows[qsizetype(i)]["run_file"].endsWith(file),
                     qPrintable(rows[qsizetype(i)]["run_file"]));
        }

        // The Markdown table has a column per axis, with each row's values.
        QFile markdown(dir.path() + "/sweep.md");
        QVERIFY(markdown.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(markdown.readAll()).trimmed().split('\n');
        QCOMPARE(lines.size(), 2 + 4);
        QVERIFY2(
            lines[0].startsWith("| model | ctx | mode | precision | batch | attention | engine |"),
            qPrintable(lines[0]));
        for (size_t i = 0; i < expected.size(); ++i) {
            const QString prefix =
                QString("| nano | 16 | forward | fp32 | %1 | %2 | libtorch | ok |")
                    .arg(expected[i].first)
                    .arg(QString::fromStdString(expected[i].second));
            QVERIFY2(lines[qsizetype(2 + i)].startsWith(prefix),
                     qPrintable(lines[qsizetype(2 + i)]));
        }
    }

    void sweepWithoutAxesKeepsItsTableAndNames() {
        // The four typed lists alone: the file names and columns of before.
        SweepSpec spec = twoByTwo("unused");
        QCOMPARE(sweepPointFileName(expandSweep(spec)[0], spec.axes),
                 std::string("nano_ctx8_forward_fp32.json"));
        RunResult a, b;
        a.config = b.config = spec.base;
        const std::string table = formatSweepMarkdown({a, b});
        QVERIFY2(QString::fromStdString(table).startsWith(
                     "| model | ctx | mode | precision | engine | status |"),
                 table.c_str());
        // A field that differs between the runs gets its column even when no axis names it.
        b.config.warmupSteps = 5;
        QVERIFY(QString::fromStdString(formatSweepMarkdown({a, b}))
                    .startsWith("| model | ctx | mode | precision | warmup | engine |"));
    }

    void everyFieldAnAxisSets() {
        // Each field an axis can vary lands in the config and in the file name.
        SweepSpec spec = twoByTwo("unused");
        spec.models = {*findPreset("nano")};
        spec.contexts = {16};
        spec.modes = {RunMode::TrainStep};
        spec.axes = {{"tf32", {"off", "on"}},     {"warmup", {"0", "5"}},
                     {"steps", {"1", "9"}},       {"engine", {"libtorch", "pytorch"}},
                     {"seed", {"1", "2"}},        {"threads", {"1", "2"}},
                     {"device", {"cpu", "cuda"}}, {"compile-mode", {"default", "max-autotune"}}};
        const auto points = expandSweep(spec);
        QCOMPARE(int(points.size()), 1 << 8);
        const RunConfig& last = points.back();
        QVERIFY(last.tf32);
        QCOMPARE(last.warmupSteps, 5);
        QCOMPARE(last.measuredSteps, 9);
        QVERIFY(last.engine == Engine::PyTorch);
        QCOMPARE(last.seed, uint64_t{2});
        QCOMPARE(last.threads, 2);
        QVERIFY(last.device == DeviceKind::Cuda);
        QCOMPARE(last.compileMode, std::string("max-autotune"));
        QCOMPARE(sweepPointFileName(last, spec.axes),
                 std::string("nano_ctx16_train-step_fp32_tf32-on_warmup5_steps9_pytorch_"
                             "compile-max-autotune_cuda_seed2_threads2.json"));
        // Every name is different.
        std::set<std::string> names;
        for (const auto& point : points) {
            names.insert(sweepPointFileName(point, spec.axes));
        }
        QCOMPARE(int(names.size()), int(points.size()));
    }

    // The CLI gave its axes in one order and the Sweep tab in another, so one
    // sweep's points had two names and --resume across them ran every point
    // again. A point's name no longer depends on the order of its axes.
    void aPointIsNamedAlikeWhateverTheOrderOfItsAxes() {
        SweepSpec spec = twoByTwo("unused");
        spec.axes = {{"attention", {"naive", "sdpa"}}, {"batch", {"2", "3"}}};
        const std::vector<SweepAxis> reversed = {spec.axes[1], spec.axes[0]};
        const auto points = expandSweep(spec);
        for (const auto& point : points) {
            QCOMPARE(sweepPointFileName(point, spec.axes), sweepPointFileName(point, reversed));
        }
        QCOMPARE(sweepPointFileName(points.back(), spec.axes),
                 std::string("nano_ctx16_train-step_fp32_batch3_sdpa.json"));
    }

    void badAxesNameTheFieldAndWhatIsAllowed_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QStringList>("values");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown field") << "colour" << QStringList{"red"}
                                       << "colour: is not a config field a sweep can vary; "
                                          "allowed: batch, tf32, attention, warmup";
        QTest::newRow("typed list")
            << "ctx" << QStringList{"8"} << "ctx: is swept through its own list";
        QTest::newRow("tf32") << "tf32" << QStringList{"off", "maybe"}
                              << "tf32: 'maybe' is not allowed; allowed: on, off";
        QTest::newRow("engine") << "engine" << QStringList{"jax"}
                                << "engine: 'jax' is not allowed; allowed: libtorch, pytorch, "
                                   "pytorch-compile";
        QTest::newRow("batch") << "batch" << QStringList{"2", "two"}
                               << "batch: 'two' is not allowed; allowed: a whole number";
        QTest::newRow("twice") << "warmup" << QStringList{"1", "1"}
                               << "warmup: '1' is listed twice";
        QTest::newRow("empty") << "steps" << QStringList{} << "steps: needs at least one value";
    }
    void badAxesNameTheFieldAndWhatIsAllowed() {
        QFETCH(QString, field);
        QFETCH(QStringList, values);
        QFETCH(QString, message);
        SweepSpec spec = twoByTwo("unused");
        SweepAxis axis{field.toStdString(), {}};
        for (const auto& value : values) {
            axis.values.push_back(value.toStdString());
        }
        spec.axes = {axis};
        try {
            expandSweep(spec);
            QFAIL("a bad axis expanded");
        } catch (const InvalidConfigError& error) {
            QVERIFY2(QString(error.what()).contains(message), error.what());
        }
    }

    void backendTheEngineLacksFailsBeforeAnythingRuns() {
        // A name setConfigField takes but validate() does not, for this engine.
        QTemporaryDir dir;
        SweepSpec spec = twoByTwo(dir.path());
        spec.axes = {{"attention", {"naive", "bogus"}}};
        try {
            runSweep(spec);
            QFAIL("an invalid sweep ran");
        } catch (const InvalidConfigError& error) {
            QVERIFY2(QString(error.what())
                         .contains("attention: unknown backend 'bogus'; allowed: "
                                   "naive, tiled, sdpa"),
                     error.what());
            QVERIFY2(QString(error.what()).contains("nano_ctx8_forward_fp32_bogus.json"),
                     error.what());
        }
        QCOMPARE(csvRows(dir.path()), -1);
    }

    void invalidPointFailsBeforeAnythingRuns() {
        QTemporaryDir dir;
        SweepSpec spec = twoByTwo(dir.path());
        spec.contexts = {16, 4096};  // over max context 2048
        try {
            runSweep(spec);
            QFAIL("an invalid sweep ran");
        } catch (const InvalidConfigError& error) {
            QVERIFY2(QString(error.what()).contains("ctx: context length 4096"), error.what());
        }
        QCOMPARE(csvRows(dir.path()), -1);
    }
};

QTEST_GUILESS_MAIN(TestSweep)
#include "tst_sweep.moc"
