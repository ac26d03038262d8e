#pragma once

#include <string>

#include "results/run_result.h"

namespace stepscope {

// The traced step of a run as Chrome trace-event JSON, which Perfetto and
// chrome://tracing open: trace ranges (step, phases, layers) and operators
// per host thread under process "host", kernels, memcpys and memsets per
// stream under process "GPU", and, when memory was recorded, an "active
// memory" counter track by category over the step. Spans are complete ("X")
// events sorted by start within each track. Throws std::invalid_argument when
// the run holds no traced step.
std::string chromeTraceJson(const RunResult& run);

}  // namespace stepscope
