// libFuzzer target for the Kineto trace reader and the analyses on what it
// reads (issue 33: one target per reader, seeded with the test fixtures):
//
//   clang++-14 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Icore \
//       tests/fuzz/fuzz_kineto_trace.cpp core/interop/kineto_trace.cpp \
//       core/analysis/trace_analysis.cpp -lsimdjson -lz -o fuzz_kineto_trace
//   ./fuzz_kineto_trace -max_total_time=60 CORPUS tests/data/traces/*/*
//
// Bytes come raw or gzip (the reader tells by the magic bytes). A refusal is
// a KinetoTraceError; anything else escaping is a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/trace_analysis.h"
#include "interop/kineto_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    stepscope::KinetoTraceLimits limits;
    limits.maxBytes = 64 << 20;  // small, so a gzip bomb stops early
    limits.maxEvents = 1'000'000;
    try {
        const stepscope::KinetoTrace trace = stepscope::parseKinetoTrace(
            std::string_view(reinterpret_cast<const char*>(data), size), "fuzz", limits);
        stepscope::TraceAnalysisOptions options;
        options.includeLastStep = size % 2 == 1;
        const auto ranks = stepscope::analyzeRecording({stepscope::analyzeTrace(trace, options)});
        (void)stepscope::traceBreakdownJson(ranks).dump();
        (void)stepscope::launchLinks(trace);
    } catch (const stepscope::KinetoTraceError&) {
        // a refusal with its message: the expected outcome for most inputs
    }
    return 0;
}
