#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "bench/run_config.h"
#include "bench/sweep.h"

namespace stepscope::cli {

// The config flags every command that takes a config shares. Sweep flags take
// comma lists; single-run commands take one value each.
struct ConfigFlags {
    std::vector<std::string> models{"nano"};
    int64_t dModel = 0, dFf = 0, layers = 0, heads = 0;
    int64_t vocab = 10000;
    int64_t maxContext = 2048;
    std::vector<int64_t> contexts{128};
    int64_t batch = 4;
    std::vector<std::string> modes{"train-step"};
    std::vector<std::string> precisions{"fp32"};
    bool tf32 = false;
    std::string attention = "naive";
    int warmup = 2;
    int steps = 5;
    std::string device = "cpu";
    uint64_t seed = 0;
    int threads = 0;
    bool force = false;
    bool traceOps = false;
    bool traceKernels = false;
    bool traceMemory = false;
    std::string cudaSnapshot;

    void addTo(CLI::App& command, bool lists);
    // Throws InvalidConfigError (field-named) for a value no config can hold.
    RunConfig toRunConfig() const;
    SweepSpec toSweepSpec(const std::string& outDir) const;
};

}  // namespace stepscope::cli
