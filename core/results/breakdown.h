#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "estimate/flop_groups.h"
#include "results/run_result.h"

namespace stepscope {

// Where the time went: a traced run's rows filtered to a phase ("all" keeps
// every phase) and grouped by kernel, operator or category, with each row's
// share of its phase's traced total and its mean time per measured step.
// Categories come from the kernels' device time where kernels were traced, from
// the operators' host time otherwise. Sorted by total time, largest first.
struct BreakdownRow {
    std::string name;  // operator, or category when grouped by category
    std::string category;
    std::string phase;
    int64_t calls = 0;
    double totalMs = 0;    // over the measured steps
    double msPerStep = 0;  // totalMs over the run's measured steps
    double share = 0;      // of its phase's traced total
};

// Throws std::invalid_argument naming the field for a bad phase or grouping,
// or for a grouping the run has no records for.
std::vector<BreakdownRow> breakdown(const RunResult& run, const std::string& phase,
                                    const std::string& by);
std::string formatBreakdownTable(const std::vector<BreakdownRow>& rows);  // Markdown
std::string formatFlopGroupTable(const std::vector<FlopGroupRow>& rows);  // Markdown
// As the CLI's --json prints them and the run file keeps them.
nlohmann::json breakdownRowsJson(const std::vector<BreakdownRow>& rows);
nlohmann::json flopGroupsJson(const std::vector<FlopGroupRow>& rows);

}  // namespace stepscope
