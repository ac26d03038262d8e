// Sweeps: the cartesian product, and that a sweep which stops or dies halfway
// keeps every finished point on disk (run files and tables).
#include <QtTest/QtTest>

#include <QDir>
#include <QTemporaryDir>

#include "bench/sweep.h"
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

int csvRows(const QString& dir) {
    QFile csv(dir + "/sweep.csv");
    if (!csv.open(QIODevice::ReadOnly)) {
        return -1;
    }
    return int(csv.readAll().trimmed().split('\n').size()) - 1;  // minus the header
}

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
