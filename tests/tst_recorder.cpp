// The recorder's run file (python/stepscope/record.py, `python -m stepscope`)
// read by the C++ reader: every field as the recorder reported it on stdout,
// the same file again when the C++ writer writes what it read, the summary
// and row categories as the C++ side computes them, and `stepscope-cli show`.
#include <QtTest/QtTest>

#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "profile/operator_tracer.h"
#include "results/run_file.h"
#include "test_support.h"
#include "util/atomic_file.h"

using namespace stepscope;
using nlohmann::json;

namespace {

struct Finished {
    int exitCode = -1;
    QByteArray out;
    QString err;
};

Finished runProcess(const QString& program, const QStringList& arguments) {
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("PYTHONPATH", test::sourcePath("python"));
    process.setProcessEnvironment(environment);
    process.start(program, arguments);
    Finished finished;
    if (!process.waitForFinished(300000) || process.exitStatus() != QProcess::NormalExit) {
        finished.err = program + " did not finish: " + process.errorString();
        return finished;
    }
    finished.exitCode = process.exitCode();
    finished.out = process.readAllStandardOutput();
    finished.err = QString::fromUtf8(process.readAllStandardError());
    return finished;
}

// Two JSON values that differ, as a patch from one to the other (short).
std::string difference(const json& from, const json& to) {
    return json::diff(from, to).dump().substr(0, 2000);
}

}  // namespace

class TestRecorder : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // One traced train step of nano on the CPU: its file and what the recorder printed of it.
    void initTestCase() {
        QVERIFY(directory_.isValid());
        file_ = directory_.filePath("nano.json");
        const QStringList flags = QStringLiteral(
                                      "-m stepscope --model nano --vocab 97 --ctx 16 --batch 2 "
                                      "--warmup 1 --steps 2 --threads 1 --ops --memory --json")
                                      .split(' ');
        const Finished recorded =
            runProcess(test::pythonExecutable(), flags + QStringList{"--out", file_});
        QVERIFY2(recorded.exitCode == 0, qPrintable(recorded.err));
        printed_ = json::parse(recorded.out.toStdString());
        written_ = json::parse(readFile(file_.toStdString()));
        read_ = readRunFile(file_.toStdString());
    }

    void theFileIsWhatTheRecorderReported() {
        QVERIFY2(written_ == printed_, difference(printed_, written_).c_str());
        QCOMPARE(toString(read_.status), printed_["status"].get<std::string>());
        QCOMPARE(read_.config.model.name, std::string("nano"));
        QCOMPARE(read_.parameterCount, printed_["model"]["parameters"].get<int64_t>());
        QCOMPARE(read_.steps.size(), size_t(3));
        QCOMPARE(read_.operators.size(), printed_["operators"].size());
        QVERIFY(!read_.operators.empty());
        QCOMPARE(read_.memory.size(), printed_["memory"]["time_us"].size());
        QVERIFY(read_.memory.size() > 0);
        QCOMPARE(read_.environment.python, printed_["environment"]["python"].get<std::string>());
    }

    // Every field survives the C++ reader: written again by the C++ writer,
    // the file is the same object, but for the summary, recomputed on reading.
    void everyFieldIsIntactThroughTheCppReader() {
        json again = json::parse(runResultToJson(read_));
        json written = written_;
        again.erase("summary");
        written.erase("summary");
        QVERIFY2(again == written, difference(written, again).c_str());
    }

    void theSummaryIsTheOneTheCppSideComputes() {
        const json& summary = written_["summary"];
        const RunSummary& s = read_.summary;
        const auto close = [](double a, double b) {
            return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b));
        };
        for (const auto& [key, stats] :
             {std::pair<const char*, std::optional<Stats>>{"total_ms", s.total},
              {"forward_ms", s.forward},
              {"backward_ms", s.backward},
              {"optimizer_ms", s.optimizer}}) {
            QVERIFY2(stats, key);
            const json& written = summary[key];
            QCOMPARE(written["count"].get<int>(), stats->count);
            for (const auto& [field, value] : {std::pair<const char*, double>{"mean", stats->mean},
                                               {"std", stats->std},
                                               {"median", stats->median},
                                               {"min", stats->min},
                                               {"max", stats->max},
                                               {"cv", stats->cv}}) {
                QVERIFY2(close(written[field].get<double>(), value),
                         (std::string(key) + "." + field).c_str());
            }
        }
        QCOMPARE(summary["flops_per_step"].get<double>(), s.flopsPerStep);
        QVERIFY(close(summary["tokens_per_second"].get<double>(), s.tokensPerSecond));
        QVERIFY(
            close(summary["achieved_flops_per_second"].get<double>(), s.achievedFlopsPerSecond));
        QVERIFY(summary["mfu"].is_null() && !s.mfu);
    }

    void rowsCarryTheEnginesCategories() {
        for (const auto& row : read_.operators) {
            QVERIFY2(row.category == operatorCategory(row.name, row.phase),
                     (row.name + " in " + row.phase + ": " + row.category).c_str());
        }
    }

    void cliShowsTheFile() {
        const Finished shown = runProcess(QStringLiteral(STEPSCOPE_CLI), {"show", file_});
        QVERIFY2(shown.exitCode == 0, qPrintable(shown.err));
        QVERIFY(shown.out.contains("nano"));
    }

private:
    QTemporaryDir directory_;
    QString file_;
    json printed_;
    json written_;
    RunResult read_;
};

QTEST_GUILESS_MAIN(TestRecorder)
#include "tst_recorder.moc"
