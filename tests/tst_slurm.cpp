// Sweeps and attention grids as Slurm job arrays: the directory `--slurm`
// writes, its job script run by hand as one array task, `--collect` and
// `--resume` on a half-finished directory, the refusals, sbatch missing or
// saying no, and a real single-node Slurm cluster
// (scripts/slurm-test-cluster.sh) running the arrays, whose collected tables
// match the same sweep and grid run here.
#include <QtTest/QtTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include "cluster/slurm_sweep.h"
#include "experiments/sweep.h"
#include "results/attention_file.h"
#include "results/collective_file.h"
#include "results/run_file.h"
#include "test_support.h"
#include "util/strings.h"

using namespace stepscope;

namespace {

struct Outcome {
    int exitCode = -1;
    QString out;
    QString err;
};

// `program` with `arguments`; `environment` ("NAME=value") added to ours.
Outcome runProgram(const QString& program, const QStringList& arguments,
                   const QStringList& environment = {}, int timeoutMs = 300000) {
    QProcess process;
    QProcessEnvironment merged = QProcessEnvironment::systemEnvironment();
    for (const QString& entry : environment) {
        merged.insert(entry.section('=', 0, 0), entry.section('=', 1));
    }
    process.setProcessEnvironment(merged);
    process.start(program, arguments);
    Outcome outcome;
    if (!process.waitForFinished(timeoutMs)) {
        outcome.err = program + " did not finish: " + process.errorString();
        return outcome;
    }
    outcome.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    outcome.out = QString::fromUtf8(process.readAllStandardOutput());
    outcome.err = QString::fromUtf8(process.readAllStandardError());
    return outcome;
}

Outcome runCli(const QStringList& arguments, const QStringList& environment = {}) {
    return runProgram(QStringLiteral(STEPSCOPE_CLI), arguments, environment);
}

// nano, two context lengths × two modes, one measured step each.
const QStringList kSweep = {"sweep",
                            "--model",
                            "nano",
                            "--vocab",
                            "97",
                            "--batch",
                            "2",
                            "--ctx",
                            "8,16",
                            "--mode",
                            "forward,train-step",
                            "--warmup",
                            "0",
                            "--steps",
                            "1"};

// The same sweep as a spec: the independent list of its points and names.
std::vector<RunConfig> expectedPoints() {
    SweepSpec spec;
    spec.base = test::tinyCpuConfig();
    spec.models = {*findPreset("nano")};
    spec.contexts = {8, 16};
    spec.modes = {RunMode::Forward, RunMode::TrainStep};
    spec.precisions = {Precision::Fp32};
    return expandSweep(spec);
}

QString pointName(int index) {
    return QString::fromStdString(sweepPointFileName(expectedPoints()[size_t(index)]));
}

QStringList runFilesIn(const QString& dir) {
    return QDir(dir + "/points").entryList({"*.json"}, QDir::Files, QDir::Name);
}

QByteArray contents(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Writes a file a task would have left (its Slurm log).
bool writeFile(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

// Runs array task `index` of DIR's job script as Slurm would, by hand.
Outcome runTask(const QString& dir, int index, const QStringList& environment = {}) {
    return runProgram("bash", {dir + "/stepscope.sbatch"},
                      QStringList{"SLURM_ARRAY_TASK_ID=" + QString::number(index)} + environment);
}

// `resume` (a --slurm DIR --resume) rewrites DIR's array to points 1 and 2
// alone; they run as their tasks would.
void resumeAndRunPointsOneAndTwo(const QString& dir, const QStringList& resume) {
    const Outcome resumed = runCli(resume);
    QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err));
    QVERIFY(contents(dir + "/stepscope.sbatch").contains("#SBATCH --array=1-2\n"));
    QCOMPARE(runTask(dir, 1).exitCode, 0);
    QCOMPARE(runTask(dir, 2).exitCode, 0);
}

// The "missing point N NAME" and "failed point N NAME" lines of --collect.
QStringList unfinishedLines(const QString& err) {
    static const QRegularExpression line(R"(^  ((missing|failed) point \d+ \S+):)",
                                         QRegularExpression::MultilineOption);
    QStringList found;
    for (auto it = line.globalMatch(err); it.hasNext();) {
        found << it.next().captured(1);
    }
    return found;
}

QString unfinished(const char* what, int index) {
    return QString("%1 point %2 %3").arg(what).arg(index).arg(pointName(index).chopped(5));
}

// sweep.csv as rows of cells (no quoted commas in these runs).
QList<QStringList> csvRows(const QString& dir) {
    QList<QStringList> rows;
    for (const QString& line :
         QString::fromUtf8(contents(dir + "/sweep.csv")).trimmed().split('\n')) {
        rows << line.split(',');
    }
    return rows;
}

// Two backends × two sequence lengths, tiny: the grid's points in order are
// naive s32, sdpa s32, naive s64, sdpa s64.
// One tiny point of an attention grid: its size and repeats, no backends.
const QStringList kTinyAttentionPoint = {"--d", "16",       "--seq", "32",        "--batch",
                                         "1",   "--warmup", "0",     "--repeats", "1"};
const QStringList kAttention = {"attention", "--backends", "naive,sdpa", "--d", "16",
                                "--seq",     "32,64",      "--batch",    "1",   "--warmup",
                                "0",         "--repeats",  "1"};
const QStringList kAttentionPoints = {"naive_d16_seq32_fp32", "sdpa_d16_seq32_fp32",
                                      "naive_d16_seq64_fp32", "sdpa_d16_seq64_fp32"};

// attention.csv's rows (no quoted commas in these) without the measured
// columns: backend, kernel, d, seq, batch, heads, precision, causal, status.
QList<QStringList> attentionShape(const QString& dir) {
    QList<QStringList> rows;
    for (const QString& line :
         QString::fromUtf8(contents(dir + "/attention.csv")).trimmed().split('\n')) {
        rows << line.split(',').mid(0, 9);
    }
    return rows;
}

// A sbatch on PATH that says `message` on stderr and exits with `code`, or
// prints `message` on stdout when `code` is 0; it logs its arguments.
QString fakeSbatch(const QTemporaryDir& dir, const QString& message, int code) {
    const QString path = dir.filePath("sbatch");
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        return {};
    }
    file.write(QString("#!/bin/sh\necho \"$@\" > '%1'\necho '%2' >&%3\nexit %4\n")
                   .arg(dir.filePath("arguments"), message, code == 0 ? "1" : "2")
                   .arg(code)
                   .toUtf8());
    file.setPermissions(file.permissions() | QFileDevice::ExeOwner);
    return dir.path() + ":" + qEnvironmentVariable("PATH");
}

// The sweep for --runner recorder: kSweep on the pytorch engine.
const QStringList kRecorderSweep = kSweep + QStringList{"--engine", "pytorch"};

// A `stepscope-record` in `dir`: the recorder of this source tree (what
// `pip install ./python` gives) run by the build's Python, whose torch it
// needs; the venv install itself is recorder_check's. Returns its path.
QString recorderIn(const QTemporaryDir& dir) {
    const QString path = dir.filePath("stepscope-record");
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        return {};
    }
    file.write(QString("#!/bin/sh\nPYTHONPATH='%1' exec '%2' -m stepscope \"$@\"\n")
                   .arg(test::sourcePath("python"), test::pythonExecutable())
                   .toUtf8());
    file.setPermissions(file.permissions() | QFileDevice::ExeOwner);
    return path;
}

// The script's case line of point `index` of the recorder sweep.
QString recorderCaseLine(int index) {
    const QString name = pointName(index);
    return QString("  %1)  # %2\n    exec \"$run\" --config inputs/%3 --out points/%3 ;;\n")
        .arg(index)
        .arg(name.chopped(5), name);
}

// Waits for Slurm job `jobId` to leave the queue; false after 4 minutes.
bool waitForArray(const QString& jobId, const QStringList& slurm) {
    QElapsedTimer waited;
    waited.start();
    Outcome queue;
    do {
        QTest::qWait(500);
        queue = runProgram("squeue", {"-h", "-j", jobId}, slurm);
    } while (queue.exitCode == 0 && !queue.out.trimmed().isEmpty() && waited.elapsed() < 240000);
    if (!queue.out.trimmed().isEmpty()) {
        qWarning("job %s still queued: %s", qPrintable(jobId), qPrintable(queue.out));
        return false;
    }
    qInfo("array %s ran in %.1f s", qPrintable(jobId), double(waited.elapsed()) / 1000);
    return true;
}

// One of the two nodes of scripts/slurm-test-cluster.sh.
bool isTestNode(const std::string& name) {
    return name == "stepscope-node1" || name == "stepscope-node2";
}

