// Points in fresh processes (sweep --isolate) and the named studies: each
// isolated point runs in its own stepscope-cli process, one that is killed or
// refuses its config is a failed result while the sweep goes on, cancel stops
// the child, and the warm-up and precision tables hold the run files' values.
#include <QtTest/QtTest>

#include <QFile>
#include <QTemporaryDir>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <set>

#include "engines/isolated_run.h"
#include "experiments/study.h"
#include "experiments/sweep.h"
#include "results/run_file.h"
#include "test_support.h"

using namespace stepscope;

namespace {

const std::string kCli = STEPSCOPE_CLI;

RunResult isolated(const RunConfig& config, const RunControl& control) {
    return runInFreshProcess(config, kCli, control);
}

SweepSpec attentionPair(const QString& dir) {
    SweepSpec spec;
    spec.base = test::tinyCpuConfig();
    spec.base.warmupSteps = 0;
    spec.base.measuredSteps = 2;
    spec.models = {spec.base.model};
    spec.contexts = {16};
    spec.modes = {RunMode::Forward};
    spec.precisions = {Precision::Fp32};
    spec.axes = {{"attention", {"naive", "sdpa"}}};
    spec.outDir = dir.toStdString();
    return spec;
}

// Counts the steps a run streams to its observer.
class StepCounter final : public RunObserver {
public:
    void onStep(const StepRecord&) override { ++steps; }
    int steps = 0;
};

// Kills the child with SIGKILL as soon as it reports its first step.
class KillAtFirstStep final : public RunObserver {
public:
    void onStep(const StepRecord&) override {
        if (pid > 0 && !sent) {
            sent = ::kill(pid, SIGKILL) == 0;
        }
    }
    int pid = 0;
    bool sent = false;
};

// Sets the cancel flag at the first step, as Ctrl-C would.
class CancelAtFirstStep final : public RunObserver {
public:
    explicit CancelAtFirstStep(std::atomic<bool>& flag) : flag_(flag) {}
    void onStep(const StepRecord&) override { flag_.store(true); }

private:
    std::atomic<bool>& flag_;
};

QStringList fileLines(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return {};
    }
    return QString::fromUtf8(file.readAll()).trimmed().split('\n');
}

}  // namespace

