#pragma once

#include <QString>

namespace stepscope::ui {

// What a file is, by its "format" field (or, for `stepscope-cli dtypes
// --json`, its shape). Reads no more than the head of a run file: the field
// sits near the top (keys are sorted: config, environment, flop_groups,
// format), so a million memory events are not read twice.
// A PyTorch memory snapshot is a pickle (its first byte 0x80) or JSON with
// "device_traces" and no StepScope format. A PyTorch profiler trace (Trace)
// is told by gzip's magic bytes or a "traceEvents" key; its reader says the
// rest.
enum class FileKind { Run, Attention, DtypeFlow, MemorySnapshot, Trace, Other };

// Sets `error` (naming the path) when the file cannot be read at all.
FileKind fileKind(const QString& path, QString* error);

// The files a user picks that stand for the folder that holds them
// (sweep.csv, sweep.md, study.csv, study.md, attention.csv).
bool standsForItsFolder(const QString& fileName);

}  // namespace stepscope::ui
