// stepscope-cli end to end: JSON outputs re-read and checked against
// independent figures, exit codes, and messages that name the bad field.
#include <QtTest/QtTest>

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <set>

#include "config/model_dims.h"
#include "engines/environment.h"
#include "estimate/memory_estimate.h"
#include "marker_module.h"
#include "results/run_file.h"
#include "test_support.h"

using namespace stepscope;
using test::CliResult;
using test::runCli;

namespace {

// Whether a --help text lists `flag` itself (--mode, not the start of --model).
bool listsFlag(const QByteArray& help, const char* flag) {
    const QRegularExpression pattern(
        QString(R"((^|[\s,])%1(?![\w-]))").arg(QRegularExpression::escape(flag)));
    return pattern.match(QString::fromUtf8(help)).hasMatch();
}

const QStringList kTinyRun = {"--model", "nano", "--vocab",  "97", "--ctx",   "16",
                              "--batch", "2",    "--warmup", "1",  "--steps", "2"};

}  // namespace

class TestCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Run files written before core/ moved into layers open unchanged: each
    // command of tests/data/examples-read-before-the-move.txt, run in the
    // examples' folder, prints exactly what the CLI before the move printed
    // (its SHA-256, stdout and stderr together).
    void examplesReadAsBeforeTheMove() {
        QFile manifest(
            QStringLiteral(STEPSCOPE_SOURCE_DIR "/tests/data/examples-read-before-the-move.txt"));
        QVERIFY(manifest.open(QIODevice::ReadOnly | QIODevice::Text));
        int commands = 0;
        while (!manifest.atEnd()) {
            const QString line = QString::fromUtf8(manifest.readLine()).trimmed();
            if (line.isEmpty() || line.startsWith('#')) {
                continue;
            }
            const QStringList words = line.split(' ', Qt::SkipEmptyParts);
            QProcess cli;
            cli.setProcessChannelMode(QProcess::MergedChannels);
            cli.setWorkingDirectory(QStringLiteral(STEPSCOPE_SOURCE_DIR "/resources/examples"));
            cli.start(QStringLiteral(STEPSCOPE_CLI), words.mid(1));
            QVERIFY2(cli.waitForFinished(120000), qPrintable(line));
            const QByteArray digest =
                QCryptographicHash::hash(cli.readAll(), QCryptographicHash::Sha256).toHex();
            QVERIFY2(digest == words.front().toLatin1(), qPrintable("now differs: " + line));
            ++commands;
        }
        QCOMPARE(commands, 31);
    }

    void paramsJsonMatchesClosedForm() {
        const CliResult r = runCli({"params", "--all", "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject counts = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(counts.size(), qsizetype(modelPresets().size()));
        for (const auto& dims : modelPresets()) {
            QCOMPARE(counts[QString::fromStdString(dims.name)].toInteger(), parameterCount(dims));
        }
    }

    void runJsonIsTheRunFile() {
        QTemporaryDir dir;
        const QString out = dir.filePath("run.json");
        const CliResult r =
            runCli(QStringList{"run"} + kTinyRun +
                   QStringList{"--mode", "forward-backward", "--out", out, "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("step 2 (measured)"), qPrintable(r.err));  // progress on stderr
        const QJsonObject printed = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(printed["status"].toString(), QString("ok"));
        QCOMPARE(printed["steps"].toArray().size(), 3);
        QVERIFY(printed["steps"].toArray()[0].toObject()["warmup"].toBool());
        QVERIFY(printed["summary"].toObject()["optimizer_ms"].isNull());

        QFile file(out);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(file.readAll()).object(), printed);

        const CliResult shown = runCli({"show", out});
        QCOMPARE(shown.exitCode, 0);
        QVERIFY(shown.out.contains("StepScope run: ok"));
        QVERIFY(shown.out.contains("backward"));
    }

    void progressNamesStepsAsTheTablesDo() {
        QTemporaryDir dir;
        const QString out = dir.filePath("run.json");
        const CliResult r =
            runCli(QStringList{"run"} + kTinyRun + QStringList{"--mode", "forward", "--out", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const RunResult saved = readRunFile(out.toStdString());
        const int total = int(saved.steps.size());
        QCOMPARE(total, 3);
        QVERIFY2(r.err.contains(
                     QString("(%1 steps to run, numbered 0 to %2)").arg(total).arg(total - 1)),
                 qPrintable(r.err));
        static const QRegularExpression line(
            R"(^  step (\d+) \((warm-up|measured)\): [0-9.]+ ms · (\d+) of (\d+) steps done$)");
        std::vector<QRegularExpressionMatch> progress;
        for (const QString& text : r.err.split('\n')) {
            if (const auto match = line.match(text); match.hasMatch()) {
                progress.push_back(match);
            }
        }
        QCOMPARE(int(progress.size()), total);
        for (size_t i = 0; i < progress.size(); ++i) {
            const StepRecord& step = saved.steps[i];
            QCOMPARE(progress[i].captured(1).toInt(), step.index);  // as the step table says
            QCOMPARE(progress[i].captured(2) == "warm-up", step.warmup);
            QCOMPARE(progress[i].captured(3).toInt(), int(i) + 1);
            QCOMPARE(progress[i].captured(4).toInt(), total);
        }
        // The report's step table numbers the same steps the same way.
        const CliResult shown = runCli({"show", out});
        for (const auto& step : saved.steps) {
            const QString row =
                QString("%1  %2").arg(step.index, 4).arg(step.warmup ? "warm-up" : "measure");
            QVERIFY2(shown.out.contains(row.toUtf8()), qPrintable(row));
        }
    }

    void halfACustomModelNamesTheMissingFlags() {
        const CliResult r = runCli({"run", "--model", "nano", "--heads", "5"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("--d-model, --d-ff, --layers missing"), qPrintable(r.err));
        QVERIFY(!r.err.contains("custom-d0"));
    }

    void paramsHelpListsOnlyItsOwnFlags() {
        const CliResult params = runCli({"params", "--help"});
        QCOMPARE(params.exitCode, 0);
        for (const char* own : {"--model", "--d-model", "--d-ff", "--layers", "--heads", "--vocab",
                                "--all", "--json"}) {
            QVERIFY2(listsFlag(params.out, own), own);
        }
        for (const char* runOnly :
             {"--steps", "--warmup", "--attention", "--ctx", "--batch", "--mode", "--precision",
              "--device", "--ops", "--memory", "--force", "--seed", "--threads"}) {
            QVERIFY2(!listsFlag(params.out, runOnly), runOnly);
        }
        // run keeps them all.
        const CliResult run = runCli({"run", "--help"});
        QCOMPARE(run.exitCode, 0);
        for (const char* flag : {"--model", "--mode", "--steps", "--attention", "--ctx", "--ops"}) {
            QVERIFY2(listsFlag(run.out, flag), flag);
        }
        // Counting still works with the smaller set.
        const CliResult nano = runCli({"params", "--model", "nano", "--vocab", "97", "--json"});
        QVERIFY2(nano.exitCode == 0, qPrintable(nano.err));
        ModelDims dims = *findPreset("nano");
        dims.vocabSize = 97;
        QCOMPARE(QJsonDocument::fromJson(nano.out).object()["nano"].toInteger(),
                 parameterCount(dims));
    }

    void runHelpListsTheAttentionBackends() {
        // LibTorch's, then our Python ones (the worker's: validation says which engine).
        std::vector<std::string> backends = validationContext().attentionBackends;
        QVERIFY(backends.size() >= 3);
        backends.insert(backends.end(), pythonAttentionBackends().begin(),
                        pythonAttentionBackends().end());
        QString allowed;
        for (const auto& name : backends) {
            allowed += (allowed.isEmpty() ? "" : ",") + QString::fromStdString(name);
        }
        const CliResult help = runCli({"run", "--help"});
        QCOMPARE(help.exitCode, 0);
        QString attentionLine;
        for (const QString& text : QString::fromUtf8(help.out).split('\n')) {
            if (text.trimmed().startsWith("--attention")) {
                attentionLine = text;
            }
        }
        QVERIFY2(attentionLine.contains("{" + allowed + "}"), qPrintable(help.out));
        // A name not in the list: exit 2, the flag and every allowed name in the message.
        const CliResult bad = runCli({"run", "--attention", "flashy"});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains("--attention") && bad.err.contains("flashy"),
                 qPrintable(bad.err));
        for (const auto& name : backends) {
            QVERIFY2(bad.err.contains(QString::fromStdString(name)), qPrintable(bad.err));
        }
        QVERIFY(bad.out.isEmpty());
    }

    void badInputExitsTwoNamingTheField_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        QTest::newRow("preset") << QStringList{"run", "--model", "gigantic"}
                                << "model: unknown preset 'gigantic'; allowed: nano, tiny, small";
        QTest::newRow("mode") << QStringList{"run", "--mode", "backward"}
                              << "mode: 'backward' is not allowed; allowed: inference, forward";
        QTest::newRow("heads") << QStringList{"run",      "--d-model", "100",     "--d-ff", "64",
                                              "--layers", "1",         "--heads", "3"}
                               << "heads: d_model 100 is not divisible by heads 3";
        QTest::newRow("cuda") << QStringList{"run", "--device", "cuda"}
                              << "device: 'cuda' was asked for";
        QTest::newRow("ctx") << QStringList{"run", "--ctx", "5000"}
                             << "ctx: context length 5000 exceeds the model's maximum context 2048";
        QTest::newRow("flag") << QStringList{"run", "--bogus"} << "bogus";
        // Sweep lists: each value is checked, and the message names the flag
        // and what it allows.
        QTest::newRow("sweep attention")
            << QStringList{"sweep", "--attention", "naive,bogus", "--out", "unused"}
            << "--attention: bogus not in {naive,tiled,sdpa";
        QTest::newRow("sweep tf32")
            << QStringList{"sweep", "--tf32", "off,maybe", "--out", "unused"}
            << "--tf32: maybe not in {on,off}";
        QTest::newRow("sweep engine")
            << QStringList{"sweep", "--engine", "libtorch,jax", "--out", "unused"}
            << "--engine: jax not in {libtorch,pytorch,pytorch-compile}";
        QTest::newRow("sweep device")
            << QStringList{"sweep", "--device", "cpu,tpu", "--out", "unused"}
            << "device: 'tpu' is not allowed; allowed: cpu, cuda";
        QTest::newRow("sweep twice") << QStringList{"sweep", "--batch", "2,2", "--out", "unused"}
                                     << "batch: '2' is listed twice";
        QTest::newRow("study") << QStringList{"study", "nonsense"}
                               << "study: 'nonsense' is not a study; allowed: warmup, precision, "
                                  "attention";
        QTest::newRow("no study") << QStringList{"study"}
                                  << "study: name a study; allowed: warmup, precision, attention";
        QTest::newRow("config and flags")
            << QStringList{"run", "--config", "unused.json", "--batch", "2"}
            << "--batch cannot be given with --config";
        QTest::newRow("config file") << QStringList{"run", "--config", "/nonexistent/run.json"}
                                     << "--config: cannot open '/nonexistent/run.json'";
    }

    void badInputExitsTwoNamingTheField() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        if (arguments.contains("cuda") && probeDevices().cudaAvailable) {
            QSKIP("a CUDA device is present, so --device cuda is valid here");
        }
        const CliResult r = runCli(arguments);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    void corruptRunFileExitsTwo() {
        QTemporaryDir dir;
        QFile file(dir.filePath("broken.json"));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\"format\": \"stepscope-run\", \"version\": 1, \"status\": ");
        file.close();
        const CliResult r = runCli({"show", file.fileName()});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("not valid JSON"), qPrintable(r.err));
    }

    void estimateJsonHasDocumentedKeys() {
        const CliResult r = runCli({"estimate", "--model", "small", "--ctx", "512", "--batch", "4",
                                    "--mode", "train-step", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject estimate = QJsonDocument::fromJson(r.out).object();
        for (const char* key :
             {"peak_bytes", "peak_phase", "by_category", "device_bytes", "fits", "explanation"}) {
            QVERIFY2(estimate.contains(key), key);
        }
        RunConfig config;
        config.model = *findPreset("small");
        config.contextLength = 512;
        config.batchSize = 4;
        QCOMPARE(estimate["peak_bytes"].toDouble(), double(predictMemory(config).peakBytes));
        QCOMPARE(estimate["by_category"].toObject().size(), qsizetype(kMemoryCategories));
        QVERIFY(estimate["device_bytes"].toDouble() > 0);  // the CPU: total system memory
        QVERIFY(estimate["fits"].isBool());
        QVERIFY(!estimate["explanation"].toArray().isEmpty());

        const CliResult bad = runCli({"estimate", "--batch", "0"});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains("batch"), qPrintable(bad.err));
        const CliResult unknown =
            runCli({"estimate", "--memory"});  // a run flag, not an estimate's
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY2(unknown.err.contains("--memory"), qPrintable(unknown.err));
    }

    // Issue 31: the CLI said "fits" against the machine's total memory where
    // the app said "does not fit" in the free memory. One rule: the predicted
    // peak with its margin against MemAvailable, named with its number.
    void estimateFitsAgainstFreeMemoryAsTheAppDoes() {
        const auto meminfo = [](const char* key) -> int64_t {
            QFile file("/proc/meminfo");
            if (!file.open(QIODevice::ReadOnly)) {
                return int64_t(0);
            }
            for (const QByteArray& line : file.readAll().split('\n')) {
                if (line.startsWith(key)) {
                    return line.mid(int(qstrlen(key))).trimmed().split(' ')[0].toLongLong() * 1024;
                }
            }
            return int64_t(0);
        };
        const int64_t total = meminfo("MemTotal:");
        const int64_t free = meminfo("MemAvailable:");
        if (total - free < (int64_t(2) << 30)) {
            QSKIP("free and total memory are too close here to tell the two rules apart");
        }
        // A batch whose need lies between free and total, as far from both as can be.
        RunConfig config;
        config.model = *findPreset("small");
        config.contextLength = 512;
        const int64_t middle = free + (total - free) / 2;
        int64_t best = 0;
        int bestBatch = 1;
        for (int batch = 1; batch <= 1024; ++batch) {
            config.batchSize = batch;
            const int64_t needed = preflightBytes(config);
            if (std::llabs(needed - middle) < std::llabs(best - middle)) {
                best = needed;
                bestBatch = batch;
            }
            if (needed > total) {
                break;
            }
        }
        config.batchSize = bestBatch;
        if (best < free + (total - free) / 4 || best > total - (total - free) / 4) {
            QSKIP("no batch of small at ctx 512 needs between free and total memory here");
        }
        const QStringList flags = {"--model", "small",   "--ctx",
                                   "512",     "--batch", QString::number(config.batchSize)};
        const CliResult json = runCli(QStringList{"estimate"} + flags + QStringList{"--json"});
        QVERIFY2(json.exitCode == 0, qPrintable(json.err));
        const QJsonObject estimate = QJsonDocument::fromJson(json.out).object();
        QCOMPARE(estimate["preflight_bytes"].toDouble(), double(best));
        QCOMPARE(estimate["fits"].toBool(true), false);
        QCOMPARE(estimate["compared_with"].toString(), QString("free memory (MemAvailable)"));
        QVERIFY(std::abs(estimate["free_bytes"].toDouble() - double(free)) < 0.1 * double(free));
        const CliResult text = runCli(QStringList{"estimate"} + flags);
        QVERIFY2(
            text.out.contains("free memory (MemAvailable)") && text.out.contains("does not fit"),
            text.out.constData());
        // The runner refuses it by the same rule.
        const CliResult run = runCli(QStringList{"run"} + flags);
        QCOMPARE(run.exitCode, 3);
        QVERIFY2(run.err.contains("refused"), qPrintable(run.err));
    }

    void refusedRunExitsThree() {
        // 2.7B train-step at batch 64 on CPU needs far more than any test machine has.
        const CliResult r = runCli({"run", "--model", "2.7B", "--ctx", "1024", "--batch", "64"});
        QCOMPARE(r.exitCode, 3);
        QVERIFY2(r.err.contains("refused") && r.err.contains("is available") &&
                     r.err.contains("pass --force"),
                 qPrintable(r.err));
    }

    void evalPrintsReferenceLoss() {
        QTemporaryDir dir;
        const QString error = test::runPython(
            {test::sourcePath("tools/make_test_checkpoint.py"), dir.path(), "--vocab", "97"});
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QFile expectedFile(dir.filePath("expected.json"));
        QVERIFY(expectedFile.open(QIODevice::ReadOnly));
        const double expected =
            QJsonDocument::fromJson(expectedFile.readAll()).object()["loss"].toDouble();
        const CliResult r = runCli({"eval", "--model", "nano", "--vocab", "97", "--weights",
                                    dir.filePath("state_dict.pt"), "--tokens",
                                    dir.filePath("tokens.pt"), "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const double loss = QJsonDocument::fromJson(r.out).object()["loss"].toDouble();
        QVERIFY2(std::abs(loss - expected) < 1e-5,
                 qPrintable(QString("%1 vs %2").arg(loss).arg(expected)));

        const CliResult wrong =
            runCli({"eval", "--model", "tiny", "--vocab", "97", "--weights",
                    dir.filePath("state_dict.pt"), "--tokens", dir.filePath("tokens.pt")});
        QCOMPARE(wrong.exitCode, 2);
        QVERIFY2(wrong.err.contains("'token_embeddings.weight' has shape [97, 64]"),
                 qPrintable(wrong.err));
    }

    void sweepWritesTablesAndRunFiles() {
        QTemporaryDir dir;
        const CliResult r = runCli({"sweep", "--model", "nano", "--vocab", "97", "--ctx", "8,16",
                                    "--mode", "forward", "--batch", "2", "--warmup", "0", "--steps",
                                    "1", "--out", dir.path()});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.out.count("| nano |"), 2);
        QVERIFY(QFile::exists(dir.filePath("nano_ctx8_forward_fp32.json")));
        QVERIFY(QFile::exists(dir.filePath("nano_ctx16_forward_fp32.json")));
        QVERIFY(QFile::exists(dir.filePath("sweep.csv")));
    }

    void sweepAxesFromCommaLists() {
        // --batch and --attention lists are axes: a point per combination, named by both.
        QTemporaryDir dir;
        const CliResult r =
            runCli({"sweep", "--model", "nano", "--vocab", "97", "--ctx", "16", "--mode", "forward",
                    "--batch", "2,3", "--attention", "naive,sdpa", "--warmup", "0", "--steps", "1",
                    "--out", dir.path()});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        for (const char* name : {"nano_ctx16_forward_fp32_batch2_naive.json",
                                 "nano_ctx16_forward_fp32_batch2_sdpa.json",
                                 "nano_ctx16_forward_fp32_batch3_naive.json",
                                 "nano_ctx16_forward_fp32_batch3_sdpa.json"}) {
            QVERIFY2(QFile::exists(dir.filePath(name)), name);
        }
        QVERIFY2(
            r.out.startsWith("| model | ctx | mode | precision | batch | attention | engine |"),
            r.out.constData());
        QVERIFY(r.out.contains("| nano | 16 | forward | fp32 | 3 | sdpa | libtorch | ok |"));
    }

    void sweepIsolateRunsAProcessPerPoint() {
        QTemporaryDir dir;
        QProcess process;
        process.start(
            QStringLiteral(STEPSCOPE_CLI),
            {"sweep",   "--model", "nano",   "--vocab",   "97",          "--ctx",      "16",
             "--batch", "2",       "--mode", "forward",   "--attention", "naive,sdpa", "--warmup",
             "0",       "--steps", "2",      "--isolate", "--out",       dir.path()});
        QVERIFY(process.waitForStarted());
        const qint64 sweepPid = process.processId();
        QVERIFY(process.waitForFinished(300000));
        QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
        std::set<int> pids;
        for (const char* name :
             {"nano_ctx16_forward_fp32_naive.json", "nano_ctx16_forward_fp32_sdpa.json"}) {
            const RunResult run = readRunFile(dir.filePath(name).toStdString());
            QCOMPARE(toString(run.status), std::string("ok"));
            QVERIFY(run.environment.isolated);
            QVERIFY(run.environment.processId > 0 && run.environment.processId != sweepPid);
            pids.insert(run.environment.processId);
        }
        QCOMPARE(int(pids.size()), 2);
    }

    // Issue 31: a point that asks for LibTorch's default thread count gets
    // what a fresh process picks (stepscope-cli info), not the count of the
    // point before it; in one process and with a fresh process per point.
    void threadsDefaultIsAFreshProcesssCountInEverySweep() {
        const CliResult info = runCli({"info", "--json"});
        QCOMPARE(info.exitCode, 0);
        const int fresh = QJsonDocument::fromJson(info.out).object()["cpu_threads"].toInt();
        QVERIFY(fresh > 0);
        const int other = fresh > 1 ? 1 : 2;
        for (const bool isolate : {false, true}) {
            QTemporaryDir dir;
            QStringList args = {"sweep",
                                "--model",
                                "nano",
                                "--vocab",
                                "97",
                                "--ctx",
                                "16",
                                "--batch",
                                "2",
                                "--mode",
                                "forward",
                                "--warmup",
                                "0",
                                "--steps",
                                "1",
                                "--threads",
                                QString("%1,0").arg(other),
                                "--out",
                                dir.path()};
            if (isolate) {
                args << "--isolate";
            }
            const CliResult r = runCli(args);
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
            int points = 0;
            for (const QFileInfo& file : QDir(dir.path()).entryInfoList({"nano_*.json"})) {
                const RunResult run = readRunFile(file.filePath().toStdString());
                QCOMPARE(run.environment.cpuThreads, run.config.threads ? other : fresh);
                ++points;
            }
            QVERIFY2(points >= 2, qPrintable(QString::number(points)));
        }
    }

    void runConfigFileRepeatsARun() {
        QTemporaryDir dir;
        const CliResult first = runCli(
            QStringList{"run"} + kTinyRun +
            QStringList{"--attention", "sdpa", "--seed", "7", "--out", dir.filePath("first.json")});
        QVERIFY2(first.exitCode == 0, qPrintable(first.err));
        // A run file, or its "config" object alone.
        const RunResult original = readRunFile(dir.filePath("first.json").toStdString());
        QFile config(dir.filePath("config.json"));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(QByteArray::fromStdString(runConfigToJson(original.config)));
        config.close();
        for (const QString& file : {dir.filePath("first.json"), dir.filePath("config.json")}) {
            const CliResult again = runCli({"run", "--config", file, "--json"});
            QVERIFY2(again.exitCode == 0, qPrintable(again.err));
            const RunResult rerun = runResultFromJson(again.out.toStdString());
            QCOMPARE(runConfigToJson(rerun.config), runConfigToJson(original.config));
        }
    }

    // Issue 45: `run --config sent.json` whose config names py_model
    // evilmod:build and py_path "." imported evilmod.py from the current
    // folder without a word, and `show` did not say so. Code a file names runs
    // only with --trust-code; show names it.
    void receivedRunFileRunsItsCodeOnlyWithTrustCode() {
        QTemporaryDir dir;
        QVERIFY(stepscope::test::writeMarkerModule(dir.path()));
        RunResult sent;
        sent.config = test::tinyCpuConfig();
        sent.config.engine = Engine::PyTorch;
        sent.config.pyModel = "evilmod:build";
        sent.config.pyPath.push_back('.');  // `= "."`: GCC 12's false stringop-overflow
        QFile file(dir.filePath("sent.json"));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray::fromStdString(runResultToJson(sent)));
        file.close();
        const QString marker = dir.filePath("MARKER");
        const auto cli = [&](const QStringList& arguments) {
            QProcess process;
            process.setWorkingDirectory(dir.path());
            process.start(QStringLiteral(STEPSCOPE_CLI), arguments);
            process.waitForFinished(300000);
            return std::pair{process.exitCode(), QString::fromUtf8(process.readAllStandardOutput() +
                                                                   process.readAllStandardError())};
        };
        const auto [shownCode, shown] = cli({"show", "sent.json"});
        QCOMPARE(shownCode, 0);
        QVERIFY2(shown.contains("py_model 'evilmod:build'") &&
                     shown.contains("py_path '.' (" + dir.path() + ")"),
                 qPrintable(shown));
        const auto [refusedCode, refused] = cli({"run", "--config", "sent.json"});
        QCOMPARE(refusedCode, 2);
        QVERIFY2(refused.contains("evilmod:build") && refused.contains("--trust-code"),
                 qPrintable(refused));
        QVERIFY(!QFile::exists(marker));
        // The user's say-so: the file's code runs (it then fails, as this one does).
        const auto [trustedCode, trusted] = cli({"run", "--config", "sent.json", "--trust-code"});
        QVERIFY2(trustedCode != 2, qPrintable(trusted));
        QVERIFY2(QFile::exists(marker), qPrintable(trusted));
        // Flags the user types are their say-so already.
        QFile::remove(marker);
        const auto [typedCode, typed] = cli(QStringList{"run", "--engine", "pytorch", "--py-model",
                                                        "evilmod:build", "--py-path", "."} +
                                            kTinyRun);
        QVERIFY2(typedCode != 2 && QFile::exists(marker), qPrintable(typed));
    }

    void studyWarmupPrintsARowPerCount() {
        QTemporaryDir dir;
        const CliResult r =
            runCli({"study", "warmup", "--model", "nano", "--vocab", "97", "--ctx", "16", "--batch",
                    "2", "--warmup", "0,2", "--steps", "2", "--out", dir.path()});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QStringList lines = QString::fromUtf8(r.out).trimmed().split('\n');
        QCOMPARE(lines.size(), 2 + 2);
        QVERIFY2(lines[2].startsWith("| 0 | ok | 2 |") && lines[3].startsWith("| 2 | ok | 2 |"),
                 r.out.constData());
        QVERIFY(QFile::exists(dir.filePath("study.csv")));
        QVERIFY(QFile::exists(dir.filePath("study.md")));
        QVERIFY(QFile::exists(dir.filePath("nano_ctx16_train-step_fp32_warmup2.json")));
    }

    void attentionJsonHasDocumentedKeys() {
        QTemporaryDir dir;
        const CliResult r = runCli({"attention", "--backends", "naive,cuda-flash", "--d", "16",
                                    "--seq", "32", "--batch", "2", "--repeats", "1", "--no-causal",
                                    "--json", "--out", dir.path()});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonArray points = QJsonDocument::fromJson(r.out).array();
        QCOMPARE(points.size(), 2);
        for (const char* key : {"backend", "d", "seq", "batch", "heads", "precision", "causal",
                                "status", "forward_ms", "backward_ms", "mem_before_backward_bytes",
                                "peak_bytes", "forward_tflops", "backward_tflops"}) {
            QVERIFY2(points[0].toObject().contains(key), key);
        }
        QCOMPARE(points[0].toObject()["status"].toString(), QString("ok"));
        QCOMPARE(points[0].toObject()["causal"].toBool(), false);
        QCOMPARE(points[1].toObject()["status"].toString(), QString("unavailable"));
        QVERIFY(QFile::exists(dir.filePath("attention.json")));
        QVERIFY(QFile::exists(dir.filePath("attention.csv")));
    }

    void breakdownOfATracedRun() {
        QTemporaryDir dir;
        const QString file = dir.filePath("ops.json");
        const CliResult run =
            runCli(QStringList{"run"} + kTinyRun + QStringList{"--ops", "--out", file});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const CliResult r =
            runCli({"breakdown", file, "--phase", "forward", "--by", "op", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonArray rows = QJsonDocument::fromJson(r.out).array();
        QVERIFY(!rows.isEmpty());
        for (const char* key :
             {"name", "category", "phase", "calls", "total_ms", "ms_per_step", "share"}) {
            QVERIFY2(rows[0].toObject().contains(key), key);
        }
        // Per step: the total over the run's two measured steps.
        for (const auto& row : rows) {
            const QJsonObject object = row.toObject();
            QVERIFY(std::abs(object["ms_per_step"].toDouble() - object["total_ms"].toDouble() / 2) <
                    1e-9);
        }
        QCOMPARE(rows[0].toObject()["phase"].toString(), QString("forward"));
        const CliResult untraced = runCli(QStringList{"run"} + kTinyRun +
                                          QStringList{"--out", dir.filePath("plain.json")});
        QCOMPARE(untraced.exitCode, 0);
        const CliResult none = runCli({"breakdown", dir.filePath("plain.json")});
        QCOMPARE(none.exitCode, 2);
        QVERIFY(none.err.contains("--ops"));
    }

    void memoryAndExportsOfATracedRun() {
        QTemporaryDir dir;
        const QString file = dir.filePath("traced.json");
        const CliResult run =
            runCli(QStringList{"run"} + kTinyRun +
                   QStringList{"--mode", "train-step", "--ops", "--memory", "--out", file});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const RunResult saved = readRunFile(file.toStdString());

        const CliResult memory = runCli({"memory", file, "--json"});
        QVERIFY2(memory.exitCode == 0, qPrintable(memory.err));
        const QJsonObject report = QJsonDocument::fromJson(memory.out).object();
        QCOMPARE(report["peak_bytes"].toDouble(),
                 double(summarizeMemory(saved.memory, 1).peakBytes));
        for (const char* key : {"at_peak", "max_by_category"}) {
            const QJsonObject categories = report[key].toObject();
            for (const char* category : {"parameters", "gradients", "optimizer_state",
                                         "activations", "temporaries", "inputs", "other"}) {
                QVERIFY2(categories.contains(category), category);
            }
        }
        QVERIFY(report["top"].isArray() && !report["top"].toArray().isEmpty());
        QCOMPARE(report["estimate"].toObject()["peak_bytes"].toDouble(),
                 double(predictMemory(saved.config).peakBytes));

        const QString trace = dir.filePath("trace.json");
        const QString pickle = dir.filePath("memory.pickle");
        const CliResult exported =
            runCli({"export", file, "--chrome-trace", trace, "--memviz", pickle});
        QVERIFY2(exported.exitCode == 0, qPrintable(exported.err));
        QFile traceFile(trace);
        QVERIFY(traceFile.open(QIODevice::ReadOnly));
        QVERIFY(QJsonDocument::fromJson(traceFile.readAll())["traceEvents"].isArray());
        QVERIFY(QFileInfo(pickle).size() > 0);

        // A CPU run has no kernels: a clear error, exit 2, and no file written.
        const CliResult kernels = runCli({"breakdown", file, "--by", "kernel"});
        QCOMPARE(kernels.exitCode, 2);
        QVERIFY(kernels.err.contains("--kernels"));
        const QString plain = dir.filePath("plain.json");
        QCOMPARE(runCli(QStringList{"run"} + kTinyRun + QStringList{"--out", plain}).exitCode, 0);
        const QString missing = dir.filePath("none.pickle");
        QCOMPARE(runCli({"export", plain, "--memviz", missing}).exitCode, 2);
        QVERIFY(!QFileInfo::exists(missing));
    }

    void precisionToolsPrintJson() {
        const CliResult lab = runCli({"accumulate", "--json"});
        QCOMPARE(lab.exitCode, 0);
        const QJsonArray rows = QJsonDocument::fromJson(lab.out).array();
        QCOMPARE(rows.size(), 5);
        QCOMPARE(rows[0].toObject()["exact"].toDouble(), 10.0);
        const CliResult flow = runCli({"dtypes", "--model", "nano", "--vocab", "97", "--json"});
        QVERIFY2(flow.exitCode == 0, qPrintable(flow.err));
        QVERIFY(QJsonDocument::fromJson(flow.out).array().size() > 10);
        const CliResult fp32 = runCli({"dtypes", "--precision", "fp32"});
        QCOMPARE(fp32.exitCode, 2);
        QVERIFY(fp32.err.contains("allowed: bf16, fp16"));
    }

    void infoReportsVersions() {
        const CliResult r = runCli({"info", "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject info = QJsonDocument::fromJson(r.out).object();
        QVERIFY(info["libtorch_version"].toString().startsWith("2.11"));
        QVERIFY(info.contains("cuda_available"));
        QVERIFY(info.contains("cupti_available"));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
