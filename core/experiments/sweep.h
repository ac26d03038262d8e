#pragma once

// core/experiments: questions asked of many runs. Sweeps (here), the named
// studies, the attention grid, the dtype flow and the accumulation lab; they
// compose engines and write result files. Includes engines/ and below.

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "engines/runner.h"
#include "results/run_result.h"

namespace stepscope {

// One more field a sweep varies: a config field by its flag's name (see
// configFieldNames(): batch, attention, warmup, steps, tf32, engine, …) and
// the values it takes, as text (setConfigField).
struct SweepAxis {
    std::string field;
    std::vector<std::string> values;
};

// The cartesian product models × context lengths × modes × precisions × each
// axis in order (the last varies fastest); every other field comes from
// `base`.
struct SweepSpec {
    RunConfig base;
    std::vector<ModelDims> models;
    std::vector<int64_t> contexts;
    std::vector<RunMode> modes;
    std::vector<Precision> precisions;
    // Fields beyond the four above; not model, ctx, mode or precision, each
    // at most once, no value twice.
    std::vector<SweepAxis> axes;
    std::string outDir;  // one run file per point, plus sweep.csv and sweep.md
    // Keep points whose run file says ok and holds this point's config; the
    // others run again, and the observer hears why.
    bool resume = false;
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
    // --resume found `runFile` but runs the point again: `why` says what is
    // wrong with it (unreadable, not ok, another config).
    virtual void onPointRerun(int index, const std::string& runFile, const std::string& why) {
        (void)index, (void)runFile, (void)why;
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

// The fields an axis may vary: configFieldNames() but for the four lists above
// (a field registered later among them).
std::vector<std::string> sweepAxisFields();

// Throws InvalidConfigError naming the axis: an unknown field, one of the four
// typed lists, a field given twice, no values, a value twice or one that
// setConfigField refuses.
void checkSweepAxes(const std::vector<SweepAxis>& axes);

// Every point, in order (checkSweepAxes first).
std::vector<RunConfig> expandSweep(const SweepSpec& spec);

// "small_ctx128_train-step_fp32.json"; each axis of `axes` with more than one
// value adds the point's value ("small_ctx128_train-step_fp32_batch8_sdpa.json"),
// so that points never share a file; the axes in one fixed order, whatever
// order `axes` gives them in, so that a sweep's points have one name each.
std::string sweepPointFileName(const RunConfig& config, const std::vector<SweepAxis>& axes = {});

// The fields of `axes` that take more than one value: the columns a table adds.
std::vector<std::string> varyingAxisFields(const std::vector<SweepAxis>& axes);

// Validates every point first (InvalidConfigError names the point), then runs
// them in order. After each point its run file and the sweep tables are
// written, so a sweep that dies keeps every finished point.
std::vector<RunResult> runSweep(const SweepSpec& spec, const SweepControl& control = {});

}  // namespace stepscope
