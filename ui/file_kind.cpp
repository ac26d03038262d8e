#include "file_kind.h"

#include <QFile>
#include <QObject>
#include <QStringList>

namespace stepscope::ui {

namespace {
constexpr qint64 kFormatHeadBytes = 64 * 1024;
}

FileKind fileKind(const QString& path, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QObject::tr("cannot open '%1': %2").arg(path, file.errorString());
        return FileKind::Other;
    }
    QByteArray head = file.read(kFormatHeadBytes);
    if (head.startsWith('\x80')) {
        return FileKind::MemorySnapshot;  // a pickle: read by the snapshot reader, which runs
                                          // nothing
    }
    if (head.startsWith("\x1f\x8b") ||
        (head.contains("\"traceEvents\"") && !head.contains("\"stepscope-"))) {
        return FileKind::Trace;  // tensorboard_trace_handler's .json.gz, export_chrome_trace's
                                 // .json
    }
    if (!head.contains("\"stepscope-") && !file.atEnd()) {
        head += file.readAll();  // written by another tool in another key order
    }
    if (head.contains("\"stepscope-attention\"")) {
        return FileKind::Attention;
    }
    if (head.contains("\"stepscope-run\"")) {
        return FileKind::Run;
    }
    if (head.trimmed().startsWith('{') && head.contains("\"device_traces\"")) {
        return FileKind::MemorySnapshot;
    }
    // `stepscope-cli dtypes --json`: an array of {what, kind, dtype}.
    return head.trimmed().startsWith('[') && head.contains("\"dtype\"") ? FileKind::DtypeFlow
                                                                        : FileKind::Other;
}

bool standsForItsFolder(const QString& fileName) {
    static const QStringList names = {"sweep.csv", "sweep.md", "study.csv", "study.md",
                                      "attention.csv"};
    return names.contains(fileName);
}

}  // namespace stepscope::ui
