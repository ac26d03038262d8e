#pragma once

#include <QString>

#include "results/run_result.h"

namespace stepscope::ui {

// Numbers as every view shows them.
QString formatMs(double milliseconds);                    // "12.34"
QString formatPercent(double fraction);                   // "5.1%"
QString bytesText(int64_t bytes);                         // "1.50 GiB"
QString formatScaled(double value, const QString& unit);  // "1.23 GFLOP/s"
// A kernel or operator name short enough for a chart label: no "void ", no
// argument list, namespaces and template arguments elided, at most `limit`.
QString shortSymbol(const QString& name, int limit = 44);
QString throughputText(const RunSummary& summary);  // tokens/s, FLOP/s, MFU

}  // namespace stepscope::ui
