// Issue 45, the command line's half: outputs that are not regular files
// (devices, FIFOs, sockets, folders; a symbolic link is written through),
// inputs that never end, signals outside the run loop, a full stdout, and a
// refused run beside a good run file. Each case builds what it attacks
// with: a FIFO, a device node (mknod, as root), /dev/full.
#include <QtTest/QtTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>

#include "results/run_file.h"
#include "util/atomic_file.h"
#include "util/temporary_directory.h"

using namespace stepscope;

namespace {

namespace fs = std::filesystem;

struct Outcome {
    int exitCode = -1;  // -1: did not finish in time, or ended by a signal
    bool signalled = false;
    QByteArray out;
    QString err;
    double seconds = 0;
};

// stepscope-cli with `arguments`, stdout to `stdoutFile` where given;
// killed after `timeoutMs`, which a blocked reader would reach.
Outcome runCli(const QStringList& arguments, int timeoutMs = 120000,
               const QString& stdoutFile = {}) {
    QProcess process;
    if (!stdoutFile.isEmpty()) {
        process.setStandardOutputFile(stdoutFile);
    }
    const auto start = std::chrono::steady_clock::now();
    process.start(QStringLiteral(STEPSCOPE_CLI), arguments);
    Outcome outcome;
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        outcome.err = "did not finish in " + QString::number(timeoutMs) + " ms";
        return outcome;
    }
    outcome.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    outcome.signalled = process.exitStatus() != QProcess::NormalExit;
    outcome.exitCode = outcome.signalled ? -1 : process.exitCode();
    outcome.out = process.readAllStandardOutput();
    outcome.err += QString::fromUtf8(process.readAllStandardError());
    return outcome;
}

const QStringList kTinyRun = {"run",     "--model", "nano",     "--vocab", "97",      "--ctx", "16",
                              "--batch", "2",       "--warmup", "0",       "--steps", "1"};

QByteArray contents(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

fs::file_type typeOf(const QString& path) {
    return fs::symlink_status(path.toStdString()).type();
}

// A Unix socket bound at `path`; its descriptor (closed by the caller).
int bindSocket(const QString& path) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.toUtf8().constData(), sizeof(address.sun_path) - 1);
    return ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 ? fd : -1;
}

}  // namespace

class TestHostileCli : public QObject {
    Q_OBJECT

