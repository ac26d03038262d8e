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
// "1 point", "3 points": a count and its noun, singular or plural (the
// singular with an "s" unless given).
QString countText(qsizetype count, const QString& singular, const QString& plural = QString());
QString shortSymbol(const QString& name, int limit = 44);
QString throughputText(const RunSummary& summary);  // tokens/s, FLOP/s, MFU
// torch.compile's first call: "Compiled in 14.2 s (max-autotune) on the first
// call, not counted in the steps."; empty when the run did not compile.
QString compileText(const RunResult& result);
// What ran the steps and where: "PyTorch 2.5.1 (Python /venv/bin/python) ·
// NVIDIA H100 · CUDA 12.4 · 16 CPU threads · host · started …"; empty before
// a run has said (a live run until it ends).
QString environmentText(const RunResult& result);

}  // namespace stepscope::ui
