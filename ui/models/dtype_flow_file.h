#pragma once

#include <QString>

#include <vector>

#include "experiments/dtype_flow.h"

namespace stepscope::ui {

// A dtype flow saved by `stepscope-cli dtypes --json`: a JSON array of
// {what, kind, dtype}. Empty, with `error` set (naming the path and what was
// expected), for a file that is not one.
std::vector<DtypeRow> readDtypeFlowFile(const QString& path, QString* error);

}  // namespace stepscope::ui
