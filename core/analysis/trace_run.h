#pragma once

#include "analysis/trace_analysis.h"
#include "interop/kineto_trace.h"
#include "results/run_result.h"

namespace stepscope {

// One rank's profiler trace in the shape the app's run views draw, so a
// trace opens into the same Breakdown and Timeline tabs as a run: kernels
// (memcpys and memsets by their names) as device time rows with HTA's kernel
// type as their category, host operators (cpu_op) with their self time, and a
// timeline from the first event: ProfilerStep#N ranges as bands, operators and
// runtime calls per host thread, device events per stream. Every analysed
// profiler step is a measured step, so "ms per step" means per profiler step.
RunResult traceAsRun(const KinetoTrace& trace, const RankAnalysis& rank);

}  // namespace stepscope
