#pragma once

#include <string>
#include <vector>

#include "profile/operator_tracer.h"

namespace stepscope {

// Where the time went: operator rows filtered to a phase ("all" keeps every
// phase) and grouped by operator or by category, with each row's share of
// its phase's traced total. Sorted by total time, largest first.
struct BreakdownRow {
    std::string name;  // operator, or category when grouped by category
    std::string category;
    std::string phase;
    int64_t calls = 0;
    double totalMs = 0;
    double share = 0;  // of its phase's traced total
};

// Throws std::invalid_argument naming the field for a bad phase or grouping.
std::vector<BreakdownRow> breakdown(const std::vector<OperatorRow>& operators,
                                    const std::string& phase, const std::string& by);
std::string formatBreakdownTable(const std::vector<BreakdownRow>& rows);  // Markdown

}  // namespace stepscope
