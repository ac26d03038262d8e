#pragma once

#include <string>
#include <vector>

#include "results/run_result.h"

namespace stepscope {

// A readable report of one run: config, environment, status, per-phase
// statistics and throughput. Used by `run` and `show`.
std::string formatRunReport(const RunResult& result);

// One row per step: index, warmup, total_ms, forward_ms, backward_ms,
// optimizer_ms, loss (empty cells for phases a mode does not run).
std::string formatStepsCsv(const RunResult& result);

// A Markdown report: configuration, environment and the per-phase summary;
// `images` (relative paths) are embedded after the tables.
std::string formatRunMarkdown(const RunResult& result, const std::vector<std::string>& images);

// Sweep tables, one row per run: Markdown for reading, CSV for tools. The
// Markdown table shows model, ctx, mode, precision and engine, plus a column
// for each field of `axisFields` (configFieldNames()) and for any other
// field whose value differs between the runs; the CSV has every config column.
std::string formatSweepMarkdown(const std::vector<RunResult>& results,
                                const std::vector<std::string>& axisFields = {});
std::string formatSweepCsv(const std::vector<RunResult>& results,
                           const std::vector<std::string>& runFiles);

}  // namespace stepscope
