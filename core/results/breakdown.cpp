#include "results/breakdown.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

namespace stepscope {

std::vector<BreakdownRow> breakdown(const RunResult& run, const std::string& phase,
                                    const std::string& by) {
    if (phase != "all" && phase != "forward" && phase != "backward" && phase != "optimizer") {
        throw std::invalid_argument("phase: '" + phase +
                                    "' is not allowed; allowed: forward, backward, optimizer, all");
    }
    if (by != "op" && by != "kernel" && by != "category") {
        throw std::invalid_argument("by: '" + by +
                                    "' is not allowed; allowed: kernel, op, category");
    }
    if (by == "kernel" && run.kernels.empty()) {
        throw std::invalid_argument(
            "by: the run has no kernel records; make it with --kernels on a CUDA device");
    }
    if (by == "op" && run.operators.empty()) {
        throw std::invalid_argument("by: the run has no operator records; make it with --ops");
    }
    if (run.kernels.empty() && run.operators.empty()) {
        throw std::invalid_argument("by: the run has no traced records; make it with --ops");
    }
    const bool fromKernels = by == "kernel" || (by == "category" && !run.kernels.empty());
    const std::vector<TimeRow>& operators = fromKernels ? run.kernels : run.operators;
    std::map<std::string, double> phaseTotals;
    std::map<std::pair<std::string, std::string>, BreakdownRow> grouped;
    for (const auto& op : operators) {
        if (phase != "all" && op.phase != phase) {
            continue;
        }
        phaseTotals[op.phase] += op.totalMs;
        const std::string name = by == "category" ? op.category : op.name;
        BreakdownRow& row = grouped[{op.phase, name}];
        row.name = name;
        row.category = op.category;
        row.phase = op.phase;
        row.calls += op.calls;
        row.totalMs += op.totalMs;
    }
    // The tracers aggregate the measured steps only; a cancelled run has fewer.
    const auto measured = std::count_if(run.steps.begin(), run.steps.end(),
                                        [](const StepRecord& step) { return !step.warmup; });
    std::vector<BreakdownRow> rows;
    for (auto& [key, row] : grouped) {
        const double total = phaseTotals[row.phase];
        row.share = total > 0 ? row.totalMs / total : 0;
        row.msPerStep = measured > 0 ? row.totalMs / double(measured) : 0;
        rows.push_back(row);
    }
    std::sort(rows.begin(), rows.end(),
              [](const BreakdownRow& a, const BreakdownRow& b) { return a.totalMs > b.totalMs; });
    return rows;
}

std::string formatBreakdownTable(const std::vector<BreakdownRow>& rows) {
    std::ostringstream out;
    out << "| name | category | phase | calls | total ms | ms / step | mean ms / call | share of "
           "phase |\n"
        << "|---|---|---|---:|---:|---:|---:|---:|\n";
    for (const auto& row : rows) {
        char numbers[128];
        std::snprintf(numbers, sizeof numbers, "%lld | %.3f | %.3f | %.4f | %.1f%%",
                      static_cast<long long>(row.calls), row.totalMs, row.msPerStep,
                      row.calls ? row.totalMs / double(row.calls) : 0.0, 100 * row.share);
        out << "| " << row.name << " | " << row.category << " | " << row.phase << " | " << numbers
            << " |\n";
    }
    return out.str();
}

std::string formatFlopGroupTable(const std::vector<FlopGroupRow>& rows) {
    std::ostringstream out;
    out << "| forward group | GFLOP per step | ms per step | achieved TFLOP/s |\n"
        << "|---|---:|---:|---:|\n";
    for (const auto& row : rows) {
        char numbers[96];
        if (row.flopsPerStep > 0) {
            std::snprintf(numbers, sizeof numbers, "%.3f | %.3f | %.3f", row.flopsPerStep / 1e9,
                          row.msPerStep, row.achievedFlopsPerSecond / 1e12);
        } else {
            std::snprintf(numbers, sizeof numbers, "– | %.3f | –", row.msPerStep);
        }
        out << "| " << row.group << " | " << numbers << " |\n";
    }
    return out.str();
}

nlohmann::json breakdownRowsJson(const std::vector<BreakdownRow>& rows) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& row : rows) {
        out.push_back({{"name", row.name},
                       {"category", row.category},
                       {"phase", row.phase},
                       {"calls", row.calls},
                       {"total_ms", row.totalMs},
                       {"ms_per_step", row.msPerStep},
                       {"share", row.share}});
    }
    return out;
}

nlohmann::json flopGroupsJson(const std::vector<FlopGroupRow>& rows) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& row : rows) {
        out.push_back({{"group", row.group},
                       {"flops_per_step", row.flopsPerStep},
                       {"ms_per_step", row.msPerStep},
                       {"achieved_flops_per_second", row.achievedFlopsPerSecond}});
    }
    return out;
}

}  // namespace stepscope
