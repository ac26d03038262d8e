#include "results/breakdown.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

namespace stepscope {

std::vector<BreakdownRow> breakdown(const std::vector<OperatorRow>& operators,
                                    const std::string& phase, const std::string& by) {
    if (phase != "all" && phase != "forward" && phase != "backward" && phase != "optimizer") {
        throw std::invalid_argument("phase: '" + phase +
                                    "' is not allowed; allowed: forward, backward, optimizer, all");
    }
    if (by != "op" && by != "category") {
        throw std::invalid_argument(
            "by: '" + by +
            "' is not allowed; allowed: op, category (kernel needs the CUDA "
            "kernel tracer, not built yet)");
    }
    std::map<std::string, double> phaseTotals;
    std::map<std::pair<std::string, std::string>, BreakdownRow> grouped;
    for (const auto& op : operators) {
        if (phase != "all" && op.phase != phase) {
            continue;
        }
        phaseTotals[op.phase] += op.totalMs;
        const std::string name = by == "op" ? op.name : op.category;
        BreakdownRow& row = grouped[{op.phase, name}];
        row.name = name;
        row.category = op.category;
        row.phase = op.phase;
        row.calls += op.calls;
        row.totalMs += op.totalMs;
    }
    std::vector<BreakdownRow> rows;
    for (auto& [key, row] : grouped) {
        const double total = phaseTotals[row.phase];
        row.share = total > 0 ? row.totalMs / total : 0;
        rows.push_back(row);
    }
    std::sort(rows.begin(), rows.end(),
              [](const BreakdownRow& a, const BreakdownRow& b) { return a.totalMs > b.totalMs; });
    return rows;
}

std::string formatBreakdownTable(const std::vector<BreakdownRow>& rows) {
    std::ostringstream out;
    out << "| name | category | phase | calls | total ms | share of phase |\n"
        << "|---|---|---|---:|---:|---:|\n";
    for (const auto& row : rows) {
        char numbers[96];
        std::snprintf(numbers, sizeof numbers, "%lld | %.3f | %.1f%%",
                      static_cast<long long>(row.calls), row.totalMs, 100 * row.share);
        out << "| " << row.name << " | " << row.category << " | " << row.phase << " | " << numbers
            << " |\n";
    }
    return out.str();
}

}  // namespace stepscope
