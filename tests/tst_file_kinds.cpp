// core/files: the one table of what StepScope opens, on real files of each
// kind (the examples, the trace and torch.save fixtures) and folders built
// here as the CLI writes them; a FIFO is refused without blocking.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include <set>

#include "files/file_kinds.h"
#include "test_support.h"

using namespace stepscope;

namespace {

void writeFile(const QString& path, const QByteArray& bytes) {
    QDir().mkpath(QFileInfo(path).path());
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(bytes);
}

FileKind kindOf(const QString& path, std::string* error = nullptr) {
    return detectFileKind(path.toStdString(), error);
}

QString nameOf(FileKind kind) {
    return QString::fromUtf8(fileKindInfo(kind).name.data(),
                             static_cast<qsizetype>(fileKindInfo(kind).name.size()));
}

}  // namespace

class TestFileKinds : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;

private Q_SLOTS:
    void theTableHoldsEveryKindOnce() {
        std::set<FileKind> seen;
        for (const FileKindInfo& info : fileKinds()) {
            QVERIFY2(seen.insert(info.kind).second, qPrintable(nameOf(info.kind)));
            QCOMPARE(fileKindInfo(info.kind).name, info.name);
            QVERIFY(!info.whatMakesIt.empty());
            QCOMPARE(info.patterns.empty(), info.folder);  // files have dialog filters
        }
        QCOMPARE(seen.size(), static_cast<size_t>(FileKind::Unknown));
        QCOMPARE(fileKindInfo(FileKind::Unknown).kind, FileKind::Unknown);
    }

    void ourOwnFilesAndOtherToolsFiles_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<int>("kind");
        const auto row = [](const char* name, const char* path, FileKind kind) {
            QTest::newRow(name) << test::sourcePath(path) << static_cast<int>(kind);
        };
        row("run file", "resources/examples/train-step-tiny-cpu.json", FileKind::RunFile);
        row("attention file", "resources/examples/attention-h200.json", FileKind::AttentionFile);
        row("dtype flow", "resources/examples/dtype-flow-nano-bf16.json", FileKind::DtypeFlow);
        row("collective file", "resources/examples/collective-cpu.json", FileKind::CollectiveFile);
        row("trace .json", "tests/data/traces/gpu_fractional/trace.json", FileKind::ProfilerTrace);
        row("trace .json.gz", "tests/data/traces/cpu_gloo/rank0.pt.trace.json.gz",
            FileKind::ProfilerTrace);
        row("our own trace export", "tests/data/traces/stepscope_export/run.pt.trace.json",
            FileKind::ProfilerTrace);
        row("pickle", "tests/fuzz/seeds/pickle/dict-p4.pkl", FileKind::MemorySnapshot);
        row("torch.save", "tests/fuzz/seeds/torch_save/checkpoint.pt", FileKind::TorchSave);
        row("a stranger", "README.md", FileKind::Unknown);
        row("sweep folder", "resources/examples/sweep-cpu", FileKind::SweepFolder);
        row("trace folder", "tests/data/traces/cpu_gloo", FileKind::TraceFolder);
        row("trace folder of .json and .json.gz", "tests/data/traces/gpu_two_ranks",
            FileKind::TraceFolder);
    }
    void ourOwnFilesAndOtherToolsFiles() {
        QFETCH(QString, path);
        QFETCH(int, kind);
        std::string error;
        QCOMPARE(nameOf(kindOf(path, &error)), nameOf(static_cast<FileKind>(kind)));
        QVERIFY2(error.empty(), error.c_str());
    }

    void aSnapshotAsJsonAndAFormatKeyPastTheHead() {
        const QString snapshot = dir_.filePath("snapshot.json");
        writeFile(snapshot, R"({"segments": [], "device_traces": [[]]})");
        QCOMPARE(kindOf(snapshot), FileKind::MemorySnapshot);
        // Another tool's key order: the format comes after 200 KB of events.
        const QString late = dir_.filePath("late-format.json");
        writeFile(late, "{\"events\": [" + QByteArray(200 * 1024, ' ') +
                            "], \"format\": \"stepscope-run\"}");
        QCOMPARE(kindOf(late), FileKind::RunFile);
        // PyTorch writes "segments" first: a real snapshot's "device_traces"
        // comes after megabytes of them.
        const QString bigSnapshot = dir_.filePath("big-snapshot.json");
        writeFile(bigSnapshot,
                  "{\"segments\": [" + QByteArray(300 * 1024, ' ') + "], \"device_traces\": [[]]}");
        QCOMPARE(kindOf(bigSnapshot), FileKind::MemorySnapshot);
        const QString lateTrace = dir_.filePath("late-trace.json");
        writeFile(lateTrace, "{\"deviceProperties\": [" + QByteArray(100 * 1024, ' ') +
                                 "], \"traceEvents\": []}");
        QCOMPARE(kindOf(lateTrace), FileKind::ProfilerTrace);
    }

    void foldersAsTheCommandsWriteThem() {
        const QString attention = dir_.filePath("grid");
        writeFile(attention + "/attention.json", "{}");
        QCOMPARE(kindOf(attention), FileKind::AttentionFolder);

        const QString sweep = dir_.filePath("sweep");
        writeFile(sweep + "/sweep.csv", "model,ctx\n");
        QCOMPARE(kindOf(sweep), FileKind::SweepFolder);

        // A folder of run files alone (a sweep whose table is not written yet).
        const QString runs = dir_.filePath("runs");
        QVERIFY(QDir().mkpath(runs));
        QVERIFY(QFile::copy(test::sourcePath("resources/examples/train-step-tiny-cpu.json"),
                            runs + "/a.json"));
        QCOMPARE(kindOf(runs), FileKind::SweepFolder);

        // A rank trace beside a run file was called a trace folder, which the
        // trace reader then failed to read (it reads every .json there): the
        // folder is one only where everything the reader reads is a trace.
        const QString mixed = dir_.filePath("trace-and-run");
        QVERIFY(QDir().mkpath(mixed));
        QVERIFY(QFile::copy(test::sourcePath("tests/data/traces/cpu_gloo/rank0.pt.trace.json.gz"),
                            mixed + "/rank0.pt.trace.json.gz"));
        QVERIFY(QFile::copy(test::sourcePath("resources/examples/train-step-tiny-cpu.json"),
                            mixed + "/run.json"));
        QVERIFY(kindOf(mixed) != FileKind::TraceFolder);
        QVERIFY(QFile::remove(mixed + "/run.json"));
        QCOMPARE(kindOf(mixed), FileKind::TraceFolder);

        const QString pretrained = dir_.filePath("pretrained");
        writeFile(pretrained + "/model_config.json", "{}");
        writeFile(pretrained + "/model.pt", "PK\x03\x04");
        QCOMPARE(kindOf(pretrained), FileKind::PretrainedFolder);

        for (const char* kind : {"sweep", "attention"}) {
            const QString slurm = dir_.filePath(QString("slurm-%1").arg(kind));
            QVERIFY(QDir().mkpath(slurm));
            QVERIFY(QFile::copy(
                test::sourcePath(QString("tests/fuzz/seeds/slurm_array/%1.json").arg(kind)),
                slurm + "/slurm-array.json"));
            std::string error;
            const FileKind found = kindOf(slurm, &error);
            QVERIFY2(error.empty(), error.c_str());
            QCOMPARE(found, QString(kind) == "sweep" ? FileKind::SlurmSweepFolder
                                                     : FileKind::SlurmAttentionFolder);
        }

        const QString empty = dir_.filePath("holiday-photos");
        writeFile(empty + "/notes.txt", "not a sweep");
        std::string error;
        QCOMPARE(kindOf(empty, &error), FileKind::Unknown);
        QVERIFY(error.empty());  // readable, just none of ours
    }

    void whatCannotBeReadSaysWhy() {
        std::string error;
        QCOMPARE(kindOf(dir_.filePath("no-such-file.json"), &error), FileKind::Unknown);
        QVERIFY2(error.find("does not exist") != std::string::npos, error.c_str());

        // A FIFO would block a reader forever: refused by what it is.
        const QString fifo = dir_.filePath("pipe.json");
        QCOMPARE(mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        QCOMPARE(kindOf(fifo, &error), FileKind::Unknown);
        QVERIFY2(error.find("a FIFO") != std::string::npos, error.c_str());

        const QString broken = dir_.filePath("broken-slurm");
        writeFile(broken + "/slurm-array.json", "{\"version\": ");
        QCOMPARE(kindOf(broken, &error), FileKind::Unknown);
        QVERIFY2(error.find("slurm-array.json") != std::string::npos, error.c_str());
    }

    void filesThatStandForTheirFolder() {
        QVERIFY(standsForItsFolder("sweep.csv"));
        QVERIFY(standsForItsFolder("attention.csv"));
        QVERIFY(!standsForItsFolder("run.json"));
    }
};

QTEST_GUILESS_MAIN(TestFileKinds)
#include "tst_file_kinds.moc"