    QTemporaryDir temp_;
    QString runFile_;  // a good run file, made once

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(temp_.isValid());
        runFile_ = temp_.filePath("good.json");
        // With --ops and --memory: export and memory have what they show.
        const Outcome made = runCli(kTinyRun + QStringList{"--ops", "--memory", "--out", runFile_});
        QVERIFY2(made.exitCode == 0, qPrintable(made.err));
    }

    // The atomic write itself, under every writer: a rename over a device
    // node or a FIFO replaced it with a regular file; a symbolic link
    // became a plain file.
    void atomicWriteRefusesWhatIsNotAFileAndWritesThroughLinks() {
        QTemporaryDir temp;
        const QString fifo = temp.filePath("fifo");
        QCOMPARE(::mkfifo(fifo.toUtf8().constData(), 0600), 0);
        QString device;
        if (::geteuid() == 0) {  // a node of /dev/null's numbers, made here
            device = temp.filePath("null-node");
            QCOMPARE(::mknod(device.toUtf8().constData(), S_IFCHR | 0666, makedev(1, 3)), 0);
        }
        const QString socketPath = temp.filePath("socket");
        const int socketFd = bindSocket(socketPath);
        QVERIFY(socketFd >= 0);
        const struct {
            QString path;
            const char* what;
            fs::file_type type;
        } refused[] = {
            {fifo, "a FIFO", fs::file_type::fifo},
            {device, "a character device", fs::file_type::character},
            {"/dev/full", "a character device", fs::file_type::character},
            {socketPath, "a socket", fs::file_type::socket},
            {temp.path(), "a folder", fs::file_type::directory},
        };
        for (const auto& target : refused) {
            if (target.path.isEmpty()) {
                continue;
            }
            const std::string path = target.path.toStdString();
            try {
                writeFileAtomically(path, "written");
                QFAIL(qPrintable("written over " + target.path));
            } catch (const OutputPathError& error) {
                QVERIFY2(QString(error.what()).contains(target.path) &&
                             QString(error.what()).contains(target.what),
                         error.what());
            }
            QVERIFY(whyCannotWriteFile(path).has_value());
            QCOMPARE(typeOf(target.path), target.type);
        }
        ::close(socketFd);

        // Through a chain of links, relative and absolute, to the file at
        // its end: the links stay, the temporary file was beside the target.
        QVERIFY(QDir(temp.path()).mkpath("real"));
        const QString target = temp.filePath("real/target.json");
        QVERIFY(QFile::link("real/target.json", temp.filePath("relative")));
        QVERIFY(QFile::link(temp.filePath("relative"), temp.filePath("link")));
        writeFileAtomically(temp.filePath("link").toStdString(), "first");
        writeFileAtomically(temp.filePath("link").toStdString(), "second");
        QCOMPARE(typeOf(temp.filePath("link")), fs::file_type::symlink);
        QCOMPARE(typeOf(temp.filePath("relative")), fs::file_type::symlink);
        QCOMPARE(contents(target), QByteArray("second"));
        QCOMPARE(QDir(temp.filePath("real")).entryList(QDir::Files | QDir::Hidden),
                 QStringList{"target.json"});

        // A link to a device is the device; a circle of links is no file.
        QVERIFY(QFile::link("/dev/full", temp.filePath("to-full")));
        QVERIFY(QFile::link(temp.filePath("b"), temp.filePath("a")));
        QVERIFY(QFile::link(temp.filePath("a"), temp.filePath("b")));
        for (const char* name : {"to-full", "a"}) {
            QVERIFY_THROWS_EXCEPTION(OutputPathError,
                                     writeFileAtomically(temp.filePath(name).toStdString(), "x"));
        }
        QCOMPARE(typeOf("/dev/full"), fs::file_type::character);
    }

    // --out, --out-file, --chrome-trace and --memviz: exit 2 naming the path
    // and what it is, before any work; the node is still what it was.
    void outputsOverDevicesAndFifosAreRefused() {
        QTemporaryDir temp;
        const QString fifo = temp.filePath("fifo");
        QCOMPARE(::mkfifo(fifo.toUtf8().constData(), 0600), 0);
        QString device = "/dev/full";
        if (::geteuid() == 0) {
            device = temp.filePath("null-node");
            QCOMPARE(::mknod(device.toUtf8().constData(), S_IFCHR | 0666, makedev(1, 3)), 0);
        }
        const struct {
            QStringList arguments;
            QString path;
            const char* what;
        } cases[] = {
            {kTinyRun + QStringList{"--out", device}, device, "character device"},
            {kTinyRun + QStringList{"--out", "/dev/full"}, "/dev/full", "character device"},
            {kTinyRun + QStringList{"--out", fifo}, fifo, "FIFO"},
            {kTinyRun + QStringList{"--out", temp.path()}, temp.path(), "folder"},
            {{"export", runFile_, "--chrome-trace", device}, device, "character device"},
            {{"export", runFile_, "--memviz", fifo}, fifo, "FIFO"},
            {{"attention", "--backends", "naive", "--d", "16", "--seq", "32", "--batch", "1",
              "--warmup", "0", "--repeats", "1", "--out-file", fifo},
             fifo,
             "FIFO"},
        };
        for (const auto& test : cases) {
            const Outcome refused = runCli(test.arguments, 60000);
            QVERIFY2(refused.exitCode == 2 && refused.err.contains(test.path) &&
                         refused.err.contains(test.what),
                     qPrintable(test.arguments.join(' ') + ": " + refused.err));
        }
        QCOMPARE(typeOf(fifo), fs::file_type::fifo);
        QCOMPARE(typeOf(device), fs::file_type::character);
        QCOMPARE(typeOf("/dev/full"), fs::file_type::character);

        // A link given as --out: the run file lands where it leads.
        QVERIFY(QDir(temp.path()).mkpath("kept"));
        const QString link = temp.filePath("latest.json");
        QVERIFY(QFile::link(temp.filePath("kept/run.json"), link));
        const Outcome run = runCli(kTinyRun + QStringList{"--out", link});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QCOMPARE(typeOf(link), fs::file_type::symlink);
        QVERIFY(readRunFile(temp.filePath("kept/run.json").toStdString()).status == RunStatus::Ok);
        const QString traceLink = temp.filePath("trace.json");
        QVERIFY(QFile::link(temp.filePath("kept/trace.json"), traceLink));
        const Outcome exported = runCli({"export", runFile_, "--chrome-trace", traceLink});
        QVERIFY2(exported.exitCode == 0, qPrintable(exported.err));
        QCOMPARE(typeOf(traceLink), fs::file_type::symlink);
        QVERIFY(QJsonDocument::fromJson(contents(temp.filePath("kept/trace.json"))).isObject());
    }

    // A FIFO blocked show, memory and breakdown forever; a device never ends.
    void inputsThatAreNotRegularFilesAreRefused() {
        QTemporaryDir temp;
        const QString fifo = temp.filePath("fifo");
        QCOMPARE(::mkfifo(fifo.toUtf8().constData(), 0600), 0);
        const QList<QStringList> commands = {
            {"show", fifo},
            {"show", fifo, "--json"},
            {"memory", fifo},
            {"breakdown", fifo},
            {"export", fifo, "--chrome-trace", temp.filePath("t.json")},
            {"run", "--config", fifo},
            {"show", "/dev/zero"},
            {"memory", "/dev/zero"},
        };
        for (const QStringList& command : commands) {
            const Outcome refused = runCli(command, 20000);
            const QString named = command.contains(fifo) ? fifo : QString("/dev/zero");
            QVERIFY2(refused.exitCode == 2 && refused.err.contains(named) &&
                         (refused.err.contains("FIFO") || refused.err.contains("device")),
                     qPrintable(command.join(' ') + ": " + refused.err));
        }
    }

    // Integer flags beyond their range are refused before CLI11 clamps them.
    void integerFlagsOutOfRangeAreRefused() {
        const QList<QStringList> commands = {
            {"accumulate", "--count", "99999999999999999999"},
            {"accumulate", "--count", "0"},
            {"accumulate", "--count", "-5"},
            {"attention", "--batch", "99999999999999999999", "--seq", "32", "--d", "16"},
            {"attention", "--warmup", "", "--seq", "32", "--d", "16"},
            {"attention", "--repeats", "-1", "--seq", "32", "--d", "16"},
            {"memory", runFile_, "--top", "99999999999999999999"},
            {"run", "--seed", "-1"},
            {"run", "--seed", ""},
            {"run", "--warmup", ""},
            {"sweep", "--warmup", "", "--out", temp_.filePath("sweep")},
        };
        for (const QStringList& command : commands) {
            const Outcome refused = runCli(command, 20000);
            QVERIFY2(refused.exitCode == 2 && !refused.err.isEmpty(),
                     qPrintable(command.join(' ') + ": " + QString::number(refused.exitCode) + " " +
                                refused.err));
        }
    }

    // SIGINT and SIGTERM were caught and ignored outside the run loop:
    // a long command went on. Now it ends by the signal, at once (within a
    // second on an idle machine: the figure is printed, not asserted, as a
    // loaded CI machine may take longer to schedule it).
    void signalsEndACommandAtOnce() {
        for (const int signal : {SIGINT, SIGTERM}) {
            QProcess process;
            process.start(QStringLiteral(STEPSCOPE_CLI),
                          {"accumulate", "--count", "1000000000", "--json"});
            QVERIFY(process.waitForStarted());
            QTest::qWait(1500);  // past the start: the handlers are set
            QCOMPARE(process.state(), QProcess::Running);
            const auto sent = std::chrono::steady_clock::now();
            QCOMPARE(::kill(pid_t(process.processId()), signal), 0);
            QVERIFY2(process.waitForFinished(5000), "still running 5 s after the signal");
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
            qInfo("signal %d: ended %.3f s after it", signal, seconds);
            QCOMPARE(process.exitStatus(), QProcess::CrashExit);  // by the signal, not by finishing
        }
    }

    // A full disk gave an empty file and exit 0.
    void writeErrorsOnStdoutExitOne() {
        const QList<QStringList> commands = {
            {"show", runFile_, "--json"},   {"show", runFile_}, {"breakdown", runFile_},
            {"memory", runFile_, "--json"}, {"params"},
        };
        for (const QStringList& command : commands) {
            const Outcome full = runCli(command, 60000, "/dev/full");
            QVERIFY2(full.exitCode == 1 && full.err.contains("stdout") &&
                         full.err.contains(QString::fromUtf8(std::strerror(ENOSPC))),
                     qPrintable(command.join(' ') + ": " + QString::number(full.exitCode) + " " +
                                full.err));
            const Outcome fine = runCli(command, 60000);
            QVERIFY2(fine.exitCode == 0 && !fine.out.isEmpty(), qPrintable(fine.err));
        }
    }

    // A refused run replaced a good run file; --weights that is not there
    // was "run failed" (3), not bad input.
    void refusedRunKeepsTheGoodFileAndWritesBesideIt() {
        QTemporaryDir temp;
        const QString out = temp.filePath("result.json");
        QVERIFY(QFile::copy(runFile_, out));
        const QByteArray good = contents(out);
        // 2.7B train-step at batch 64 on CPU needs far more than any test machine has.
        const Outcome refused =
            runCli({"run", "--model", "2.7B", "--ctx", "1024", "--batch", "64", "--out", out});
        QCOMPARE(refused.exitCode, 3);
        QCOMPARE(contents(out), good);
        const QString beside = temp.filePath("result.failed.json");
        QVERIFY2(refused.err.contains(beside) && refused.err.contains("kept"),
                 qPrintable(refused.err));
        QVERIFY(readRunFile(beside.toStdString()).status == RunStatus::Refused);
        // Where no good run is there, the failed record is the file.
        const QString fresh = temp.filePath("fresh.json");
        QCOMPARE(
            runCli({"run", "--model", "2.7B", "--ctx", "1024", "--batch", "64", "--out", fresh})
                .exitCode,
            3);
        QVERIFY(readRunFile(fresh.toStdString()).status == RunStatus::Refused);

        const Outcome weights = runCli({"run", "--model", "nano", "--vocab", "97", "--ctx", "16",
                                        "--weights", temp.filePath("nonexistent")});
        QVERIFY2(weights.exitCode == 2 && weights.err.contains("nonexistent"),
                 qPrintable(QString::number(weights.exitCode) + " " + weights.err));
    }

    // sweep --resume reused a point file of eleven steps all numbered 0
    // for --steps 1: the steps must be the config's.
    void sweepResumeRunsAgainAPointWhoseStepsAreNotTheConfigs() {
        QTemporaryDir temp;
        const QStringList sweep = {"sweep", "--model", "nano",    "--vocab", "97",
                                   "--ctx", "8",       "--batch", "2",       "--warmup",
                                   "0",     "--steps", "1",       "--out",   temp.path()};
        const Outcome first = runCli(sweep);
        QVERIFY2(first.exitCode == 0, qPrintable(first.err));
        const QStringList points = QDir(temp.path()).entryList({"nano_*.json"}, QDir::Files);
        QCOMPARE(points.size(), 1);
        const QString point = temp.filePath(points.front());
        QJsonObject run = QJsonDocument::fromJson(contents(point)).object();
        QJsonArray steps = run["steps"].toArray();
        QCOMPARE(steps.size(), 1);
        for (int i = 0; i < 10; ++i) {
            steps.append(steps[0]);  // eleven steps, all numbered 0
        }
        run["steps"] = steps;
        QFile file(point);
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(QJsonDocument(run).toJson());
        file.close();
        const Outcome resumed = runCli(sweep + QStringList{"--resume"});
        QVERIFY2(resumed.exitCode == 0 && resumed.err.contains("not reusing") &&
                     resumed.err.contains("steps"),
                 qPrintable(resumed.err));
        QCOMPARE(readRunFile(point.toStdString()).steps.size(), size_t(1));
        // A file of its own steps is reused as before.
        const Outcome again = runCli(sweep + QStringList{"--resume"});
        QVERIFY2(again.exitCode == 0 && !again.err.contains("not reusing"), qPrintable(again.err));
    }

    // A snapshot whose times are NaN or infinite printed "at nan ms".
    void snapshotWithoutFiniteTimesSaysSo() {
        QTemporaryDir temp;
        const QString snapshot = temp.filePath("times.pickle");
        QProcess python;
        python.start(QStringLiteral(STEPSCOPE_PYTHON),
                     {"-c",
                      "import pickle, sys\n"
                      "def ev(a, addr, t): return {'action': a, 'addr': addr, 'size': 512, "
                      "'stream': 0, 'time_us': t, 'frames': []}\n"
                      "snap = {'segments': [], 'device_traces': [[ev('alloc', 4096, "
                      "float('nan')), ev('alloc', 8192, float('inf')), ev('free_completed', 4096, "
                      "float('-inf'))]]}\n"
                      "pickle.dump(snap, open(sys.argv[1], 'wb'), protocol=2)\n",
                      snapshot});
        QVERIFY(python.waitForFinished(60000) && python.exitCode() == 0);
        const Outcome shown = runCli({"memory", snapshot});
        QVERIFY2(!shown.out.contains("nan ms") && !shown.out.contains("inf ms") &&
                     !shown.out.contains("nan\n"),
                 shown.out.constData());
        QVERIFY2(shown.exitCode == 0 || shown.exitCode == 2, qPrintable(shown.err));
    }

    // sweep --isolate killed with SIGKILL left /tmp/stepscope-run-*: the
    // next one made removes those whose maker is gone, never a live one.
    void staleTemporaryDirectoriesAreRemovedAtTheNextStart() {
        TemporaryDirectory live("stepscope-test45");
        int channel[2];
        QCOMPARE(::pipe(channel), 0);
        const pid_t child = ::fork();
        if (child == 0) {
            // Made, then the process ends without its destructor, as SIGKILL does.
            auto* dead = new TemporaryDirectory("stepscope-test45");
            const std::string path = dead->path().string();
            (void)!::write(channel[1], path.data(), path.size());
            ::_exit(0);
        }
        ::close(channel[1]);
        char buffer[4096] = {};
        const ssize_t read = ::read(channel[0], buffer, sizeof(buffer) - 1);
        ::close(channel[0]);
        ::waitpid(child, nullptr, 0);
        QVERIFY(read > 0);
        const fs::path dead(std::string(buffer, size_t(read)));
        QVERIFY(fs::is_directory(dead));
        {
            TemporaryDirectory next("stepscope-test45");
            QVERIFY2(!fs::exists(dead), dead.c_str());
            QVERIFY(fs::is_directory(live.path()));
        }
        QVERIFY(fs::is_directory(live.path()));
    }
};

QTEST_GUILESS_MAIN(TestHostileCli)
#include "tst_hostile_cli.moc"