// The two-node cluster of scripts/slurm-test-cluster.sh, stopped (by the
// PIDs the script recorded) when this goes.
class TestCluster {
public:
    explicit TestCluster(const QString& dir) : dir_(dir) {
        start_ = runProgram(test::sourcePath("scripts/slurm-test-cluster.sh"), {"start", dir}, {},
                            120000);
    }
    ~TestCluster() {
        runProgram(test::sourcePath("scripts/slurm-test-cluster.sh"), {"stop", dir_});
    }
    TestCluster(const TestCluster&) = delete;
    TestCluster& operator=(const TestCluster&) = delete;

    bool running() const { return start_.exitCode == 0; }
    const Outcome& start() const { return start_; }
    QString conf() const { return dir_ + "/slurm.conf"; }

private:
    QString dir_;
    Outcome start_;
};

}  // namespace

class TestSlurm : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void scriptRunsOnePointAsAnArrayTask() {
        QTemporaryDir temp;
        const QString dir = temp.filePath("array");
        const Outcome written =
            runCli(kSweep + QStringList{"--slurm", dir, "--partition", "gpu", "--gres", "gpu:1",
                                        "--array-limit", "2", "--sbatch-arg=--account=course"});
        QVERIFY2(written.exitCode == 0, qPrintable(written.err));
        QCOMPARE(written.out.trimmed(), QDir(dir).absoluteFilePath("stepscope.sbatch"));
        const QString script = QString::fromUtf8(contents(dir + "/stepscope.sbatch"));
        for (const char* line : {"#SBATCH --array=0-3%2", "#SBATCH --partition=gpu",
                                 "#SBATCH --gres=gpu:1", "#SBATCH --account=course"}) {
            QVERIFY2(script.contains(QString(line) + "\n"), line);
        }
        QVERIFY(runFilesIn(dir).isEmpty());  // nothing ran yet

        const Outcome task =
            runTask(dir, 2, {"SLURM_JOB_ID=79", "SLURM_ARRAY_JOB_ID=77", "SLURMD_NODENAME=node7"});
        QVERIFY2(task.exitCode == 0, qPrintable(task.err));
        QCOMPARE(runFilesIn(dir), QStringList{pointName(2)});
        const RunResult result = readRunFile((dir + "/points/" + pointName(2)).toStdString());
        QCOMPARE(toString(result.status), std::string("ok"));
        const RunConfig expected = expectedPoints()[2];  // a copy: the vector is a temporary
        QCOMPARE(result.config.contextLength, expected.contextLength);
        QCOMPARE(toString(result.config.mode), toString(expected.mode));
        QCOMPARE(result.config.model.name, expected.model.name);
        QCOMPARE(result.config.batchSize, int64_t(2));
        QCOMPARE(result.config.measuredSteps, 1);
        QCOMPARE(result.environment.slurmJobId, std::string("79"));
        QCOMPARE(result.environment.slurmArrayJobId, std::string("77"));
        QCOMPARE(result.environment.slurmArrayTaskId, std::string("2"));
        QCOMPARE(result.environment.slurmNode, std::string("node7"));

