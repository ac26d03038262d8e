// A training step on 2 gloo ranks, as a user runs one: `stepscope-cli run
// --engine pytorch --ranks 2 --parallel …`, the ranks started by torchrun in
// the Python worker. Held against what must be true of any data-parallel
// step: every rank measures every step, each collective is found on both
// ranks with the same bytes, a rank's wait is its collective's duration less
// the shortest, and the run file reads back as written. The refusals (a batch
// that does not divide, a strategy that fails the gate, a rank that dies)
// are checked against the user's own modules in python/tests/data.
#include <QtTest/QtTest>

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <map>

#include "results/run_file.h"
#include "test_support.h"

using namespace stepscope;
using test::CliResult;
using test::runCli;

namespace {

// The student strategies the Python tests use: SummingDDP, ExitingDDP, …
QString strategies() {
    return test::sourcePath("python/tests/data/strategies");
}

// A nano model small enough that torchrun's start is most of the time.
QStringList twoRanks(const QString& parallel) {
    return {"run",   "--engine", "pytorch", "--model",    "nano",     "--vocab",   "97",
            "--ctx", "16",       "--batch", "4",          "--warmup", "1",         "--steps",
            "2",     "--ranks",  "2",       "--parallel", parallel,   "--threads", "1"};
}

bool hasTorchrun() {
    QProcess python;
    python.start(test::pythonExecutable(), {"-c", "import torch.distributed.run"});
    return python.waitForFinished(60000) && python.exitCode() == 0;
}

// The worker's processes still alive: torchrun or a rank of ours.
int leftoverRanks() {
    QProcess pgrep;
    pgrep.start("pgrep", {"-f", "stepscope.distributed.rank_main"});
    pgrep.waitForFinished(10000);
    return QString::fromUtf8(pgrep.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts).size();
}

}  // namespace

