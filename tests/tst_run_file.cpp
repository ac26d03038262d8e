// Run files: a full round trip through disk, the keys other tools rely on
// (checked on the raw JSON), and clear errors for corrupt or foreign files.
#include <QtTest/QtTest>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "engines/runner.h"
#include "results/attention_file.h"
#include "results/run_file.h"
#include "test_support.h"

using namespace stepscope;

namespace {

// `run` with a memory trace of one allocation of 64 bytes on the CPU.
RunResult withOneAllocation(RunResult run) {
    MemoryTrace& memory = run.memory;
    memory.device = "cpu";
    memory.paths = {"root"};
    memory.timeUs = {0};
    memory.address = {4096};
    memory.bytes = {64};
    memory.category = {0};
    memory.phase = {0};
    memory.step = {0};
    memory.path = {0};
    memory.allocated = {64};
    memory.reserved = {64};
    return run;
}

// The run file `run` with its memory section's `key` set to `value`.
QByteArray withMemoryKey(const QJsonObject& run, const char* key, const QJsonValue& value) {
    QJsonObject changed = run;
    QJsonObject memory = changed["memory"].toObject();
    memory[key] = value;
    changed["memory"] = memory;
    return QJsonDocument(changed).toJson();
}

}  // namespace

class TestRunFile : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    RunResult result_;
    QString path_;

    static void writeText(const QString& path, const QByteArray& text) {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(text);
    }

    static QString readError(const QString& path) {
        try {
            readRunFile(path.toStdString());
        } catch (const RunFileError& error) {
            return error.what();
        }
        return {};
    }

