#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "engines/run_control.h"
#include "results/run_result.h"

namespace stepscope {

// Runs warm-up then measured steps of `config`. Throws InvalidConfigError for
// a bad config; every other outcome (ok, oom, failed, cancelled, refused) is
// the returned result's status, with the steps measured so far.
RunResult runBenchmark(const RunConfig& config, const RunControl& control = {});

}  // namespace stepscope