class TestDistributedRun : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        if (!hasTorchrun()) {
            QSKIP("the worker's Python has no torch.distributed (a CPU-only torch without it)");
        }
    }

    // Each rank measured each step; the collectives of the step match across
    // the ranks; the run's steps are rank 0's; the file reads back the same.
    void naiveDdpOnTwoRanks() {
        const QString out = dir_.filePath("naive.json");
        const CliResult run = runCli(twoRanks("naive") + QStringList{"--out", out});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const RunResult result = readRunFile(out.toStdString());
        QVERIFY2(result.status == RunStatus::Ok, result.message.c_str());
        QCOMPARE(result.config.ranks, 2);
        QCOMPARE(QString::fromStdString(result.config.parallel), QString("naive"));
        QVERIFY(result.distributed);
        const DistributedRun& ranks = *result.distributed;
        QVERIFY(ranks.gate && ranks.gate->ok);
        QVERIFY(*ranks.gate->maxRelError <= ranks.gate->tolerance);
        QCOMPARE(int(ranks.ranks.size()), 2);
        for (const RankRecord& rank : ranks.ranks) {
            QCOMPARE(int(rank.steps.size()), 3);  // 1 warm-up + 2 measured
            for (const StepRecord& step : rank.steps) {
                QVERIFY(step.communicationWaitMs && *step.communicationWaitMs >= 0);
                // The phases add up to no more than the step.
                QVERIFY(*step.forwardMs + *step.backwardMs + *step.communicationWaitMs +
                            *step.optimizerMs <=
                        step.totalMs + 0.01);
            }
            QVERIFY(!rank.spans.collectives.empty());
            QVERIFY(rank.memory.peakBytes && *rank.memory.peakBytes > 0);
        }
        // Rank 0's steps are the run's.
        QCOMPARE(int(result.steps.size()), 3);
        for (size_t i = 0; i < result.steps.size(); ++i) {
            QCOMPARE(result.steps[i].totalMs, ranks.ranks[0].steps[i].totalMs);
        }
        // Naive DDP all-reduces each gradient once a step, on every rank: the
        // same collectives, matched one for one, the same bytes each.
        // Matched over the measured steps, as every figure of a run is.
        QCOMPARE(ranks.ranks[0].spans.collectives.size(), ranks.ranks[1].spans.collectives.size());
        const auto measured = std::count_if(
            ranks.ranks[0].spans.collectives.begin(), ranks.ranks[0].spans.collectives.end(),
            [&](const CollectiveSpan& span) { return span.step >= 1; });  // step 0: the warm-up
        QVERIFY(measured > 0);
        QCOMPARE(int64_t(ranks.collectives.size()), int64_t(measured));
        QCOMPARE(ranks.unmatched, int64_t(0));
        int64_t parameterBytes = 0;
        for (const CollectiveSpan& span : ranks.ranks[0].spans.collectives) {
            QCOMPARE(QString::fromStdString(span.op), QString("all_reduce"));
            if (span.phase == "comm_wait" || span.phase == "backward") {
                parameterBytes += span.bytes;
            }
        }
        // Every fp32 parameter's gradient, each of the 3 steps.
        QCOMPARE(parameterBytes, 3 * 4 * result.parameterCount);
        for (const MatchedCollective& matched : ranks.collectives) {
            QCOMPARE(int(matched.waitUs.size()), 2);
            // The shortest of the two waited for no one.
            QVERIFY(std::min(matched.waitUs[0], matched.waitUs[1]) == 0);
            QVERIFY(matched.transferUs > 0);
        }
        // Written and read again: the same JSON.
        const std::string written = runResultToJson(result);
        QCOMPARE(runResultToJson(runResultFromJson(written)), written);
    }

    // A global batch of 3 on 2 ranks cannot be split: refused before any rank starts.
    void aBatchThatDoesNotDivideIsRefused() {
        QStringList arguments = twoRanks("naive");
        arguments[arguments.indexOf("--batch") + 1] = "3";
        const CliResult run = runCli(arguments);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("batch 3 does not divide by ranks 2"), qPrintable(run.err));
        const CliResult none = runCli(twoRanks("none"));
        QCOMPARE(none.exitCode, 2);
        QVERIFY2(none.err.contains("parallel: 2 ranks need a strategy"), qPrintable(none.err));
        QStringList libtorch = twoRanks("naive");
        libtorch[libtorch.indexOf("--engine") + 1] = "libtorch";
        const CliResult engine = runCli(libtorch);
        QCOMPARE(engine.exitCode, 2);
        QVERIFY2(engine.err.contains("ranks: ") && engine.err.contains("--engine pytorch"),
                 qPrintable(engine.err));
    }

    // A student's DDP that sums gradients where it should average them fails
    // the gate: exit 2 naming --py-ddp, its worst parameter and error, and no
    // run file.
    void aWrongStrategyIsNotTimed() {
        const QString out = dir_.filePath("summing.json");
        const CliResult run =
            runCli(twoRanks("naive") + QStringList{"--py-ddp", "students:SummingDDP", "--py-path",
                                                   strategies(), "--out", out});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("py-ddp: 'students:SummingDDP' fails the correctness gate") &&
                     run.err.contains("relative error"),
                 qPrintable(run.err));
        QVERIFY(!QFile::exists(out));
    }

    // Strategies as a sweep axis: a point per strategy, each a run on 2
    // ranks with its ranks in its file, and the table's comm wait and exposed
    // columns; a strategy the gate refuses is a point of its own, incorrect.
    void aSweepOverStrategiesIsAPointEach() {
        const QString out = dir_.filePath("strategies");
        QStringList sweep = twoRanks("naive,overlap");
        sweep[0] = "sweep";
        const CliResult run = runCli(sweep + QStringList{"--out", out});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        for (const QString parallel : {"naive", "overlap"}) {
            const QString file = out + "/nano_ctx16_train-step_fp32_parallel" + parallel + ".json";
            QVERIFY2(QFile::exists(file), qPrintable(file));
            const RunResult point = readRunFile(file.toStdString());
            QVERIFY2(point.status == RunStatus::Ok, point.message.c_str());
            QCOMPARE(QString::fromStdString(point.config.parallel), parallel);
            QVERIFY(point.distributed && point.distributed->ranks.size() == 2);
            QVERIFY(point.summary.communicationWait);
        }
        QFile table(out + "/sweep.md");
        QVERIFY(table.open(QIODevice::ReadOnly));
        const QString markdown = QString::fromUtf8(table.readAll());
        QVERIFY2(
            markdown.contains("| parallel |") && markdown.contains("| comm wait ms | exposed ms |"),
            qPrintable(markdown));
        QCOMPARE(markdown.count("| ok |"), 2);

        const QString wrong = dir_.filePath("wrong-strategy");
        QStringList refused = twoRanks("naive");
        refused[0] = "sweep";
        const CliResult incorrect =
            runCli(refused + QStringList{"--py-ddp", "students:SummingDDP", "--py-path",
                                         strategies(), "--out", wrong});
        QVERIFY2(incorrect.exitCode == 0, qPrintable(incorrect.err));
        QFile wrongTable(wrong + "/sweep.md");
        QVERIFY(wrongTable.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(wrongTable.readAll()).contains("| incorrect |"));
    }

    // A rank that dies without a word ends the run within seconds, naming the
    // rank; no rank is left behind; the steps measured are kept.
    void aRankThatDiesEndsTheRun() {
        const QString out = dir_.filePath("exiting.json");
        QElapsedTimer clock;
        clock.start();
        const CliResult run =
            runCli(twoRanks("naive") + QStringList{"--py-ddp", "misbehaving:ExitingDDP",
                                                   "--py-path", strategies(), "--out", out});
        QCOMPARE(run.exitCode, 3);
        QVERIFY2(run.err.contains("rank 1"), qPrintable(run.err));
        qInfo("a rank's death ended the run after %.1f s", clock.elapsed() / 1000.0);
        QTRY_COMPARE_WITH_TIMEOUT(leftoverRanks(), 0, 10000);
        QVERIFY(QFile::exists(out));  // a failed run's file, for what was measured
        const RunResult result = readRunFile(out.toStdString());
        QVERIFY(result.status == RunStatus::Failed);
        QVERIFY(QString::fromStdString(result.message).contains("rank 1"));
    }

    // A rank that dies before it says anything still has its place in the
    // run file (ranks in order, each once, is what a reader holds a file
    // to): a worker that speaks only for rank 1, then fails.
    void aRankThatNeverSpokeKeepsItsPlace() {
        const QString fake = dir_.filePath("fake-python");
        QFile script(fake);
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write(R"(#!/bin/sh
cat > /dev/null
echo '{"event": "started", "ranks": 2, "parameters": 10}'
echo '{"event": "step", "rank": 1, "index": 0, "warmup": false, "total_ms": 5.0, "forward_ms": 1.0, "backward_ms": 2.0, "comm_wait_ms": 1.5, "optimizer_ms": 0.5, "loss": 4.0, "phases": [{"phase": "forward", "start_us": 0, "end_us": 1000}], "collectives": [{"op": "all_reduce", "group": "0", "seq": 1, "bytes": 40, "async": false, "start_us": 3000, "end_us": 4500}]}'
echo '{"event": "finished", "status": "failed", "message": "rank 0 exited with status -9 without saying why"}'
)");
        script.close();
        QVERIFY(script.setPermissions(script.permissions() | QFileDevice::ExeOwner));
        const QString out = dir_.filePath("silent-rank.json");
        const CliResult run =
            runCli(twoRanks("naive") + QStringList{"--python", fake, "--out", out});
        QCOMPARE(run.exitCode, 3);
        const RunResult result = readRunFile(out.toStdString());
        QVERIFY(result.distributed);
        QCOMPARE(int(result.distributed->ranks.size()), 2);
        QVERIFY(result.distributed->ranks[0].steps.empty());
        QCOMPARE(int(result.distributed->ranks[1].steps.size()), 1);
        QVERIFY(result.steps.empty());  // the run's are rank 0's, which measured none
    }

    // What a file holds about its ranks is checked as any other section.
    void aFileWithBadRanksIsRefused() {
        const QString out = dir_.filePath("naive.json");
        if (!QFile::exists(out)) {
            QSKIP("needs naiveDdpOnTwoRanks's file");
        }
        QFile file(out);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const std::string text = file.readAll().toStdString();
        // `from` after the ranks' section begins, where a reader reads it.
        const size_t ranks = text.find("\"ranks\": [");
        QVERIFY(ranks != std::string::npos);
        const auto refused = [&](const std::string& from, const std::string& to,
                                 const QString& expected) {
            std::string edited = text;
            const size_t at = edited.find(from, ranks);
            QVERIFY2(at != std::string::npos, from.c_str());
            edited.replace(at, from.size(), to);
            try {
                runResultFromJson(edited);
                QFAIL(qPrintable("accepted: " + expected));
            } catch (const RunFileError& error) {
                QVERIFY2(QString(error.what()).contains(expected), error.what());
            }
        };
        refused("\"rank\": 1", "\"rank\": 7", "run.ranks[1].rank");
        refused("\"rank\": 1", "\"rank\": 0", "run.ranks[1].rank: expected 1");
        refused("\"seq\": ", "\"seq\": -", "run.ranks[0].collectives[0].seq");
        refused(
            "\"start_us\": ", "\"start_us\": \"soon\", \"was\": ", "start_us: expected a number");
    }
};

QTEST_MAIN(TestDistributedRun)
#include "tst_distributed_run.moc"
