// stepscope-trace-bench: how long a PyTorch profiler trace takes to open and
// analyse, the app's conversion into a run's views (traceAsRun, which the
// app does off the UI thread), and the memory it takes (peak resident set),
// printed as Markdown;
// docs/perf/trace-open.md puts it beside what the same file costs HTA
// (benchmarks/trace_open.sh runs both on a trace made by repeating the
// real-shaped fixtures).
//
//   stepscope-trace-bench TRACE [TRACE...]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "analysis/trace_analysis.h"
#include "analysis/trace_run.h"
#include "interop/kineto_trace.h"

namespace {

double seconds(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double peakMiB() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) / 1024.0;  // Linux: KiB
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: stepscope-trace-bench TRACE [TRACE...]\n");
        return 2;
    }
    std::printf(
        "| trace | MB | events | read s | analyse s | as run s | peak RSS MiB |\n"
        "|---|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 1; i < argc; ++i) {
        try {
            const auto start = std::chrono::steady_clock::now();
            const stepscope::KinetoTrace trace = stepscope::readKinetoTrace(argv[i]);
            const double read = seconds(start);
            const auto analysing = std::chrono::steady_clock::now();
            const stepscope::RankAnalysis rank = stepscope::analyzeTrace(trace);
            const double analysed = seconds(analysing);
            const auto converting = std::chrono::steady_clock::now();
            const stepscope::RunResult run = stepscope::traceAsRun(trace, rank);
            const double converted = seconds(converting);
            std::printf("| %s | %.1f | %zu | %.2f | %.2f | %.2f | %.0f |\n",
                        std::filesystem::path(argv[i]).filename().c_str(),
                        double(std::filesystem::file_size(argv[i])) / 1e6, trace.events.size(),
                        read, analysed, converted, peakMiB());
            (void)run;
        } catch (const stepscope::KinetoTraceError& error) {
            std::fprintf(stderr, "stepscope-trace-bench: %s\n", error.what());
            return 2;
        }
    }
    return 0;
}
