#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "bench/run_config.h"
#include "bench/runner.h"
#include "results/run_result.h"

namespace stepscope {

// The cartesian product models × context lengths × modes × precisions; every
// other field comes from `base`.
struct SweepSpec {
    RunConfig base;
    std::vector<ModelDims> models;
    std::vector<int64_t> contexts;
    std::vector<RunMode> modes;
    std::vector<Precision> precisions;
    std::string outDir;   // one run file per point, plus sweep.csv and sweep.md
    bool resume = false;  // keep points whose run file already says ok
};

class SweepObserver {
public:
    virtual ~SweepObserver() = default;
    virtual void onPointStarted(int index, int total, const RunConfig& config) {
        (void)index, (void)total, (void)config;
    }
    virtual void onPointFinished(int index, int total, const RunResult& result,
                                 const std::string& runFile) {
        (void)index, (void)total, (void)result, (void)runFile;
    }
};

struct SweepControl {
    SweepObserver* observer = nullptr;
    RunObserver* runObserver = nullptr;
    const std::atomic<bool>* cancel = nullptr;  // stops before the next point (and between steps)
    // How one point is run; tests substitute it. Defaults to runBenchmark.
    std::function<RunResult(const RunConfig&, const RunControl&)> runPoint;
};

// Builds a spec from the names a user typed (presets, modes, precisions);
// `base.model` is used where `models` is empty (custom dims). Throws
// InvalidConfigError naming the field and the allowed values.
SweepSpec makeSweepSpec(const RunConfig& base, const std::vector<std::string>& models,
                        const std::vector<int64_t>& contexts, const std::vector<std::string>& modes,
                        const std::vector<std::string>& precisions, const std::string& outDir);

std::vector<RunConfig> expandSweep(const SweepSpec& spec);
std::string sweepPointFileName(const RunConfig& config);  // "small_ctx128_train-step_fp32.json"

// Validates every point first (InvalidConfigError names the point), then runs
// them in order. After each point its run file and the sweep tables are
// written, so a sweep that dies keeps every finished point.
std::vector<RunResult> runSweep(const SweepSpec& spec, const SweepControl& control = {});

}  // namespace stepscope
