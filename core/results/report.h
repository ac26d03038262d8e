#pragma once

#include <string>
#include <vector>

#include "results/run_result.h"

namespace stepscope {

// A readable report of one run: config, environment, status, per-phase
// statistics and throughput. Used by `run` and `show`.
std::string formatRunReport(const RunResult& result);

// Sweep tables, one row per run: Markdown for reading, CSV for tools.
std::string formatSweepMarkdown(const std::vector<RunResult>& results);
std::string formatSweepCsv(const std::vector<RunResult>& results,
                           const std::vector<std::string>& runFiles);

}  // namespace stepscope
