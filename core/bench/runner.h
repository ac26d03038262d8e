#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/run_config.h"
#include "engines/run_control.h"
#include "results/run_result.h"

namespace stepscope {

// A config that fails validation; errors() names each field.
class InvalidConfigError : public std::invalid_argument {
public:
    explicit InvalidConfigError(std::vector<ConfigError> errors);
    const std::vector<ConfigError>& errors() const { return errors_; }

private:
    std::vector<ConfigError> errors_;
};

// Runs warm-up then measured steps of `config`. Throws InvalidConfigError for
// a bad config; every other outcome (ok, oom, failed, cancelled, refused) is
// the returned result's status, with the steps measured so far.
RunResult runBenchmark(const RunConfig& config, const RunControl& control = {});

}  // namespace stepscope
