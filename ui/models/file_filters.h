#pragma once

#include <QString>
#include <QStringList>

#include <vector>

#include "files/file_kinds.h"

namespace stepscope::ui {

// The Open dialog's filters, made from core/files' table of kinds (their
// names and dialog patterns) for the `kinds` the app opens: first one for
// everything among them, then one per file kind ("PyTorch memory snapshot
// (*.pickle *.pkl *.json)"), one for the files that stand for a folder
// (sweep.csv, attention.csv, …) when a folder kind is among them, and all
// files last.
QStringList openFileFilters(const std::vector<FileKind>& kinds);

// The Open folder dialog's title, naming each folder kind of `kinds`
// ("Open a sweep folder, an attention folder or a folder of profiler traces").
QString openFolderCaption(const std::vector<FileKind>& kinds);

}  // namespace stepscope::ui