class TestStudy : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void isolatedSweepRunsEachPointInItsOwnProcess() {
        QTemporaryDir dir;
        StepCounter counter;
        SweepControl control;
        control.runPoint = isolated;
        control.runObserver = &counter;
        const auto results = runSweep(attentionPair(dir.path()), control);
        QCOMPARE(int(results.size()), 2);
        std::set<int> pids;
        for (const char* name :
             {"nano_ctx16_forward_fp32_naive.json", "nano_ctx16_forward_fp32_sdpa.json"}) {
            const RunResult run = readRunFile((dir.path() + "/" + name).toStdString());
            QVERIFY2(run.status == RunStatus::Ok, run.message.c_str());
            QCOMPARE(int(run.steps.size()), 2);
            QVERIFY(run.environment.isolated);
            QVERIFY(run.environment.processId > 0);
            QVERIFY(run.environment.processId != int(::getpid()));
            pids.insert(run.environment.processId);
        }
        QCOMPARE(int(pids.size()), 2);  // a process per point
        QCOMPARE(counter.steps, 4);     // the children's steps arrived as they ran
        // An in-process run says so too.
        const RunResult here = runBenchmark(attentionPair(dir.path()).base);
        QCOMPARE(here.environment.processId, int(::getpid()));
        QVERIFY(!here.environment.isolated);
    }

    void killedPointIsFailedAndTheSweepGoesOn() {
        QTemporaryDir dir;
        SweepSpec spec = attentionPair(dir.path());
        // The middle point has far more steps than it can run before the kill lands.
        spec.axes = {{"steps", {"2", "4000", "3"}}};
        spec.modes = {RunMode::TrainStep};
        int killedPid = 0;
        bool killSent = false;
        SweepControl control;
        control.runPoint = [&](const RunConfig& config, const RunControl& runControl) {
            if (config.measuredSteps != 4000) {
                return isolated(config, runControl);
            }
            KillAtFirstStep killer;
            RunControl own = runControl;
            own.observer = &killer;
            RunResult result = runInFreshProcess(config, kCli, own, [&](int pid) {
                killer.pid = pid;
                killedPid = pid;
            });
            killSent = killer.sent;
            return result;
        };
        const auto results = runSweep(spec, control);
        QVERIFY(killSent);
        QCOMPARE(int(results.size()), 3);
        QCOMPARE(toString(results[0].status), std::string("ok"));
        QCOMPARE(toString(results[2].status), std::string("ok"));

        const RunResult killed =
            readRunFile((dir.path() + "/nano_ctx16_train-step_fp32_steps4000.json").toStdString());
        QCOMPARE(toString(killed.status), std::string("failed"));
        QVERIFY2(QString::fromStdString(killed.message).contains("killed by signal 9"),
                 killed.message.c_str());
        QVERIFY2(
            QString::fromStdString(killed.message).contains("pid " + QString::number(killedPid)),
            killed.message.c_str());
        QCOMPARE(killed.environment.processId, killedPid);
        QVERIFY(killed.environment.isolated);
        // The steps it sent before it died are kept.
        QVERIFY(!killed.steps.empty());
        QVERIFY(int(killed.steps.size()) < 4000);
        QCOMPARE(killed.config.measuredSteps, 4000);
        QCOMPARE(fileLines(dir.path() + "/sweep.csv").size(), 1 + 3);
        QVERIFY(::kill(killedPid, 0) != 0);  // and it is gone, reaped
    }

    void cancelStopsTheChildBetweenSteps() {
        RunConfig config = test::tinyCpuConfig();
        config.measuredSteps = 4000;
        std::atomic<bool> cancel{false};
        CancelAtFirstStep canceller(cancel);
        RunControl control;
        control.cancel = &cancel;
        control.observer = &canceller;
        int pid = 0;
        const RunResult result =
            runInFreshProcess(config, kCli, control, [&pid](int started) { pid = started; });
        // SIGTERM: the CLI stopped between steps and wrote its run file.
        QCOMPARE(toString(result.status), std::string("cancelled"));
        QVERIFY(!result.steps.empty());
        QVERIFY(int(result.steps.size()) < 4001);
        QCOMPARE(result.environment.processId, pid);
        QVERIFY(::kill(pid, 0) != 0);
    }

    void configTheChildRefusesIsAFailedResult() {
        RunConfig config = test::tinyCpuConfig();
        config.contextLength = 4096;  // over the model's maximum
        const RunResult result = runInFreshProcess(config, kCli, {});
        QCOMPARE(toString(result.status), std::string("failed"));
        QVERIFY2(QString::fromStdString(result.message).contains("exit status 2"),
                 result.message.c_str());
        QVERIFY2(QString::fromStdString(result.message).contains("ctx: context length 4096"),
                 result.message.c_str());
    }

    void missingCliIsAFailedResult() {
        const RunResult result =
            runInFreshProcess(test::tinyCpuConfig(), "/nonexistent/stepscope-cli", {});
        QCOMPARE(toString(result.status), std::string("failed"));
        QVERIFY2(QString::fromStdString(result.message).contains("/nonexistent/stepscope-cli"),
                 result.message.c_str());
    }

    void warmupStudyOnNano() {
        QTemporaryDir dir;
        WarmupStudySpec spec;
        spec.base = test::tinyCpuConfig();
        spec.base.measuredSteps = 3;
        spec.outDir = dir.path().toStdString();
        spec.cli = kCli;
        const std::vector<WarmupStudyRow> rows = runWarmupStudy(spec);

        QCOMPARE(int(rows.size()), 4);
        const int warmups[] = {0, 1, 2, 5};
        std::set<int> pids;
        for (int i = 0; i < 4; ++i) {
            const WarmupStudyRow& row = rows[size_t(i)];
            QCOMPARE(row.warmup, warmups[i]);
            QVERIFY2(row.status == RunStatus::Ok, row.message.c_str());
            QVERIFY(row.firstMs.has_value() && row.secondMs.has_value());
            pids.insert(row.processId);
            // The row is the run file's: its warm-up steps, its first two measured steps,
            // the statistics of its measured steps.
            const QString file =
                dir.path() + QString("/nano_ctx16_train-step_fp32_warmup%1.json").arg(row.warmup);
            QCOMPARE(QString::fromStdString(row.runFile), file);
            const RunResult run = readRunFile(file.toStdString());
            QVERIFY(run.environment.isolated);
            QCOMPARE(run.environment.processId, row.processId);
            QCOMPARE(run.config.warmupSteps, row.warmup);
            QCOMPARE(int(run.steps.size()), row.warmup + 3);
            QCOMPARE(*row.firstMs, run.steps[size_t(row.warmup)].totalMs);
            QCOMPARE(*row.secondMs, run.steps[size_t(row.warmup) + 1].totalMs);
            QVERIFY(!run.steps[size_t(row.warmup)].warmup);
            QCOMPARE(row.total.mean, run.summary.total.mean);
            QCOMPARE(row.total.std, run.summary.total.std);
            QCOMPARE(row.total.count, 3);
        }
        QCOMPARE(int(pids.size()), 4);
        // Not asserted: that warm-up 0's first step is slower than warm-up 5's median. On
        // this CPU it was about 2× on a quiet machine, but with two cores shared, steps of
        // any point now and then take ~1 s when another process holds a core, which
        // reverses the order (docs/perf/2026-11-23-cpu-studies.md).

        // study.csv and study.md hold the same numbers, one row per warm-up count.
        const QStringList csv = fileLines(dir.path() + "/study.csv");
        QCOMPARE(csv.size(), 1 + 4);
        const QStringList header = csv[0].split(',');
        for (int i = 0; i < 4; ++i) {
            const QStringList cells = csv[i + 1].split(',');
            const WarmupStudyRow& row = rows[size_t(i)];
            QCOMPARE(cells[header.indexOf("warmup")].toInt(), row.warmup);
            QCOMPARE(cells[header.indexOf("pid")].toInt(), row.processId);
            QVERIFY(std::abs(cells[header.indexOf("first_ms")].toDouble() - *row.firstMs) < 1e-4);
            QVERIFY(std::abs(cells[header.indexOf("second_ms")].toDouble() - *row.secondMs) < 1e-4);
            QVERIFY(std::abs(cells[header.indexOf("mean_ms")].toDouble() - row.total.mean) < 1e-4);
            QVERIFY(std::abs(cells[header.indexOf("std_ms")].toDouble() - row.total.std) < 1e-4);
        }
        const QStringList markdown = fileLines(dir.path() + "/study.md");
        QCOMPARE(markdown.size(), 2 + 4);
        QVERIFY2(markdown[0].contains("| mean ms | std ms |") &&
                     markdown[0].contains("| first ms | second ms |"),
                 qPrintable(markdown[0]));
        for (int i = 0; i < 4; ++i) {
            const WarmupStudyRow& row = rows[size_t(i)];
            QVERIFY2(markdown[i + 2].startsWith(QString("| %1 | ok | 3 | %2 | %3 |")
                                                    .arg(row.warmup)
                                                    .arg(row.total.mean, 0, 'f', 2)
                                                    .arg(row.total.std, 0, 'f', 2)),
                     qPrintable(markdown[i + 2]));
            QVERIFY2(markdown[i + 2].contains(QString("| %1 | %2 |")
                                                  .arg(*row.firstMs, 0, 'f', 2)
                                                  .arg(*row.secondMs, 0, 'f', 2)),
                     qPrintable(markdown[i + 2]));
        }
    }

    void precisionStudyComparesWithFp32() {
        QTemporaryDir dir;
        SweepSpec spec;
        spec.base = test::tinyCpuConfig();
        spec.base.traceMemory = true;
        spec.models = {spec.base.model};
        spec.contexts = {16};
        spec.modes = {RunMode::TrainStep};
        spec.outDir = dir.path().toStdString();
        const std::vector<PrecisionStudyRow> rows = runPrecisionStudy(spec);  // fp32, bf16, fp16
        QCOMPARE(int(rows.size()), 3);
        QVERIFY(rows[0].precision == Precision::Fp32);
        QVERIFY(rows[1].precision == Precision::Bf16);
        QVERIFY(rows[2].precision == Precision::Fp16);
        for (const auto& row : rows) {
            QVERIFY2(row.status == RunStatus::Ok, row.message.c_str());
            const RunResult run = readRunFile(row.runFile);
            QCOMPARE(row.total.mean, run.summary.total.mean);
            QVERIFY(row.peakBytes.has_value() && *row.peakBytes > 0);
            QVERIFY(row.speedup.has_value() && row.memoryRatio.has_value());
            QCOMPARE(*row.speedup, rows[0].total.mean / row.total.mean);
            QCOMPARE(*row.memoryRatio, double(*row.peakBytes) / double(*rows[0].peakBytes));
        }
        QCOMPARE(*rows[0].speedup, 1.0);
        const QStringList markdown = fileLines(dir.path() + "/study.md");
        QCOMPARE(markdown.size(), 2 + 3);
        QVERIFY(markdown[0].contains("| speed-up vs fp32 | peak memory | memory vs fp32 |"));
        QVERIFY2(markdown[2].contains("| 1.00× |"), qPrintable(markdown[2]));
    }
};

QTEST_GUILESS_MAIN(TestStudy)
#include "tst_study.moc"
