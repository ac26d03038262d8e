#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "engines/runner.h"
#include "experiments/sweep.h"

namespace stepscope::cli {

// Progress on stderr, one line per step, so stdout stays clean for results.
// Steps are named by their index as the step tables number them (from 0,
// warm-up first), with how many of the run's steps are done.
class StderrProgress final : public RunObserver, public SweepObserver {
public:
    void onStep(const StepRecord& step) override {
        std::fprintf(stderr, "  step %d (%s): %.2f ms", step.index,
                     step.warmup ? "warm-up" : "measured", step.totalMs);
        if (totalSteps_ > 0) {
            std::fprintf(stderr, " · %d of %d steps done", step.index + 1, totalSteps_);
        }
        std::fprintf(stderr, "\n");
    }
    void onProgress(const RunProgress& progress) override {
        if (progress.phase == "setup") {
            totalSteps_ = progress.totalSteps;
            std::fprintf(stderr,
                         "  building the model and data (%d steps to run, numbered 0 to %d)\n",
                         progress.totalSteps, progress.totalSteps - 1);
        } else if (progress.phase == "compile") {
            std::fprintf(stderr,
                         "  compiling (torch.compile's first call, not a step; often "
                         "tens of seconds)\n");
        }
    }
    void onPointStarted(int index, int total, const RunConfig& config) override {
        std::fprintf(stderr, "[%d/%d] %s\n", index + 1, total,
                     sweepPointFileName(config, axes_).c_str());
    }
    void onPointFinished(int, int, const RunResult& result, const std::string& file) override {
        const std::string process =
            result.environment.isolated
                ? " (fresh process, pid " + std::to_string(result.environment.processId) + ")"
                : "";
        std::fprintf(stderr, "  -> %s%s, %s\n", toString(result.status).c_str(), process.c_str(),
                     file.c_str());
    }

    void onPointRerun(int, const std::string& file, const std::string& why) override {
        std::fprintf(stderr, "  not reusing %s: %s; running it again\n", file.c_str(), why.c_str());
    }

    // The sweep's axes, so that points are named as their files are.
    void setAxes(std::vector<SweepAxis> axes) { axes_ = std::move(axes); }

private:
    int totalSteps_ = 0;  // of the run under way, from its setup report
    std::vector<SweepAxis> axes_;
};

}  // namespace stepscope::cli