        const Outcome outside = runTask(dir, 4);
        QCOMPARE(outside.exitCode, 2);
        QVERIFY2(outside.err.contains("no point 4 in this sweep (0-3)"), qPrintable(outside.err));
    }

    // --runner recorder: each task runs stepscope-record on the point's
    // config, found through STEPSCOPE_RECORD or on PATH, and its run file is
    // read as stepscope-cli's is.
    void recorderRunnerScriptRunsEachPointWithTheRecorder() {
        QTemporaryDir temp;
        const QString dir = temp.filePath("array");
        const Outcome written =
            runCli(kRecorderSweep + QStringList{"--slurm", dir, "--runner", "recorder"});
        QVERIFY2(written.exitCode == 0, qPrintable(written.err));
        const QString script = QString::fromUtf8(contents(dir + "/stepscope.sbatch"));
        QVERIFY2(script.contains("\nrun=${STEPSCOPE_RECORD:-stepscope-record}\n"),
                 qPrintable(script));
        QVERIFY(!script.contains(STEPSCOPE_CLI));  // no C++ build needed on the node
        for (int i = 0; i < 4; ++i) {
            QVERIFY2(script.contains(recorderCaseLine(i)), qPrintable(recorderCaseLine(i)));
        }
        // What the app and --collect read of the folder.
        const auto array = readSlurmArray(dir.toStdString());
        QVERIFY(array.has_value());
        QCOMPARE(toString(array->runner), std::string("recorder"));
        QCOMPARE(array->tasks.size(), size_t(4));
        const RunConfig planned = runConfigFromJson(array->tasks[1].inputText);
        QCOMPARE(toString(planned.engine), std::string("pytorch"));
        QCOMPARE(toString(planned.mode), toString(expectedPoints()[1].mode));

        // Nowhere to be found: the task says so and what to do, exit 127.
        QTemporaryDir empty;
        const Outcome noRecorder = runTask(dir, 0, {"PATH=" + empty.path() + ":/usr/bin:/bin"});
        QCOMPARE(noRecorder.exitCode, 127);
        QVERIFY2(noRecorder.err.contains("cannot run 'stepscope-record'") &&
                     noRecorder.err.contains("pip install"),
                 qPrintable(noRecorder.err));

        // On PATH, as after pip install into the node's environment.
        QTemporaryDir bin;
        QVERIFY(!recorderIn(bin).isEmpty());
        const Outcome task =
            runTask(dir, 2,
                    {"PATH=" + bin.path() + ":" + qEnvironmentVariable("PATH"), "SLURM_JOB_ID=91",
                     "SLURM_ARRAY_JOB_ID=90", "SLURMD_NODENAME=node9"});
        QVERIFY2(task.exitCode == 0, qPrintable(task.err));
        QVERIFY2(task.err.contains("stepscope-record:"), qPrintable(task.err));
        QCOMPARE(runFilesIn(dir), QStringList{pointName(2)});
        const SweepCollection collection = readSlurmSweep(dir.toStdString(), "--collect");
        QCOMPARE(collection.results.size(), size_t(1));
        QCOMPARE(collection.missing.size(), size_t(3));
        const RunResult& result = collection.results.front();
        QCOMPARE(toString(result.status), std::string("ok"));
        QCOMPARE(toString(result.config.engine), std::string("pytorch"));
        QCOMPARE(result.config.contextLength, expectedPoints()[2].contextLength);
        QCOMPARE(toString(result.config.mode), toString(expectedPoints()[2].mode));
        QCOMPARE(result.config.measuredSteps, 1);
        QVERIFY(!result.environment.python.empty());  // the recorder's, not a C++ run
        QCOMPARE(result.environment.slurmArrayJobId, std::string("90"));
        QCOMPARE(result.environment.slurmArrayTaskId, std::string("2"));
        QCOMPARE(result.environment.slurmNode, std::string("node9"));

        // STEPSCOPE_RECORD names it wherever it is.
        const Outcome named = runTask(dir, 9,
                                      {"STEPSCOPE_RECORD=" + bin.filePath("stepscope-record"),
                                       "PATH=" + empty.path() + ":/usr/bin:/bin"});
        QCOMPARE(named.exitCode, 2);  // found, and no point 9
        QVERIFY2(named.err.contains("no point 9 in this sweep (0-3)"), qPrintable(named.err));

        // Resumed without sweep flags, the array keeps its runner.
        const Outcome resumed = runCli({"sweep", "--slurm", dir, "--resume"});
        QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err));
        const QString again = QString::fromUtf8(contents(dir + "/stepscope.sbatch"));
        QVERIFY(again.contains("#SBATCH --array=0-1,3\n"));
        QVERIFY(again.contains(recorderCaseLine(3)));
    }

    // A distributed point is an array task like any other: the task's
    // stepscope-cli (or stepscope-record) starts its ranks with torchrun on
    // the node, and --collect reads every rank back.
    void distributedPointsRunAsArrayTasks() {
        const QStringList strategies = {
            "sweep", "--engine", "pytorch", "--model",    "nano",          "--vocab",   "97",
            "--ctx", "16",       "--batch", "4",          "--warmup",      "1",         "--steps",
            "1",     "--ranks",  "2",       "--parallel", "naive,overlap", "--threads", "1"};
        for (const QString runner : {"stepscope-cli", "recorder"}) {
            QTemporaryDir temp;
            const QString dir = temp.filePath("array");
            QStringList arguments = strategies + QStringList{"--slurm", dir};
            QStringList environment;
            QTemporaryDir bin;
            if (runner == "recorder") {
                arguments << "--runner"
                          << "recorder";
                QVERIFY(!recorderIn(bin).isEmpty());
                environment << "PATH=" + bin.path() + ":" + qEnvironmentVariable("PATH");
            }
            const Outcome written = runCli(arguments);
            QVERIFY2(written.exitCode == 0, qPrintable(written.err));
            const Outcome task = runTask(dir, 1, environment + QStringList{"SLURM_JOB_ID=5"});
            QVERIFY2(task.exitCode == 0, qPrintable(task.err));
            const SweepCollection collection = readSlurmSweep(dir.toStdString(), "--collect");
            QCOMPARE(collection.results.size(), size_t(1));
            const RunResult& point = collection.results.front();
            QVERIFY2(point.status == RunStatus::Ok, point.message.c_str());
            QCOMPARE(point.config.parallel, std::string("overlap"));
            QVERIFY(point.distributed && point.distributed->ranks.size() == 2);
            // Matched across the ranks when read, whichever runner wrote it.
            QVERIFY(!point.distributed->collectives.empty());
            QCOMPARE(point.environment.slurmJobId, std::string("5"));
        }
    }

    // A point whose ranks go over nodes asks sbatch for them, a task a node;
    // run outside an allocation it says what it needs instead of starting.
    void pointsOverNodesAskForTheNodes() {
        QTemporaryDir temp;
        const QString dir = temp.filePath("array");
        const QStringList sweep = {
            "sweep", "--engine",        "pytorch", "--model", "nano", "--ctx",
            "16",    "--batch",         "4",       "--steps", "1",    "--ranks",
            "2",     "--parallel",      "overlap", "--nodes", "2",    "--slurm",
            dir,     "--gpus-per-node", "4"};
        const Outcome written = runCli(sweep);
        QVERIFY2(written.exitCode == 0, qPrintable(written.err));
        const QByteArray script = contents(dir + "/stepscope.sbatch");
        for (const char* line : {"#SBATCH --nodes=2\n", "#SBATCH --ntasks-per-node=1\n",
                                 "#SBATCH --gpus-per-node=4\n"}) {
            QVERIFY2(script.contains(line), script.constData());
        }
        const Outcome task = runTask(dir, 0, {});
        QCOMPARE(task.exitCode, 3);
        QCOMPARE(runFilesIn(dir).size(), 1);
        const RunResult point =
            readRunFile((dir + "/points/" + runFilesIn(dir).front()).toStdString());
        QCOMPARE(toString(point.status), std::string("unavailable"));
        QVERIFY2(QString::fromStdString(point.message)
                     .startsWith("nodes: 2 nodes are started by srun inside a Slurm allocation"),
                 point.message.c_str());

        // One node: neither line.
        QTemporaryDir other;
        const QString single = other.filePath("array");
        QCOMPARE(runCli(kSweep + QStringList{"--slurm", single}).exitCode, 0);
        QVERIFY(!contents(single + "/stepscope.sbatch").contains("--nodes"));
        QVERIFY(!contents(single + "/stepscope.sbatch").contains("--ntasks-per-node"));
        // Ranks that do not divide by the nodes are refused before anything is written.
        QStringList uneven = sweep;
        uneven[uneven.indexOf("--ranks") + 1] = "3";
        uneven[uneven.indexOf("--batch") + 1] = "6";
        uneven[uneven.indexOf(dir)] = temp.filePath("uneven");
        const Outcome refused = runCli(uneven);
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains("nodes: ranks 3 do not divide by nodes 2"),
                 qPrintable(refused.err));
        QVERIFY(!QFileInfo::exists(temp.filePath("uneven")));
    }

    // The collective benchmark as an array, a rank count a task: a task run
    // by hand writes its rows, --collect merges what has finished (exit 3
    // until every count has), --resume writes only the rest, and a task
    // whose stored command line was changed runs nothing.
    void collectiveBenchmarkRunsARankCountATask() {
        QTemporaryDir temp;
        const QString dir = temp.filePath("collective");
        const QStringList bench = {"collective", "--op",     "all_reduce,broadcast",
                                   "--sizes",    "4K,8192",  "--ranks",
                                   "2,4",        "--warmup", "0",
                                   "--repeats",  "2"};
        const Outcome written = runCli(bench + QStringList{"--slurm", dir});
        QVERIFY2(written.exitCode == 0, qPrintable(written.err));
        const QByteArray script = contents(dir + "/stepscope.sbatch");
        QVERIFY2(script.contains("collective --op all_reduce,broadcast --sizes 4096,8192 --ranks "
                                 "2 --nodes 1 --backend gloo --dtype fp32 --device cpu --warmup "
                                 "0 --repeats 2 --out points/ranks2.json"),
                 script.constData());
        QVERIFY(!script.contains("#SBATCH --nodes"));
        const Outcome task = runTask(dir, 0);
        QVERIFY2(task.exitCode == 0, qPrintable(task.err));

        const Outcome half = runCli({"collective", "--collect", dir});
        QCOMPARE(half.exitCode, 3);
        QVERIFY2(half.err.contains("missing point 1 ranks4: no result file yet"),
                 qPrintable(half.err));
        const CollectiveFile collected =
            readCollectiveFile((dir + "/collective.json").toStdString());
        QCOMPARE(collected.rows.size(), size_t(4));  // 2 ops × 2 sizes on 2 ranks
        for (const CollectiveRow& row : collected.rows) {
            QCOMPARE(row.ranks, 2);
            QCOMPARE(row.status, std::string("ok"));
        }

        // A rank count that ended halfway is failed, not taken as done.
        CollectiveFile partial = collected;
        partial.rows.resize(1);
        QVERIFY(writeFile(dir + "/points/ranks4.json",
                          QByteArray::fromStdString(collectiveFileToJson(partial))));
        const Outcome cut = runCli({"collective", "--collect", dir});
        QCOMPARE(cut.exitCode, 3);
        QVERIFY2(cut.err.contains("failed point 1 ranks4: failed: 1 of 4 rows"),
                 qPrintable(cut.err));
        QVERIFY(QFile::remove(dir + "/points/ranks4.json"));

        const Outcome resumed = runCli({"collective", "--slurm", dir, "--resume"});
        QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err));
        QVERIFY(contents(dir + "/stepscope.sbatch").contains("#SBATCH --array=1\n"));

        // A stored command line changed by hand: --resume refuses, names it.
        QByteArray array = contents(dir + "/slurm-array.json");
        const QByteArray out = "\"points/ranks4.json\"";  // first in the task's arguments
        const qsizetype at = array.indexOf(out);
        QVERIFY(at >= 0);
        array.replace(at, out.size(), "\"/tmp/elsewhere.json\"");
        QVERIFY(writeFile(dir + "/slurm-array.json", array));
        const Outcome tampered = runCli({"collective", "--slurm", dir, "--resume"});
        QCOMPARE(tampered.exitCode, 2);
        QVERIFY2(tampered.err.contains("cannot be resumed") &&
                     tampered.err.contains("is not what StepScope writes for ranks4"),
                 qPrintable(tampered.err));
    }

    // What the recorder cannot run is refused, naming the field and what is
    // allowed, before anything is written.
    void recorderRunnerRefusesWhatTheRecorderCannotRun() {
        QTemporaryDir temp;
        const QString dir = temp.filePath("array");
        const struct {
            QStringList flags;
            QStringList messages;
        } bad[] = {
            {kSweep + QStringList{"--runner", "recorder"},  // libtorch, the default engine
             {"engine: 'libtorch' is StepScope's C++ engine",
              "allowed with --runner recorder: pytorch, pytorch-compile",
              "(sweep point " + pointName(0) + ")"}},
            {kSweep + QStringList{"--engine", "libtorch,pytorch", "--runner", "recorder"},
             {"engine: 'libtorch'"}},
            {kRecorderSweep + QStringList{"--runner", "recorder", "--python", "/usr/bin/python3"},
             {"python: the recorder runs in the Python it was installed into",
              "allowed only with --runner cli"}},
            {kRecorderSweep + QStringList{"--runner", "record"},
             {"--runner: 'record' is not allowed; allowed: cli, recorder"}},
            {kRecorderSweep + QStringList{"--runner", "recorder", "--activation-checkpoint", "1"},
             {"activation-checkpoint: the pytorch engine runs the model without checkpointing"}},
        };
        for (const auto& [flags, messages] : bad) {
            const Outcome refused = runCli(flags + QStringList{"--slurm", dir});
            QCOMPARE(refused.exitCode, 2);
            for (const QString& message : messages) {
                QVERIFY2(refused.err.contains(message), qPrintable(refused.err));
            }
            QVERIFY(!QFileInfo::exists(dir));  // nothing written
        }
        const Outcome withoutSlurm =
            runCli(kRecorderSweep + QStringList{"--out", dir, "--runner", "recorder"});
        QCOMPARE(withoutSlurm.exitCode, 2);
        QVERIFY2(withoutSlurm.err.contains("--runner requires --slurm"),
                 qPrintable(withoutSlurm.err));

        // A directory run by one runner is not rewritten for the other.
        QCOMPARE(runCli(kRecorderSweep + QStringList{"--slurm", dir}).exitCode, 0);
        const QByteArray script = contents(dir + "/stepscope.sbatch");
        QVERIFY(script.contains(QString("run=${STEPSCOPE_CLI:-%1}\n").arg(STEPSCOPE_CLI).toUtf8()));
        // An array file from before runners existed is stepscope-cli's.
        QByteArray legacy = contents(dir + "/slurm-array.json");
        QVERIFY(legacy.contains("\"runner\": \"cli\",\n"));
        legacy.replace("\"runner\": \"cli\",\n", "");
        const QString legacyDir = temp.filePath("legacy");
        QVERIFY(QDir().mkpath(legacyDir));
        QVERIFY(writeFile(legacyDir + "/slurm-array.json", legacy));
        QCOMPARE(toString(readSlurmArray(legacyDir.toStdString())->runner), std::string("cli"));
        legacy.replace("\"details\"", "\"runner\": \"shell\",\n  \"details\"");
        QVERIFY(writeFile(legacyDir + "/slurm-array.json", legacy));
        QVERIFY_THROWS_EXCEPTION(SlurmError, readSlurmArray(legacyDir.toStdString()));
        const Outcome other =
            runCli(kRecorderSweep + QStringList{"--slurm", dir, "--runner", "recorder"});
        QCOMPARE(other.exitCode, 2);
        QVERIFY2(other.err.contains("different sweep") &&
                     other.err.contains("run with stepscope-cli (--runner cli), here with "
                                        "stepscope-record (--runner recorder)"),
                 qPrintable(other.err));
        const Outcome resumeOther =
            runCli({"sweep", "--slurm", dir, "--resume", "--runner", "recorder"});
        QCOMPARE(resumeOther.exitCode, 2);
        QVERIFY2(resumeOther.err.contains("--runner: '" + dir +
                                          "' holds sweep points run by --runner cli"),
                 qPrintable(resumeOther.err));
        QCOMPARE(contents(dir + "/stepscope.sbatch"), script);
    }

    // One grid point per task, into DIR/points; DIR's name has a space.
    void attentionScriptRunsOnePointAsAnArrayTask() {
        QTemporaryDir temp;
        const QString dir = temp.filePath("attention array");
        const Outcome written = runCli(kAttention + QStringList{"--slurm", dir});
        QVERIFY2(written.exitCode == 0, qPrintable(written.err));
        const QString absolute = QDir(dir).absolutePath();
        const QString script = QString::fromUtf8(contents(dir + "/stepscope.sbatch"));
        for (const QString& line : QStringList{
                 "#SBATCH --array=0-3", "#SBATCH --output=\"" + absolute + "/logs/%x-%A_%a.out\"",
                 "cd '" + absolute + "'"}) {
            QVERIFY2(script.contains(line + "\n"), qPrintable(line));
        }

        const Outcome task = runTask(dir, 2, {"SLURM_JOB_ID=81", "SLURMD_NODENAME=node7"});
        QVERIFY2(task.exitCode == 0, qPrintable(task.err));
        QCOMPARE(runFilesIn(dir), QStringList{kAttentionPoints[2] + ".json"});
        const AttentionFile file =
            readAttentionFile((dir + "/points/" + kAttentionPoints[2] + ".json").toStdString());
        QCOMPARE(file.points.size(), size_t(1));
        const AttentionPoint& point = file.points.front();
        QCOMPARE(point.backend, std::string("naive"));
        QCOMPARE(point.d, int64_t(16));
        QCOMPARE(point.seq, int64_t(64));
        QCOMPARE(point.batch, int64_t(1));
        QCOMPARE(point.status, std::string("ok"));
        QCOMPARE(file.environment.slurmJobId, std::string("81"));
        QCOMPARE(file.environment.slurmArrayTaskId, std::string("2"));
        QCOMPARE(file.environment.slurmNode, std::string("node7"));

        const Outcome badDevice =
            runCli(kAttention + QStringList{"--device", "tpu", "--slurm", temp.filePath("bad")});
        QCOMPARE(badDevice.exitCode, 2);
        QVERIFY2(badDevice.err.contains("'tpu' is not allowed; allowed: cpu, cuda"),
                 qPrintable(badDevice.err));
        QVERIFY(!QFileInfo::exists(temp.filePath("bad")));
    }

    // The user's attention travels only with its own points: naive's task
    // never imports it; its task gates and times it as a local grid would.
    void usersAttentionGoesOnlyToItsOwnTasks() {
        QTemporaryDir temp;
        QFile module(temp.filePath("my_flash.py"));
        QVERIFY(module.open(QIODevice::WriteOnly));
        module.write(
            "import torch\n\ndef mine(q, k, v, is_causal):\n"
            "    return torch.nn.functional.scaled_dot_product_attention(\n"
            "        q, k, v, is_causal=is_causal)\n");
        module.close();
        const QString dir = temp.filePath("user grid");
        const Outcome written =
            runCli(QStringList{"attention", "--engine", "pytorch", "--backends", "naive",
                               "--py-attention", "my_flash:mine", "--py-path", temp.path()} +
                   kTinyAttentionPoint + QStringList{"--slurm", dir});
        QVERIFY2(written.exitCode == 0, qPrintable(written.err));
        const QString script = QString::fromUtf8(contents(dir + "/stepscope.sbatch"));
        const QStringList lines = script.split('\n');
        const auto taskLine = [&](const QString& point) {
            for (const QString& line : lines) {
                if (line.contains("points/" + point + ".json")) {
                    return line;
                }
            }
            return QString();
        };
        QVERIFY(!taskLine("naive_d16_seq32_fp32").contains("--py-attention"));
        QVERIFY2(taskLine("mine_d16_seq32_fp32").contains("--py-attention my_flash:mine"),
                 qPrintable(script));

        const Outcome task = runTask(dir, 1);
        QVERIFY2(task.exitCode == 0, qPrintable(task.err));
        const AttentionFile file =
            readAttentionFile((dir + "/points/mine_d16_seq32_fp32.json").toStdString());
        QCOMPARE(file.points.size(), size_t(1));
        const AttentionPoint& point = file.points.front();
        QCOMPARE(point.backend, std::string("mine"));
        QCOMPARE(point.status, std::string("ok"));
        QVERIFY(point.gate && point.gate->ok && *point.gate->maxRelError < 1e-4);
    }

    // Half the grid finished: --collect lists the other half and --resume
    // submits only it; complete, the tables are the local grid's.
    void attentionCollectListsTheMissingAndResumeRunsOnlyThem() {
        QTemporaryDir temp;
        const QString dir = temp.filePath("array");
        QCOMPARE(runCli(kAttention + QStringList{"--slurm", dir}).exitCode, 0);
        QCOMPARE(runTask(dir, 0).exitCode, 0);
        QCOMPARE(runTask(dir, 3).exitCode, 0);
        QVERIFY(writeFile(dir + "/logs/stepscope-attention-41_2.out",
                          "slurmstepd: error: *** JOB 41 CANCELLED DUE TO PREEMPTION ***\n"));

        const Outcome half = runCli({"attention", "--collect", dir});
        QCOMPARE(half.exitCode, 3);
        QCOMPARE(unfinishedLines(half.err),
                 (QStringList{"missing point 1 " + kAttentionPoints[1],
                              "missing point 2 " + kAttentionPoints[2]}));
        QVERIFY2(half.err.contains("CANCELLED DUE TO PREEMPTION"), qPrintable(half.err));
        QCOMPARE(readAttentionFile((dir + "/attention.json").toStdString()).points.size(),
                 size_t(2));

        resumeAndRunPointsOneAndTwo(dir, {"attention", "--slurm", dir, "--resume"});
        if (QTest::currentTestFailed()) {
            return;
        }

        // sweep --collect reads what DIR holds, as attention --collect does.
        const Outcome complete = runCli({"sweep", "--collect", dir});
        QVERIFY2(complete.exitCode == 0, qPrintable(complete.err));
        QVERIFY(unfinishedLines(complete.err).isEmpty());
        const QString local = temp.filePath("local");
        const Outcome here = runCli(kAttention + QStringList{"--out", local});
        QVERIFY2(here.exitCode == 0, qPrintable(here.err));
        QCOMPARE(attentionShape(dir), attentionShape(local));
        QCOMPARE(attentionShape(dir).size(), 1 + 4);
        const AttentionFile collected = readAttentionFile((dir + "/attention.json").toStdString());
        QCOMPARE(collected.points.size(), size_t(4));
        QVERIFY(collected.environment.slurmArrayTaskId.empty());  // not one task's

        const Outcome collectWithFlags = runCli({"attention", "--collect", dir, "--seq", "8"});
        QCOMPARE(collectWithFlags.exitCode, 2);
        QVERIFY2(collectWithFlags.err.contains("--seq cannot be given with --collect"),
                 qPrintable(collectWithFlags.err));
    }

    void collectListsTheMissingAndResumeRunsOnlyThem() {
        QTemporaryDir temp;
        const QString dir = temp.filePath("array");
        QCOMPARE(runCli(kSweep + QStringList{"--slurm", dir}).exitCode, 0);
        QCOMPARE(runTask(dir, 0).exitCode, 0);
        QCOMPARE(runTask(dir, 3).exitCode, 0);
        // Point 1 failed on its node; point 2 left a log and no run file.
        RunResult failed = readRunFile((dir + "/points/" + pointName(0)).toStdString());
        failed.config.mode = RunMode::TrainStep;  // point 1
        failed.status = RunStatus::Failed;
        failed.message = "the node went away";
        writeRunFile(failed, (dir + "/points/" + pointName(1)).toStdString());
        QVERIFY(
            writeFile(dir + "/logs/stepscope-sweep-41_2.out",
                      "loading\nslurmstepd: error: *** JOB 41 CANCELLED DUE TO TIME LIMIT ***\n"));

        const Outcome half = runCli({"sweep", "--collect", dir});
        QCOMPARE(half.exitCode, 3);
        QCOMPARE(unfinishedLines(half.err),
                 (QStringList{unfinished("missing", 2), unfinished("failed", 1)}));
        QVERIFY2(half.err.contains("CANCELLED DUE TO TIME LIMIT"), qPrintable(half.err));
        QVERIFY2(half.err.contains("the node went away"), qPrintable(half.err));
        QCOMPARE(csvRows(dir).size(), 1 + 3);  // header, the ok points and the failed one
        QVERIFY(half.out.contains("| nano"));

        resumeAndRunPointsOneAndTwo(dir, kSweep + QStringList{"--slurm", dir, "--resume"});
        if (QTest::currentTestFailed()) {
            return;
        }

        const Outcome complete = runCli({"sweep", "--collect", dir});
        QVERIFY2(complete.exitCode == 0, qPrintable(complete.err));
        QVERIFY(unfinishedLines(complete.err).isEmpty());
        const QList<QStringList> rows = csvRows(dir);
        QCOMPARE(rows.size(), 1 + 4);
        const qsizetype status = rows[0].indexOf("status");
        for (qsizetype r = 1; r < rows.size(); ++r) {
            QCOMPARE(rows[r][status], QString("ok"));
        }

        // Without sweep flags, --resume takes the sweep DIR holds.
        const Outcome nothing = runCli({"sweep", "--slurm", dir, "--resume"});
        QCOMPARE(nothing.exitCode, 0);
        QVERIFY2(nothing.err.contains("nothing to submit"), qPrintable(nothing.err));
        QVERIFY(contents(dir + "/stepscope.sbatch").contains("#SBATCH --array=1-2\n"));
    }

    // Issue 33: a tampered slurm-array.json became lines of the rebuilt
    // script, wrote inputs anywhere and made --collect read outside DIR.
    void tamperedArrayFileRunsNothingAndTouchesNothingOutside() {
        QTemporaryDir temp;
        const QString dir = temp.filePath("array");
        QCOMPARE(runCli(kSweep + QStringList{"--slurm", dir}).exitCode, 0);
        const QJsonObject original =
            QJsonDocument::fromJson(contents(dir + "/slurm-array.json")).object();
        const QString marker = temp.filePath("MARKER");
        const QString outside = temp.filePath("outside.json");
        const QString touch = "touch " + marker;
        auto withTask = [&](const char* key, const QJsonValue& value) {
            QJsonObject array = original;
            QJsonArray tasks = array["tasks"].toArray();
            QJsonObject task = tasks[0].toObject();
            task[key] = value;
            tasks[0] = task;
            array["tasks"] = tasks;
            return array;
        };
        auto with = [&](const char* key, const QJsonValue& value) {
            QJsonObject array = original;
            array[key] = value;
            return array;
        };
        const struct {
            const char* field;  // the message names it
            QJsonObject array;
            QStringList command;
        } cases[] = {
            {"job_name", with("job_name", "x\n" + touch), {"--slurm", dir, "--resume"}},
            {"job_name", with("job_name", "x;" + touch), {"--slurm", dir, "--resume"}},
            {"kind", with("kind", "sweep\n" + touch), {"--slurm", dir, "--resume"}},
            {"tasks[0].name", withTask("name", "a\n" + touch), {"--slurm", dir, "--resume"}},
            {"tasks[0].name", withTask("name", "a;" + touch), {"--slurm", dir, "--resume"}},
            {"environment[0]",
             with("environment", QJsonArray{"X=1;" + touch + ";Y=2"}),
             {"--slurm", dir, "--resume"}},
            {"environment[0]",
             with("environment", QJsonArray{"LD_PRELOAD=/tmp/x.so"}),
             {"--slurm", dir, "--resume"}},
            {"tasks[0].input", withTask("input", outside), {"--slurm", dir, "--resume"}},
            {"tasks[0].input",
             withTask("input", "inputs/../../outside.json"),
             {"--slurm", dir, "--resume"}},
            {"tasks[0].result",
             withTask("result", "points/../../outside.json"),
             {"--collect", dir}},
            {"tasks[0].result", withTask("result", outside), {"--collect", dir}},
            {"details", with("details", QJsonArray{}), {"--collect", dir}},
            {"tasks[0].arguments", withTask("arguments", "run"), {"--collect", dir}},
        };
        for (const auto& tampered : cases) {
            QVERIFY(writeFile(dir + "/slurm-array.json", QJsonDocument(tampered.array).toJson()));
            const Outcome refused = runCli(QStringList{"sweep"} + tampered.command);
            QVERIFY2(refused.exitCode == 2 && refused.err.contains(tampered.field) &&
                         refused.err.contains("slurm-array.json"),
                     qPrintable(QString(tampered.field) + ": " + refused.err));
            QVERIFY2(!contents(dir + "/stepscope.sbatch").contains("touch"),
                     "a tampered name reached the script");
        }
        QVERIFY(!QFile::exists(outside));

        // A point whose file cannot be read is listed as such; the rest are collected.
        QVERIFY(writeFile(dir + "/slurm-array.json", QJsonDocument(original).toJson()));
        QVERIFY(writeFile(dir + "/points/" + pointName(0), "{\"format\": 1e999}"));
        const Outcome collected = runCli({"sweep", "--collect", dir});
        QCOMPARE(collected.exitCode, 3);
        QVERIFY2(collected.err.contains("failed point 0") && collected.err.contains("unreadable") &&
                     collected.err.contains("out of range") &&
                     !collected.err.contains("json.exception"),
                 qPrintable(collected.err));
        QVERIFY(QFile::remove(dir + "/points/" + pointName(0)));

        // A value StepScope writes quoted may hold anything: the rebuilt script
        // exports it as it is and runs nothing of it.
        const QString hostile = "/x'$(" + touch + ")`" + touch + "`\n" + touch + ";'";
        QVERIFY(
            writeFile(dir + "/slurm-array.json",
                      QJsonDocument(with("environment", QJsonArray{"STEPSCOPE_PYTHON=" + hostile}))
                          .toJson()));
        const Outcome resumed = runCli({"sweep", "--slurm", dir, "--resume"});
        QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err));
        const QString printer = temp.filePath("print-python.sh");
        QVERIFY(writeFile(printer, "#!/bin/sh\nprintf '%s' \"$STEPSCOPE_PYTHON\"\n"));
        QVERIFY(QFile::setPermissions(printer, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
        const Outcome task = runTask(dir, 0, {"STEPSCOPE_CLI=" + printer});
        QVERIFY2(task.exitCode == 0, qPrintable(task.err));
        QCOMPARE(task.out, hostile);
        QVERIFY2(!QFile::exists(marker), "a command from slurm-array.json ran");
    }

    // Issue 45: --resume wrote a task's stored arguments into the script, so
    // a tampered folder's task wrote outside it (--out /elsewhere) or ran a
    // script the folder brought (--python ./evil.sh). The script is rebuilt
    // from the folder's plan; what differs from it is refused, and the
    // script and everything outside stay as they were.
    void resumedScriptIsBuiltFromThePlanNotFromStoredArguments() {
        QTemporaryDir temp;
        const QString sweepDir = temp.filePath("sweep");
        QCOMPARE(runCli(kSweep + QStringList{"--slurm", sweepDir}).exitCode, 0);
        const QString gridDir = temp.filePath("grid");
        const Outcome grid = runCli(
            QStringList{"attention", "--backends", "naive,compiled", "--py-attention",
                        "my_flash:mine", "--py-path", temp.path()} +
            kTinyAttentionPoint + QStringList{"--python", "/usr/bin/python3", "--slurm", gridDir});
        QVERIFY2(grid.exitCode == 0, qPrintable(grid.err));
        const QString marker = temp.filePath("MARKER");
        const QString outside = temp.filePath("elsewhere.json");
        for (const QString& dir : {sweepDir, gridDir}) {
            const QString evil = dir + "/evil.sh";
            QVERIFY(writeFile(evil, ("#!/bin/sh\ntouch '" + marker + "'\n").toUtf8()));
            QVERIFY(QFile::setPermissions(evil, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
        }
        auto tampered = [&](const QString& dir, int index, auto change) {
            QJsonObject array =
                QJsonDocument::fromJson(contents(dir + "/slurm-array.json")).object();
            QJsonArray tasks = array["tasks"].toArray();
            QJsonObject task = tasks[index].toObject();
            QJsonArray arguments = task["arguments"].toArray();
            change(arguments, array);
            task["arguments"] = arguments;
            tasks[index] = task;
            array["tasks"] = tasks;
            return array;
        };
        const QString input = "inputs/" + pointName(0);
        const struct {
            QString dir;
            const char* field;  // the message names it
            QJsonObject array;
        } cases[] = {
            {sweepDir, "tasks[0].arguments",
             tampered(sweepDir, 0,
                      [&](QJsonArray& a, QJsonObject&) {
                          a = QJsonArray{"run", "--config", input, "--out", outside};
                      })},
            {sweepDir, "tasks[0].arguments",
             tampered(sweepDir, 0,
                      [&](QJsonArray& a, QJsonObject&) {
                          a << "--python"
                            << "./evil.sh";
                      })},
            {sweepDir, "environment[0]",
             tampered(sweepDir, 0,
                      [&](QJsonArray&, QJsonObject& o) {
                          o["environment"] = QJsonArray{"STEPSCOPE_PYTHON=./evil.sh"};
                      })},
            {sweepDir, "environment[0]",
             tampered(sweepDir, 0,
                      [&](QJsonArray&, QJsonObject& o) {
                          o["environment"] =
                              QJsonArray{"STEPSCOPE_PYTHON=" + sweepDir + "/evil.sh"};
                      })},
            {gridDir, "tasks[1].arguments --python",
             tampered(gridDir, 1,
                      [&](QJsonArray& a, QJsonObject&) {
                          for (int i = 0; i < a.size(); ++i) {
                              if (a[i] == "--python") {
                                  a[i + 1] = "./evil.sh";
                              }
                          }
                      })},
            {gridDir, "tasks[1].arguments",
             tampered(gridDir, 1,
                      [&](QJsonArray& a, QJsonObject&) {
                          a << "--python"
                            << "./evil.sh";
                      })},
            {gridDir, "tasks[0].arguments",
             tampered(gridDir, 0,
                      [&](QJsonArray& a, QJsonObject&) {
                          a[a.size() - 1] = outside;  // --out-file's value
                      })},
            {gridDir, "tasks[0].arguments[2]",
             tampered(gridDir, 0,
                      [&](QJsonArray& a, QJsonObject&) {
                          a.insert(2, "--out");
                          a.insert(3, outside);
                      })},
            {gridDir, "tasks[1].arguments --py-path",
             tampered(gridDir, 1,
                      [&](QJsonArray& a, QJsonObject&) {
                          a.insert(a.size() - 2, "--py-path");
                          a.insert(a.size() - 2, ".");
                      })},
        };
        const QByteArray gridArray = contents(gridDir + "/slurm-array.json");
        const QByteArray sweepArray = contents(sweepDir + "/slurm-array.json");
        for (const auto& test : cases) {
            const QByteArray script = contents(test.dir + "/stepscope.sbatch");
            QVERIFY(writeFile(test.dir + "/slurm-array.json", QJsonDocument(test.array).toJson()));
            const QString command = test.dir == sweepDir ? "sweep" : "attention";
            const Outcome refused = runCli({command, "--slurm", test.dir, "--resume"});
            QVERIFY2(refused.exitCode == 2 && refused.err.contains(test.field) &&
                         refused.err.contains("slurm-array.json") &&
                         !refused.err.contains("json.exception"),
                     qPrintable(QString(test.field) + ": " + refused.err));
            QCOMPARE(contents(test.dir + "/stepscope.sbatch"), script);
        }
        // A point's config that names code: the folder is no one's say-so.
        {
            const QByteArray script = contents(sweepDir + "/stepscope.sbatch");
            QJsonObject array = QJsonDocument::fromJson(sweepArray).object();
            QJsonArray tasks = array["tasks"].toArray();
            QJsonObject task = tasks[0].toObject();
            QJsonObject config =
                QJsonDocument::fromJson(task["input_text"].toString().toUtf8()).object();
            config["engine"] = "pytorch";
            config["py_model"] = "evilmod:build";
            config["py_path"] = temp.path();
            task["input_text"] = QString::fromUtf8(QJsonDocument(config).toJson());
            tasks[0] = task;
            array["tasks"] = tasks;
            QVERIFY(writeFile(sweepDir + "/slurm-array.json", QJsonDocument(array).toJson()));
            const Outcome refused = runCli({"sweep", "--slurm", sweepDir, "--resume"});
            QVERIFY2(refused.exitCode == 2 && refused.err.contains("tasks[0].input_text") &&
                         refused.err.contains("evilmod:build"),
                     qPrintable(refused.err));
            QCOMPARE(contents(sweepDir + "/stepscope.sbatch"), script);
            QVERIFY(writeFile(sweepDir + "/slurm-array.json", sweepArray));
        }

        // The sweep's task runs what the plan says, whatever the folder claims.
        const Outcome task = runTask(sweepDir, 0);
        QVERIFY2(task.exitCode == 0, qPrintable(task.err));
        QVERIFY(QFile::exists(sweepDir + "/points/" + pointName(0)));
        QVERIFY(!QFile::exists(outside));
        QVERIFY2(!QFile::exists(marker), "a script the folder brought ran");

        // An interpreter outside the folder, named by the user, stays: the
        // resumed grid is the one written.
        QVERIFY(writeFile(gridDir + "/slurm-array.json", gridArray));
        const QByteArray before = contents(gridDir + "/stepscope.sbatch");
        QVERIFY2(before.contains("--python /usr/bin/python3") &&
                     before.contains("--py-path " + temp.path().toUtf8()),
                 before.constData());
        const Outcome resumed = runCli({"attention", "--slurm", gridDir, "--resume"});
        QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err));
        QCOMPARE(contents(gridDir + "/stepscope.sbatch"), before);
    }

    // Issue 45: a mutated slurm-array.json gave the parser's own words
    // ("type must be number, but is string") and no field. Each message
    // names the file and the field, in ours.
    void mutatedArrayFileIsNamedByFieldInOurWords() {
        QTemporaryDir temp;
        const QString dir = temp.filePath("array");
        QCOMPARE(runCli(kSweep + QStringList{"--slurm", dir}).exitCode, 0);
        const QByteArray original = contents(dir + "/slurm-array.json");
        const struct {
            QByteArray from;  // replaced once in the original
            QByteArray to;
            const char* field;
        } cases[] = {
            {"\"version\": 1", "\"version\": \"\"", "version"},
            {"\"version\": 1", "\"version\": 1.5", "version"},
            {"\"version\": 1", "\"version\": 1e999", "out of range"},
            {"\"version\": 1", "\"version\": null", "version"},
            {"\"format\": \"stepscope-slurm-array\"", "\"format\": 7", "format"},
            {"\"kind\": \"sweep\"", "\"kind\": []", "kind"},
            {"\"tasks\": [", "\"tasks\": [5, ", "tasks[0]"},
            {"\"arguments\": [", "\"arguments\": [1, ", "tasks[0].arguments[0]"},
            {"\"environment\": []", "\"environment\": {}", "environment"},
            {"\"nodes\": 1", "\"nodes\": 0", "nodes: must be from 1 to 1024, got 0"},
            {"\"nodes\": 1", "\"nodes\": 99999999999", "nodes: must be from 1 to 1024"},
            {"\"nodes\": 1", "\"nodes\": \"2\"", "nodes must be an integer"},
            {"{", "[", "not valid JSON"},
            {"{", "", "not valid JSON"},
        };
        for (const auto& mutation : cases) {
            QByteArray mutated = original;
            const qsizetype at = mutated.indexOf(mutation.from);
            QVERIFY2(at >= 0, mutation.from.constData());
            mutated.replace(at, mutation.from.size(), mutation.to);
            QVERIFY(writeFile(dir + "/slurm-array.json", mutated));
            for (const QStringList& command : {QStringList{"sweep", "--collect", dir},
                                               QStringList{"sweep", "--slurm", dir, "--resume"}}) {
                const Outcome refused = runCli(command);
                QVERIFY2(refused.exitCode == 2 && refused.err.contains("slurm-array.json") &&
                             refused.err.contains(mutation.field) &&
                             !refused.err.contains("json.exception") &&
                             !refused.err.contains("type must be"),
                         qPrintable(mutation.to + ": " + refused.err));
            }
        }
        QVERIFY(writeFile(dir + "/slurm-array.json", original));
        QCOMPARE(runCli({"sweep", "--slurm", dir, "--resume"}).exitCode, 0);
    }

    // The quoting every argument and exported value goes through, checked
    // against bash itself.
    void shellQuoteGivesBackEachStringThroughBash() {
        const std::string hostile[] = {"",        "plain",     "two words", "it's",  "'",
                                       "''\\'",   "$(id)",     "`id`",      "a\nb",  "a;b|c&d",
                                       "*?[]{}~", "\"$HOME\"", "tab\there", "#hash", "--x=y"};
        for (const std::string& text : hostile) {
            const Outcome echoed = runProgram(
                "bash", {"-c", QString::fromStdString("printf '%s' " + shellQuote(text))});
            QCOMPARE(echoed.out, QString::fromStdString(text));
        }
        QVERIFY(isPlainName("nano_ctx8_forward_fp32.json"));
        for (const char* notPlain : {"", "a b", "a;b", "a\nb", "a/b", "$x"}) {
            QVERIFY2(!isPlainName(notPlain), notPlain);
        }
    }

    void directoryHoldingSomethingElseIsRefusedUntouched() {
        QTemporaryDir temp;
        const QString dir = temp.filePath("array");
        QCOMPARE(runCli(kSweep + QStringList{"--slurm", dir}).exitCode, 0);
        const QByteArray array = contents(dir + "/slurm-array.json");
        const QByteArray script = contents(dir + "/stepscope.sbatch");

        QStringList other = kSweep;
        other[other.indexOf("8,16")] = "8,32";
        const Outcome refused = runCli(other + QStringList{"--slurm", dir});
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains("--slurm") && refused.err.contains("different sweep"),
                 qPrintable(refused.err));
        QCOMPARE(contents(dir + "/slurm-array.json"), array);
        QCOMPARE(contents(dir + "/stepscope.sbatch"), script);
        QCOMPARE(QDir(dir + "/inputs").entryList(QDir::Files).size(), 4);  // the four configs

        const QString foreign = temp.filePath("foreign");
        QVERIFY(QDir().mkpath(foreign));
        {
            QFile file(foreign + "/notes.txt");
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("mine");
        }
        const Outcome notEmpty = runCli(kSweep + QStringList{"--slurm", foreign});
        QCOMPARE(notEmpty.exitCode, 2);
        QVERIFY2(notEmpty.err.contains("not empty"), qPrintable(notEmpty.err));
        QCOMPARE(QDir(foreign).entryList(QDir::NoDotAndDotDot | QDir::AllEntries),
                 QStringList{"notes.txt"});

        const Outcome notASweep = runCli({"sweep", "--collect", foreign});
        QCOMPARE(notASweep.exitCode, 2);
        QVERIFY2(notASweep.err.contains("holds no slurm-array.json"), qPrintable(notASweep.err));
    }

    void unwritableDirectoryAndBadOptionsAreNamed() {
        QTemporaryDir temp;
        {
            QFile file(temp.filePath("file"));
            QVERIFY(file.open(QIODevice::WriteOnly));
        }
        // Under a file: no directory can be made there, even by root.
        const Outcome unwritable =
            runCli(kSweep + QStringList{"--slurm", temp.filePath("file/sub")});
        QCOMPARE(unwritable.exitCode, 2);
        QVERIFY2(unwritable.err.contains("--slurm: cannot write"), qPrintable(unwritable.err));

        const QString dir = temp.filePath("array");
        const struct {
            QStringList flags;
            const char* message;
        } bad[] = {
            {{"--cpus-per-task", "-1"}, "--cpus-per-task: must be at least 1"},
            {{"--sbatch-arg=--array=0-9"}, "--sbatch-arg: '--array=0-9' is set by StepScope"},
            {{"--gpus-per-node", "-1"}, "--gpus-per-node: must be at least 1"},
            {{"--sbatch-arg=-N2"},
             "--sbatch-arg: '-N2' is set by StepScope (from the points' --nodes"},
            {{"--sbatch-arg=--ntasks-per-node=4"}, "'--ntasks-per-node=4' is set by StepScope"},
            {{"--sbatch-arg=account"}, "--sbatch-arg: 'account' is not an sbatch option"},
        };
        for (const auto& [flags, message] : bad) {
            const Outcome refused = runCli(kSweep + QStringList{"--slurm", dir} + flags);
            QCOMPARE(refused.exitCode, 2);
            QVERIFY2(refused.err.contains(message), qPrintable(refused.err));
            QVERIFY(!QFileInfo::exists(dir));  // nothing half-written
        }
        const Outcome withoutSlurm = runCli(kSweep + QStringList{"--out", dir, "--partition", "x"});
        QCOMPARE(withoutSlurm.exitCode, 2);
        QVERIFY2(withoutSlurm.err.contains("--partition requires --slurm"),
                 qPrintable(withoutSlurm.err));
        const Outcome collectWithFlags = runCli({"sweep", "--collect", dir, "--ctx", "8"});
        QCOMPARE(collectWithFlags.exitCode, 2);
        QVERIFY2(collectWithFlags.err.contains("--ctx cannot be given with --collect"),
                 qPrintable(collectWithFlags.err));
        const Outcome nowhere = runCli(kSweep);
        QCOMPARE(nowhere.exitCode, 2);
        QVERIFY2(nowhere.err.contains("--out DIR"), qPrintable(nowhere.err));
    }

    void submissionReportsSbatchsAnswer() {
        QTemporaryDir temp;
        const QString dir = temp.filePath("array");
        const QString script = QDir(dir).absoluteFilePath("stepscope.sbatch");

        QTemporaryDir empty;  // a PATH without sbatch
        const Outcome missing =
            runCli(kSweep + QStringList{"--slurm", dir, "--submit"}, {"PATH=" + empty.path()});
        QCOMPARE(missing.exitCode, 3);
        QVERIFY2(missing.err.contains("sbatch cannot be run") && missing.err.contains(script),
                 qPrintable(missing.err));
        QVERIFY(QFileInfo::exists(script));  // written, to submit by hand

        QTemporaryDir rejecting;
        const Outcome rejected = runCli(
            kSweep + QStringList{"--slurm", dir, "--submit"},
            {"PATH=" + fakeSbatch(rejecting, "sbatch: error: invalid partition specified: x", 1)});
        QCOMPARE(rejected.exitCode, 3);
        QVERIFY2(rejected.err.contains("sbatch refused the job (exit status 1)") &&
                     rejected.err.contains("invalid partition specified: x"),
                 qPrintable(rejected.err));

        QTemporaryDir accepting;
        const Outcome submitted = runCli(kSweep + QStringList{"--slurm", dir, "--submit"},
                                         {"PATH=" + fakeSbatch(accepting, "4242;cluster", 0)});
        QVERIFY2(submitted.exitCode == 0, qPrintable(submitted.err));
        QCOMPARE(submitted.out.trimmed(), QString("4242"));
        QCOMPARE(QString::fromUtf8(contents(accepting.filePath("arguments"))).trimmed(),
                 "--parsable " + script);
    }

    // The proof: a real single-node cluster runs the array; --collect gives
    // the table the same sweep run here gives, point for point.
    void realClusterRunsTheArrayAsALocalSweep() {
        QTemporaryDir temp;
        TestCluster cluster(temp.filePath("cluster"));
        if (!cluster.running()) {
            QSKIP(
                qPrintable("no single-node Slurm cluster here (scripts/slurm-test-cluster.sh "
                           "start: exit " +
                           QString::number(cluster.start().exitCode) +
                           "): " + cluster.start().err.left(2000)));
        }
        const QStringList slurm = {"SLURM_CONF=" + cluster.conf()};
        const QString dir = temp.filePath("sweep array");  // sbatch reads the quoted log path
        const Outcome submitted = runCli(kSweep + QStringList{"--slurm", dir, "--submit"}, slurm);
        QVERIFY2(submitted.exitCode == 0, qPrintable(submitted.err));
        const QString jobId = submitted.out.trimmed();
        QVERIFY2(QRegularExpression(R"(^\d+$)").match(jobId).hasMatch(), qPrintable(jobId));

        QVERIFY(waitForArray(jobId, slurm));

        const Outcome collected = runCli({"sweep", "--collect", dir});
        QVERIFY2(collected.exitCode == 0, qPrintable(collected.err + collected.out));
        const QString local = temp.filePath("local");
        const Outcome here = runCli(kSweep + QStringList{"--out", local});
        QVERIFY2(here.exitCode == 0, qPrintable(here.err));

        const QList<QStringList> cluster_rows = csvRows(dir), local_rows = csvRows(local);
        QCOMPARE(cluster_rows.size(), local_rows.size());
        QCOMPARE(cluster_rows[0], local_rows[0]);  // the same columns
        const QStringList configColumns = {
            "model",     "parameters", "ctx",    "batch", "mode", "precision", "device",
            "attention", "engine",     "warmup", "steps", "seed", "status"};
        for (qsizetype r = 1; r < local_rows.size(); ++r) {
            for (const QString& column : configColumns) {
                const qsizetype c = local_rows[0].indexOf(column);
                QVERIFY2(c >= 0, qPrintable(column));
                QCOMPARE(cluster_rows[r][c], local_rows[r][c]);
            }
        }
        // The same Markdown table but for the times: model, ctx, mode, precision, engine, status.
        const auto shape = [](const QByteArray& markdown) {
            QStringList lines = QString::fromUtf8(markdown).split('\n');
            for (QString& line : lines) {
                line = line.section('|', 0, 6);  // model … engine, status
            }
            return lines;
        };
        QCOMPARE(shape(contents(dir + "/sweep.md")), shape(contents(local + "/sweep.md")));

        for (int i = 0; i < 4; ++i) {
            const RunResult point = readRunFile((dir + "/points/" + pointName(i)).toStdString());
            QCOMPARE(QString::fromStdString(point.environment.slurmArrayJobId), jobId);
            QCOMPARE(point.environment.slurmArrayTaskId, std::to_string(i));
            QVERIFY2(isTestNode(point.environment.slurmNode), point.environment.slurmNode.c_str());
        }

        // A two-point attention grid, into a directory whose name has a space.
        const QStringList grid = {"attention", "--backends", "naive",   "--d", "16",
                                  "--seq",     "32,64",      "--batch", "1",   "--warmup",
                                  "0",         "--repeats",  "1"};
        const QString attentionDir = temp.filePath("attention array");
        const Outcome attention =
            runCli(grid + QStringList{"--slurm", attentionDir, "--submit"}, slurm);
        QVERIFY2(attention.exitCode == 0, qPrintable(attention.err));
        QVERIFY(waitForArray(attention.out.trimmed(), slurm));
        const Outcome gridCollected = runCli({"attention", "--collect", attentionDir});
        QVERIFY2(gridCollected.exitCode == 0, qPrintable(gridCollected.err + gridCollected.out));
        QCOMPARE(QDir(attentionDir + "/logs").entryList(QDir::Files).size(), 2);
        const QString attentionLocal = temp.filePath("attention local");
        QCOMPARE(runCli(grid + QStringList{"--out", attentionLocal}).exitCode, 0);
        QCOMPARE(attentionShape(attentionDir), attentionShape(attentionLocal));
        for (const char* name : {"naive_d16_seq32_fp32", "naive_d16_seq64_fp32"}) {
            const AttentionFile point =
                readAttentionFile((attentionDir + "/points/" + name + ".json").toStdString());
            QVERIFY2(isTestNode(point.environment.slurmNode), point.environment.slurmNode.c_str());
        }

        // Two points through the recorder, found on the PATH sbatch passes on
        // to the tasks (no C++ build on the node).
        QTemporaryDir bin;
        QVERIFY(!recorderIn(bin).isEmpty());
        const QStringList recorderSweep = {"sweep",    "--model",  "nano",  "--vocab", "97",
                                           "--batch",  "2",        "--ctx", "8,16",    "--mode",
                                           "forward",  "--warmup", "0",     "--steps", "1",
                                           "--engine", "pytorch"};
        const QString recorderDir = temp.filePath("recorder array");
        const Outcome recorder = runCli(
            recorderSweep + QStringList{"--slurm", recorderDir, "--runner", "recorder", "--submit"},
            slurm + QStringList{"PATH=" + bin.path() + ":" + qEnvironmentVariable("PATH")});
        QVERIFY2(recorder.exitCode == 0, qPrintable(recorder.err));
        const QString recorderJob = recorder.out.trimmed();
        QVERIFY(waitForArray(recorderJob, slurm));
        const Outcome recorderCollected = runCli({"sweep", "--collect", recorderDir});
        QVERIFY2(recorderCollected.exitCode == 0,
                 qPrintable(recorderCollected.err + recorderCollected.out));
        const SweepCollection points = readSlurmSweep(recorderDir.toStdString(), "--collect");
        QCOMPARE(points.results.size(), size_t(2));
        for (size_t i = 0; i < points.results.size(); ++i) {
            const RunResult& point = points.results[i];
            QCOMPARE(toString(point.status), std::string("ok"));
            QCOMPARE(toString(point.config.engine), std::string("pytorch"));
            QCOMPARE(point.config.contextLength, int64_t(i == 0 ? 8 : 16));
            QVERIFY(!point.environment.python.empty());
            QCOMPARE(QString::fromStdString(point.environment.slurmArrayJobId), recorderJob);
            QCOMPARE(point.environment.slurmArrayTaskId, std::to_string(i));
            QVERIFY2(isTestNode(point.environment.slurmNode), point.environment.slurmNode.c_str());
        }

        // A distributed point over both nodes, by each runner: srun starts a
        // torchrun a node, the rendezvous on the allocation's first.
        for (const QString runner : {"cli", "recorder"}) {
            const QString nodesDir = temp.filePath("nodes array " + runner);
            const QStringList flags = {"sweep",    "--engine",  "pytorch", "--model", "nano",
                                       "--vocab",  "97",        "--ctx",   "16",      "--batch",
                                       "4",        "--warmup",  "1",       "--steps", "1",
                                       "--ranks",  "2",         "--nodes", "2",       "--parallel",
                                       "overlap",  "--threads", "1",       "--slurm", nodesDir,
                                       "--runner", runner,      "--submit"};
            const Outcome nodes = runCli(flags, slurm + QStringList{"PATH=" + bin.path() + ":" +
                                                                    qEnvironmentVariable("PATH")});
            QVERIFY2(nodes.exitCode == 0, qPrintable(nodes.err));
            QVERIFY(contents(nodesDir + "/stepscope.sbatch").contains("#SBATCH --nodes=2\n"));
            QVERIFY(waitForArray(nodes.out.trimmed(), slurm));
            const SweepCollection ran = readSlurmSweep(nodesDir.toStdString(), "--collect");
            QCOMPARE(ran.results.size(), size_t(1));
            const RunResult& point = ran.results.front();
            QVERIFY2(point.status == RunStatus::Ok,
                     qPrintable(runner + ": " + QString::fromStdString(point.message)));
            QCOMPARE(point.config.nodes, 2);
            QVERIFY(point.distributed && point.distributed->ranks.size() == 2);
            QCOMPARE(point.distributed->ranks[0].host, std::string("stepscope-node1"));
            QCOMPARE(point.distributed->ranks[1].host, std::string("stepscope-node2"));
            QCOMPARE(point.environment.slurmNode, std::string("stepscope-node1"));
            QVERIFY(!point.distributed->collectives.empty());
        }

        // The collective benchmark as a job: 2 ranks over both nodes.
        const QString collectiveDir = temp.filePath("collective array");
        const Outcome collective =
            runCli({"collective", "--op", "all_reduce", "--sizes", "4K", "--ranks", "2", "--nodes",
                    "2", "--warmup", "0", "--repeats", "2", "--slurm", collectiveDir, "--submit"},
                   slurm);
        QVERIFY2(collective.exitCode == 0, qPrintable(collective.err));
        QVERIFY(waitForArray(collective.out.trimmed(), slurm));
        const Outcome rows = runCli({"collective", "--collect", collectiveDir});
        QVERIFY2(rows.exitCode == 0, qPrintable(rows.err + rows.out));
        const CollectiveFile measured =
            readCollectiveFile((collectiveDir + "/collective.json").toStdString());
        QCOMPARE(measured.rows.size(), size_t(1));
        QCOMPARE(measured.rows.front().status, std::string("ok"));
        QCOMPARE(measured.rows.front().ranks, 2);
        QVERIFY(measured.rows.front().timeUs > 0);
    }
};

QTEST_GUILESS_MAIN(TestSlurm)
#include "tst_slurm.moc"