private Q_SLOTS:
    void initTestCase() {
        RunConfig config = test::tinyCpuConfig();
        config.mode = RunMode::ForwardBackward;
        config.seed = 7;
        result_ = runBenchmark(config);
        QCOMPARE(toString(result_.status), std::string("ok"));
        path_ = dir_.filePath("run.json");
        writeRunFile(result_, path_.toStdString());
    }

    void roundTripKeepsEverything() {
        const RunResult back = readRunFile(path_.toStdString());
        QCOMPARE(toString(back.status), toString(result_.status));
        QCOMPARE(back.parameterCount, result_.parameterCount);
        QCOMPARE(back.config.model.dModel, result_.config.model.dModel);
        QCOMPARE(back.config.model.vocabSize, int64_t{97});
        QCOMPARE(toString(back.config.mode), std::string("forward-backward"));
        QCOMPARE(back.config.seed, uint64_t{7});
        QCOMPARE(back.environment.libtorchVersion, result_.environment.libtorchVersion);
        QCOMPARE(back.steps.size(), result_.steps.size());
        for (size_t i = 0; i < back.steps.size(); ++i) {
            QCOMPARE(back.steps[i].totalMs, result_.steps[i].totalMs);
            QCOMPARE(back.steps[i].backwardMs, result_.steps[i].backwardMs);
            QCOMPARE(back.steps[i].optimizerMs, std::optional<double>());
            QCOMPARE(back.steps[i].warmup, result_.steps[i].warmup);
        }
        QCOMPARE(back.summary.total.mean, result_.summary.total.mean);
        QCOMPARE(back.summary.backward->median, result_.summary.backward->median);
    }

    // A recording StepScope did not run says so in the file ("origin"), and a
    // run of ours has none; a file saved from a snapshot before the key
    // existed is known by its config, which names no model.
    void whatRecordedARunIsAFactOfTheFile() {
        QCOMPARE(readRunFile(path_.toStdString()).origin, std::string());
        QVERIFY(!QByteArray::fromStdString(runResultToJson(result_)).contains("\"origin\""));
        for (const char* origin : {kOriginMemorySnapshot, kOriginProfilerTrace}) {
            RunResult foreign;
            foreign.origin = origin;
            foreign.config.model.name = "trace";
            const QString path = dir_.filePath(QString("%1.json").arg(origin));
            writeRunFile(foreign, path.toStdString());
            QCOMPARE(readRunFile(path.toStdString()).origin, std::string(origin));
        }
        // Named, not a braced temporary: GCC 12 takes RunResult{} for uninitialised.
        const RunResult saved;
        nlohmann::json legacy = nlohmann::json::parse(runResultToJson(saved));
        legacy.erase("origin");
        const QString before = dir_.filePath("saved-before-origin.json");
        writeText(before, QByteArray::fromStdString(legacy.dump()));
        QCOMPARE(readRunFile(before.toStdString()).origin, std::string(kOriginPyTorch));
        legacy["origin"] = "my-own-tool";
        writeText(before, QByteArray::fromStdString(legacy.dump()));
        QVERIFY2(readError(before).contains("run.origin: 'my-own-tool' is not one of"),
                 qPrintable(readError(before)));
        legacy["origin"] = 3;
        writeText(before, QByteArray::fromStdString(legacy.dump()));
        QVERIFY2(readError(before).contains("run.origin"), qPrintable(readError(before)));
    }

    void processAndIsolationAreRecorded() {
        // The process that ran the steps; an in-process run is not isolated.
        QCOMPARE(result_.environment.processId, int(QCoreApplication::applicationPid()));
        QVERIFY(!result_.environment.isolated);
        RunResult isolated = result_;
        isolated.environment.processId = 4242;
        isolated.environment.isolated = true;
        const RunResult back = runResultFromJson(runResultToJson(isolated));
        QCOMPARE(back.environment.processId, 4242);
        QVERIFY(back.environment.isolated);
        // Files written before these keys existed still load.
        QJsonObject root =
            QJsonDocument::fromJson(QByteArray::fromStdString(runResultToJson(isolated))).object();
        QJsonObject environment = root["environment"].toObject();
        QVERIFY(environment.contains("pid") && environment.contains("isolated"));
        environment.remove("pid");
        environment.remove("isolated");
        root["environment"] = environment;
        const RunResult old = runResultFromJson(QJsonDocument(root).toJson().toStdString());
        QCOMPARE(old.environment.processId, 0);
        QVERIFY(!old.environment.isolated);
    }

    void documentedKeysArePresent() {
        QFile file(path_);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(root["status"].toString(), QString("ok"));
        QCOMPARE(root["model"].toObject()["parameters"].toInteger(), result_.parameterCount);
        const QJsonArray steps = root["steps"].toArray();
        QCOMPARE(steps.size(), qsizetype(result_.steps.size()));
        const QJsonObject step = steps[0].toObject();
        for (const char* key : {"index", "warmup", "total_ms", "forward_ms", "backward_ms"}) {
            QVERIFY2(step.contains(key), key);
        }
        QVERIFY(step["optimizer_ms"].isNull());
        const QJsonObject summary = root["summary"].toObject();
        for (const char* phase : {"total_ms", "forward_ms", "backward_ms"}) {
            const QJsonObject stats = summary[phase].toObject();
            for (const char* key : {"mean", "std", "median", "min", "max"}) {
                QVERIFY2(stats.contains(key), qPrintable(QString(phase) + "." + key));
            }
        }
        QVERIFY(summary["optimizer_ms"].isNull());
    }

    void atomicWriteLeavesNoTemporaryFiles() {
        const QStringList entries = QDir(dir_.path()).entryList(QDir::Files);
        for (const auto& entry : entries) {
            QVERIFY2(!entry.contains(".tmp."), qPrintable(entry));
        }
    }

    void corruptFileIsAClearError() {
        QFile original(path_);
        QVERIFY(original.open(QIODevice::ReadOnly));
        const QByteArray text = original.readAll();
        const QString truncated = dir_.filePath("truncated.json");
        writeText(truncated, text.left(text.size() / 2));
        QVERIFY2(readError(truncated).contains("not valid JSON"), qPrintable(readError(truncated)));

        const QString wrongVersion = dir_.filePath("v99.json");
        writeText(wrongVersion, QByteArray(text).replace("\"version\": 1", "\"version\": 99"));
        QVERIFY2(readError(wrongVersion).contains("version 99 is not supported"),
                 qPrintable(readError(wrongVersion)));

        const QString badField = dir_.filePath("bad-field.json");
        writeText(badField,
                  QByteArray(text).replace("\"total_ms\": ", "\"total_ms\": \"x\", \"_\": "));
        QVERIFY2(readError(badField).contains("run.steps[0].total_ms: expected a number"),
                 qPrintable(readError(badField)));

        const QString foreign = dir_.filePath("foreign.json");
        writeText(foreign, "{\"hello\": 1}");
        QVERIFY2(readError(foreign).contains("not a StepScope run file"),
                 qPrintable(readError(foreign)));

        QVERIFY(readError(dir_.filePath("missing.json")).contains("cannot open"));
    }

    // Issue 33: these gave nlohmann's own message, without the file or field.
    void hostileValuesNameTheFileAndTheField() {
        const RunResult traced = withOneAllocation(result_);
        const QString path = dir_.filePath("traced.json");
        writeRunFile(traced, path.toStdString());
        QCOMPARE(readRunFile(path.toStdString()).memory.paths.size(), size_t{1});
        QFile original(path);
        QVERIFY(original.open(QIODevice::ReadOnly));
        const QByteArray text = original.readAll();
        const QJsonObject run = QJsonDocument::fromJson(text).object();

        const auto withMemory = [&](const char* key, const QJsonValue& value) {
            return withMemoryKey(run, key, value);
        };
        const struct {
            const char* name;
            QByteArray text;
            const char* says;
        } cases[] = {
            {"overflow.json",
             QByteArray(text).replace("\"total_ms\": ", "\"total_ms\": 1e999, \"_\": "),
             "out of range"},
            {"paths.json", withMemory("paths", QJsonArray{1}),
             "run.memory.paths[0]: expected a string"},
            {"phases.json", withMemory("phases", QJsonArray{"x"}),
             "run.memory.phases[0]: expected"},
            {"phase-range.json", withMemory("phases", QJsonArray{QJsonArray{1e300, 0, 0, 1}}),
             "run.memory.phases[0]: expected"},
            {"picture.png", QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16),
             "not a StepScope run file"},
        };
        for (const auto& bad : cases) {
            const QString file = dir_.filePath(bad.name);
            writeText(file, bad.text);
            const QString message = readError(file);
            QVERIFY2(message.contains(file) && message.contains(bad.says) &&
                         !message.contains("[json.exception"),
                     qPrintable(QString(bad.name) + ": " + message));
        }
        // The command line says the same, once, with no parser's tag.
        const test::CliResult shown = test::runCli({"show", dir_.filePath("picture.png")});
        QCOMPARE(shown.exitCode, 2);
        QVERIFY2(
            shown.err.contains("not a StepScope run file") && !shown.err.contains("json.exception"),
            qPrintable(shown.err));
    }

    // Issue 45: numbers where integers belong were cast unchecked (undefined
    // behaviour): memory.step 1e300 showed as -2^63, device_peak_allocated
    // 1e300 printed a negative peak, 1.5 read as 1, negative sizes passed.
    void integersFromTheFileAreChecked() {
        const RunResult traced = withOneAllocation(result_);
        const QJsonObject run =
            QJsonDocument::fromJson(QByteArray::fromStdString(runResultToJson(traced))).object();
        const auto withMemory = [&](const char* key, const QJsonValue& value) {
            return withMemoryKey(run, key, value);
        };
        QJsonObject badStep = run;
        QJsonArray steps = badStep["steps"].toArray();
        QJsonObject first = steps[0].toObject();
        first["index"] = 1.5;
        steps[0] = first;
        badStep["steps"] = steps;
        const struct {
            const char* name;
            QByteArray text;
            const char* says;
        } cases[] = {
            {"step.json", withMemory("step", QJsonArray{1e300}),
             "run.memory.step[0]: 1e+300 is out of range; allowed: -1..2147483647"},
            {"bytes.json", withMemory("bytes", QJsonArray{1.5}),
             "run.memory.bytes[0]: expected an integer, got 1.5"},
            {"allocated.json", withMemory("allocated", QJsonArray{-64}),
             "run.memory.allocated[0]: must be ≥ 0, got -64"},
            {"peak.json", withMemory("device_peak_allocated", 1e300),
             "run.memory.device_peak_allocated: 1e+300 is out of range"},
            {"reserved-peak.json", withMemory("device_peak_reserved", -1),
             "run.memory.device_peak_reserved: must be ≥ 0, got -1"},
            {"index.json", QJsonDocument(badStep).toJson(),
             "run.steps[0].index: expected an integer, got 1.5"},
        };
        for (const auto& bad : cases) {
            const QString file = dir_.filePath(bad.name);
            writeText(file, bad.text);
            const QString message = readError(file);
            QVERIFY2(message.contains(file) && message.contains(bad.says),
                     qPrintable(QString(bad.name) + ": " + message));
        }
        // The command line refuses it too (it printed a negative peak with exit 0).
        const test::CliResult shown = test::runCli({"memory", dir_.filePath("peak.json")});
        QCOMPARE(shown.exitCode, 2);
        QVERIFY2(shown.err.contains("device_peak_allocated"), qPrintable(shown.err));
        // A whole number written with an exponent is still that number.
        const QString whole = dir_.filePath("whole.json");
        writeText(whole,
                  withMemory("device_peak_allocated", 1)
                      .replace("\"device_peak_allocated\": 1", "\"device_peak_allocated\": 1e3"));
        QCOMPARE(readRunFile(whole.toStdString()).memory.devicePeakAllocated, int64_t(1000));
    }

    // Issue 45: a folder or an empty file in an attention grid's points/ was
    // "not valid JSON" with the parser's tag.
    void attentionFilesThatAreNotFilesSaySo() {
        QTemporaryDir points;
        QVERIFY(QDir(points.path()).mkdir("folder.json"));
        writeText(points.filePath("empty.json"), "");
        writeText(points.filePath("version.json"),
                  R"({"format": "stepscope-attention", "version": "1", "points": []})");
        const std::pair<const char*, const char*> cases[] = {
            {"folder.json", "a folder, not a StepScope attention file"},
            {"empty.json", "empty, not JSON"},
            {"version.json", "attention file.version: expected an integer"},
        };
        for (const auto& [name, says] : cases) {
            const QString file = points.filePath(name);
            try {
                readAttentionFile(file.toStdString());
                QFAIL(name);
            } catch (const RunFileError& error) {
                const QString message = error.what();
                QVERIFY2(message.contains(file) && message.contains(says) &&
                             !message.contains("json.exception") &&
                             !message.contains("not valid JSON"),
                         qPrintable(message));
            }
        }
    }

    void attentionFileFieldsAreNamed() {
        const std::string point =
            R"({"backend": "naive", "d": 64, "seq": 128, "batch": 1, "heads": 2,
                "precision": "fp32", "causal": true, "status": "ok"})";
        const std::string file =
            R"({"format": "stepscope-attention", "version": 1, "points": [)" + point + "]}";
        QCOMPARE(attentionFileFromJson(file).points.size(), size_t{1});
        const std::pair<std::string, const char*> cases[] = {
            {R"("d": 64)", "points[0].d: expected an integer"},
            {R"("causal": true)", "points[0].causal: expected true or false"},
            {R"("status": "ok")", "points[0].status: expected a string"},
        };
        for (const auto& [good, says] : cases) {
            std::string bad = file;
            bad.replace(bad.find(good), good.size(), good.substr(0, good.find(':')) + ": []");
            try {
                attentionFileFromJson(bad);
                QFAIL(says);
            } catch (const RunFileError& error) {
                QVERIFY2(QString(error.what()).contains(says), error.what());
            }
        }
        try {
            attentionFileFromJson(R"({"format": "stepscope-attention", "version": 1e999})");
            QFAIL("1e999 read");
        } catch (const RunFileError& error) {
            QVERIFY2(QString(error.what()).contains("out of range"), error.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestRunFile)
#include "tst_run_file.moc"
