#pragma once

#include <string>

#include "results/run_result.h"

namespace stepscope {

// The traced step of a run as a Chrome trace that speaks Kineto (the PyTorch
// profiler's dialect), so Perfetto, Holistic Trace Analysis and StepScope's
// own trace reader open it: ranges as user_annotation (the step as
// ProfilerStep#N), operators as cpu_op per host thread, kernels, memcpys and
// memsets as kernel/gpu_memcpy/gpu_memset on pid 0 with a tid per stream,
// each with a cuda_runtime launch and ac2g flow events sharing its
// correlation, deviceProperties and distributedInfo (rank 0), and, when
// memory was recorded, an "active memory" counter track by category over the
// step. The run records which operator launched a kernel but not the launch
// call: the launch is written with zero duration at that operator's start
// (docs/trace-analyses.md). Spans are sorted by start within each track.
// Throws std::invalid_argument when the run holds no traced step.
std::string chromeTraceJson(const RunResult& run);

}  // namespace stepscope
