// `stepscope-cli breakdown` on PyTorch profiler (Kineto) traces: a trace file
// or a folder of rank traces, analysed as HTA analyses them (issue 30).
#include <iostream>

#include "analysis/trace_analysis.h"
#include "analysis/trace_report.h"
#include "cli/commands.h"
#include "cli/guarded.h"
#include "files/file_kinds.h"

namespace stepscope::cli {

std::optional<int> commandTraceBreakdown(const std::string& path, bool runFlagsGiven, bool json) {
    if (detectFileKind(path) == FileKind::RunFile) {
        return std::nullopt;  // breakdown's other half reads it
    }
    std::vector<RankAnalysis> ranks;
    try {
        ranks = analyzeTracePath(path);
    } catch (const KinetoTraceError& error) {
        std::cerr << "stepscope-cli: breakdown: " << error.what()
                  << "\n(breakdown reads a StepScope run file, a PyTorch profiler trace "
                     "(.json, .json.gz) or a folder of rank traces)\n";
        return kExitBadInput;
    }
    if (runFlagsGiven) {
        std::cerr << "stepscope-cli: breakdown: --phase, --by and --flops are for run files; '"
                  << path << "' is a profiler trace (its breakdown takes only --json)\n";
        return kExitBadInput;
    }
    if (json) {
        std::cout << traceBreakdownJson(ranks).dump(2) << "\n";
    } else {
        std::cout << formatTraceBreakdown(ranks);
    }
    return kExitOk;
}

}  // namespace stepscope::cli
