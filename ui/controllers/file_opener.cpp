#include "controllers/file_opener.h"

#include <QDir>
#include <QFileInfo>
#include <QMimeData>
#include <QUrl>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "analysis/snapshot_timeline.h"
#include "analysis/trace_analysis.h"
#include "analysis/trace_run.h"
#include "cluster/slurm_collective.h"
#include "files/file_kinds.h"
#include "interop/kineto_trace.h"
#include "interop/memory_snapshot.h"
#include "models/dtype_flow_file.h"
#include "models/memory_run_data.h"
#include "models/snapshot_document.h"
#include "models/snapshot_recording.h"
#include "results/attention_file.h"
#include "results/run_file.h"
#include "util/atomic_file.h"

namespace stepscope::ui {

// One path, read: what it became, or the message that says why not.
struct OpenedPath {
    enum class Kind {
        Run,
        Attention,
        Collective,
        DtypeFlow,
        SweepFolder,
        AttentionArray,
        Trace,
        Failed
    };
    Kind kind = Kind::Failed;
    QString path;
    std::shared_ptr<RunDocument> run;
    std::vector<std::shared_ptr<RunDocument>> ranks;  // a trace: a document per rank
    std::vector<AttentionPoint> attention;
    CollectiveFile collective;
    std::vector<DtypeRow> dtypes;
    std::shared_ptr<SweepFolderRead> sweep;
    AttentionArrayRead array;
    QString errorTitle;
    QString error;
};

namespace {

// The kinds of file (or folder) the app opens, each with what makes it one,
// from the table of kinds: "run file (a JSON file made by …); …".
QString kindsOpenedText(bool folders) {
    QStringList kinds;
    for (const FileKind kind : FileOpener::kindsOpened()) {
        const FileKindInfo& info = fileKindInfo(kind);
        if (info.folder == folders) {
            kinds << QString("%1 (%2)").arg(
                QString::fromUtf8(info.name.data(), qsizetype(info.name.size())),
                QString::fromUtf8(info.whatMakesIt.data(), qsizetype(info.whatMakesIt.size())));
        }
    }
    return kinds.join("; ");
}

using Opened = OpenedPath;

Opened failed(const QString& title, const QString& message) {
    Opened opened;
    opened.errorTitle = title;
    opened.error = message;
    return opened;
}

// `progress` hears how far a large file is read, and stops it with false.
Opened readFilePath(const QString& path, const std::vector<CategoryRule>& rules = {},
                    const SnapshotProgress& progress = {});

// A profiler trace, or a folder of rank traces: a document per rank, in
// rank order, each with HTA's analyses of them all (the slowest rank per step).
Opened readTraces(const QString& path) {
    std::vector<RankAnalysis> analyses;
    std::vector<std::shared_ptr<RunDocument>> documents;
    try {
        const std::vector<std::string> files = QFileInfo(path).isDir()
                                                   ? kinetoTraceFiles(path.toStdString())
                                                   : std::vector<std::string>{path.toStdString()};
        for (const std::string& file : files) {
            const KinetoTrace trace = readKinetoTrace(file);
            analyses.push_back(analyzeTrace(trace));
            auto document = std::make_shared<RunDocument>();
            document->result = traceAsRun(trace, analyses.back());
            document->kind = TraceRank{nullptr, analyses.back().rank};
            // The run list names runs by what differs in their configs.
            document->result.config.model.name =
                "trace rank " + std::to_string(analyses.back().rank) + " (" +
                QFileInfo(QString::fromStdString(file)).fileName().toStdString() + ")";
            documents.push_back(std::move(document));
        }
        analyses = analyzeRecording(std::move(analyses));
    } catch (const KinetoTraceError& error) {
        return failed(FileOpener::tr("Cannot open profiler trace"),
                      QString::fromUtf8(error.what()));
    }
    std::sort(documents.begin(), documents.end(),
              [](const auto& a, const auto& b) { return a->trace()->rank < b->trace()->rank; });
    const auto shared = std::make_shared<const std::vector<RankAnalysis>>(std::move(analyses));
    Opened opened;
    opened.kind = Opened::Kind::Trace;
    opened.path = path;
    for (auto& document : documents) {
        document->kind = TraceRank{shared, document->trace()->rank};
        document->memoryData = prepareMemoryRunData(document->result);
        opened.ranks.push_back(std::move(document));
    }
    return opened;
}

Opened readFolder(const QString& path) {
    std::string error;
    switch (detectFileKind(path.toStdString(), &error)) {
        case FileKind::AttentionFolder:
            return readFilePath(QDir(path).filePath("attention.json"));
        case FileKind::SlurmAttentionFolder:
            try {
                Opened opened;
                opened.kind = Opened::Kind::AttentionArray;
                opened.array = readAttentionArray(path);
                opened.path = opened.array.directory;
                return opened;
            } catch (const std::exception& failure) {
                return failed(FileOpener::tr("Cannot open folder"),
                              QString::fromUtf8(failure.what()));
            }
        case FileKind::SlurmCollectiveFolder:
            try {  // the rank counts finished so far
                Opened opened;
                opened.collective = readSlurmCollective(path.toStdString(), "open").file;
                if (opened.collective.rows.empty()) {
                    return failed(FileOpener::tr("Cannot open folder"),
                                  FileOpener::tr("'%1' is a collective benchmark whose rank "
                                                 "counts have not finished yet; open it again "
                                                 "once one has.")
                                      .arg(path));
                }
                opened.kind = Opened::Kind::Collective;
                opened.path = path;
                return opened;
            } catch (const std::exception& failure) {
                return failed(FileOpener::tr("Cannot open folder"),
                              QString::fromUtf8(failure.what()));
            }
        case FileKind::TraceFolder:
            return readTraces(path);
        case FileKind::SweepFolder:
        case FileKind::SlurmSweepFolder: {  // a Slurm array's folder before any point is done
            Opened opened;
            opened.kind = Opened::Kind::SweepFolder;
            opened.sweep = std::make_shared<SweepFolderRead>(readSweepFolder(path));
            opened.path = opened.sweep->directory;
            return opened;
        }
        default:
            break;
    }
    if (!error.empty()) {
        return failed(FileOpener::tr("Cannot open folder"), QString::fromStdString(error));
    }
    return failed(
        FileOpener::tr("Cannot open folder"),
        FileOpener::tr("'%1' is none of the folders the app opens, which are: %2. A sweep whose "
                       "first point is still running holds no run file yet: open its "
                       "folder again once that point is done.")
            .arg(path, kindsOpenedText(true)));
}

// The read is about half of a snapshot's open (at a million events 150 ms of
// 280), the document made of its busiest device (timeline, trace, index) the rest.
constexpr double kSnapshotReadShare = 0.55;

// A PyTorch memory snapshot: its busiest device as a run with only a memory
// trace, titled by the file. Its path stays empty, so Save asks where to
// write a run file instead of writing over the snapshot. `progress` hears
// how far it is read, and stops the read with false.
Opened readSnapshot(const QString& path, const std::vector<CategoryRule>& rules,
                    const SnapshotProgress& progress) {
    try {
        SnapshotProgress reading;
        if (progress) {
            reading = [&progress](double fraction) {
                return progress(kSnapshotReadShare * fraction);
            };
        }
        auto snapshot = std::make_shared<const MemorySnapshot>(
            readMemorySnapshot(path.toStdString(), {}, reading));
        if (progress && !progress(kSnapshotReadShare)) {
            return failed(FileOpener::tr("Cannot open memory snapshot"),
                          FileOpener::tr("'%1': opening cancelled").arg(path));
        }
        const int device = busiestDevice(*snapshot);
        Opened opened;
        opened.kind = Opened::Kind::Run;
        opened.path = path;
        // The user's category rules first (Settings → Memory category rules).
        SnapshotProgress building;
        if (progress) {  // the rest of the way
            building = [&progress](double fraction) {
                return progress(kSnapshotReadShare + (1 - kSnapshotReadShare) * fraction);
            };
        }
        opened.run = snapshotDocument(std::move(snapshot), path, device, rules, building);
        if (!opened.run) {
            return failed(FileOpener::tr("Cannot open memory snapshot"),
                          FileOpener::tr("'%1': opening cancelled").arg(path));
        }
        return opened;
    } catch (const SnapshotError& error) {
        return failed(FileOpener::tr("Cannot open memory snapshot"),
                      QString::fromUtf8(error.what()));
    } catch (const std::invalid_argument& error) {
        return failed(FileOpener::tr("Cannot open memory snapshot"),
                      QString("'%1': %2").arg(path, QString::fromUtf8(error.what())));
    }
}

Opened readFilePath(const QString& path, const std::vector<CategoryRule>& rules,
                    const SnapshotProgress& progress) {
    const QFileInfo info(path);
    if (info.isDir()) {
        return readFolder(path);
    }
    if (!info.exists()) {
        return failed(FileOpener::tr("Cannot open"),
                      FileOpener::tr("'%1' does not exist.").arg(path));
    }
    if (standsForItsFolder(info.fileName().toStdString())) {
        return readFolder(info.path());
    }
    std::string detectError;
    const FileKind kind = detectFileKind(path.toStdString(), &detectError);
    if (!detectError.empty()) {
        return failed(FileOpener::tr("Cannot open run file"), QString::fromStdString(detectError));
    }
    QString error;
    Opened opened;
    opened.path = path;
    try {
        switch (kind) {
            case FileKind::AttentionFile: {
                const std::string text = readFile(path.toStdString());
                try {
                    opened.attention = attentionResultFromJson(text);
                } catch (const RunFileError& error) {
                    return failed(FileOpener::tr("Cannot open attention file"),
                                  QString("'%1': %2").arg(path, QString::fromUtf8(error.what())));
                }
                opened.kind = Opened::Kind::Attention;
                return opened;
            }
            case FileKind::CollectiveFile:
                try {
                    opened.collective = readCollectiveFile(path.toStdString());
                } catch (const RunFileError& error) {
                    return failed(FileOpener::tr("Cannot open collective benchmark file"),
                                  QString::fromUtf8(error.what()));
                }
                opened.kind = Opened::Kind::Collective;
                return opened;
            case FileKind::DtypeFlow:
                opened.dtypes = readDtypeFlowFile(path, &error);
                if (!error.isEmpty()) {
                    return failed(FileOpener::tr("Cannot open dtype flow"), error);
                }
                opened.kind = Opened::Kind::DtypeFlow;
                return opened;
            case FileKind::RunFile:
                opened.run = std::make_shared<RunDocument>();
                opened.run->result = readRunFile(path.toStdString());  // its errors name the path
                opened.run->path = path;
                opened.run->kind = kindOfRunFile(opened.run->result);
                // Indexed here too: a million memory events take the UI thread a
                // quarter second to index, group and attribute.
                opened.run->memoryData = prepareMemoryRunData(opened.run->result);
                opened.kind = Opened::Kind::Run;
                return opened;
            case FileKind::MemorySnapshot:
                return readSnapshot(path, rules, progress);
            case FileKind::ProfilerTrace:
                return readTraces(path);
            default:
                break;
        }
    } catch (const std::runtime_error& error) {
        return failed(FileOpener::tr("Cannot open run file"), QString::fromUtf8(error.what()));
    }
    // An image, a notebook, someone else's JSON: say so, not what a parser met.
    std::error_code ignored;
    const bool empty = std::filesystem::file_size(path.toStdString(), ignored) == 0;
    return failed(FileOpener::tr("Cannot open run file"),
                  (empty ? FileOpener::tr("'%1' is empty: it is not a StepScope run file, nor "
                                          "any of the other files the app opens, which are: %2.")
                         : FileOpener::tr("'%1' is not a StepScope run file, nor any of the "
                                          "other files the app opens, which are: %2."))
                      .arg(path, kindsOpenedText(false)));
}

}  // namespace

FileOpener::FileOpener(QObject* parent) : QObject(parent), jobs_(this), deviceJobs_(this, 1) {}

// The tracker waits for a read under way; its result is dropped with this.
FileOpener::~FileOpener() = default;

int FileOpener::open(const QStringList& paths) {
    const int next = jobs_.latestJob() + 1;  // the id start() gives it (both on this thread)
    const int job = jobs_.start(
        [this, next, paths, rules = rules_](const std::function<bool()>& superseded) {
            std::vector<Opened> opened;
            for (const QString& path : paths) {
                if (superseded()) {
                    break;  // dropped anyway: the rest is not worth reading
                }
                // Said when the percent changes; a cancel stops the read there.
                int said = -1;
                const auto progress = [&](double fraction) {
                    if (superseded()) {
                        return false;
                    }
                    const int percent = int(100 * fraction);
                    if (percent != said) {
                        said = percent;
                        QMetaObject::invokeMethod(
                            this, [this, next, percent] { Q_EMIT this->progress(next, percent); },
                            Qt::QueuedConnection);
                    }
                    return true;
                };
                try {
                    opened.push_back(readFilePath(path, rules, progress));
                } catch (const std::exception& error) {  // a reader's own bug: said, not a crash
                    opened.push_back(
                        failed(tr("Cannot open"), QString("'%1': %2").arg(path, error.what())));
                }
            }
            return opened;
        },
        [this](int job, std::vector<Opened> opened) { deliver(job, opened); },
        [this](int job) { Q_EMIT dropped(job); });
    Q_ASSERT(job == next);
    Q_EMIT started(job, paths);
    return job;
}

int FileOpener::openSnapshotDevice(int documentId, const RunDocument& document, int device) {
    const std::shared_ptr<const SnapshotRecording> recording = document.sharedSnapshot();
    const QString path = recording->path;
    return deviceJobs_.start(
        [recording, path, device, rules = rules_](const std::function<bool()>&) {
            Opened opened;
            try {
                opened.kind = Opened::Kind::Run;
                opened.run = snapshotDocument(recording->snapshot, path, device, rules);
            } catch (const std::exception& error) {
                opened = failed(tr("Cannot show device %1").arg(device),
                                QString("'%1': %2").arg(path, QString::fromUtf8(error.what())));
            }
            return opened;
        },
        [this, documentId](int, Opened opened) {
            if (opened.kind == Opened::Kind::Run) {
                Q_EMIT snapshotDeviceOpened(documentId, opened.run);
            } else {
                Q_EMIT openFailed(opened.errorTitle, opened.error);
            }
        },
        [](int) {});
}

void FileOpener::cancel() {
    jobs_.reset();
    deviceJobs_.reset();
}

void FileOpener::deliver(int job, std::vector<OpenedPath>& opened) {
    bool all = true;
    for (Opened& path : opened) {
        switch (path.kind) {
            case Opened::Kind::Run:
                Q_EMIT runOpened(path.path, path.run);
                break;
            case Opened::Kind::Collective:
                Q_EMIT collectiveOpened(path.path, path.collective);
                break;
            case Opened::Kind::Attention:
                Q_EMIT attentionOpened(path.path, path.attention);
                break;
            case Opened::Kind::DtypeFlow:
                Q_EMIT dtypeFlowOpened(path.path, path.dtypes);
                break;
            case Opened::Kind::SweepFolder:
                Q_EMIT sweepFolderOpened(path.sweep);
                break;
            case Opened::Kind::AttentionArray:
                Q_EMIT attentionArrayOpened(path.array);
                break;
            case Opened::Kind::Trace:
                for (const auto& rank : path.ranks) {
                    Q_EMIT runOpened(path.path, rank);
                }
                break;
            case Opened::Kind::Failed:
                all = false;
                Q_EMIT openFailed(path.errorTitle, path.error);
                break;
        }
    }
    Q_EMIT finished(job, all);
}

const std::vector<FileKind>& FileOpener::kindsOpened() {
    // As readFilePath and readFolder read them.
    static const std::vector<FileKind> kinds = {FileKind::RunFile,
                                                FileKind::AttentionFile,
                                                FileKind::CollectiveFile,
                                                FileKind::DtypeFlow,
                                                FileKind::MemorySnapshot,
                                                FileKind::ProfilerTrace,
                                                FileKind::SweepFolder,
                                                FileKind::SlurmSweepFolder,
                                                FileKind::AttentionFolder,
                                                FileKind::SlurmAttentionFolder,
                                                FileKind::SlurmCollectiveFolder,
                                                FileKind::TraceFolder};
    return kinds;
}

bool FileOpener::acceptsDrop(const QMimeData* mime) {
    return mime->hasUrls();
}

QStringList FileOpener::droppedPaths(const QMimeData* mime) {
    QStringList paths;
    for (const QUrl& url : mime->urls()) {
        if (url.isLocalFile()) {
            paths << url.toLocalFile();
        }
    }
    return paths;
}

}  // namespace stepscope::ui
