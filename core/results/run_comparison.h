#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "results/run_result.h"
#include "results/statistics.h"

namespace stepscope {

// Two runs' step times side by side, phase by phase: what `stepscope-cli
// compare A B` prints and what the app's Compare tab shows for each run
// against the first. The verdict is compareTimes's (results/statistics.h).

// CommWait: a distributed step's wait for communication after backward.
enum class StepPhase { Total, Forward, Backward, CommWait, Optimizer };
inline constexpr StepPhase kStepPhases[] = {StepPhase::Total, StepPhase::Forward,
                                            StepPhase::Backward, StepPhase::CommWait,
                                            StepPhase::Optimizer};
// "total", "forward", "backward", "comm wait", "optimizer"
const char* toString(StepPhase phase);

// The measured (not warm-up) steps' times of one phase, in step order;
// empty when the run has none of that phase.
std::vector<double> measuredTimes(const RunResult& run, StepPhase phase);

// A run-configuration field whose value differs between two runs, as the
// CLI and the run file spell it: {"ctx", "128", "256"}. The fields are the
// config table's (config/config_field.h) that the run file keeps, and the
// model's dimensions; `work` where the difference changes the work a step
// does (the model, its dimensions and vocabulary, ctx, batch, a Python
// model), so that the ratio compares unlike steps in every phase.
struct ConfigDifference {
    std::string field;
    std::string a;
    std::string b;
    bool work = false;
};
std::vector<ConfigDifference> configFieldDifferences(const RunConfig& a, const RunConfig& b);

// Whether `difference` makes the steps of `phase` unlike: a difference in
// work makes every phase unlike; one in mode (a train step against a
// forward) the whole step, not the forward both make.
bool unlikeIn(const ConfigDifference& difference, StepPhase phase);

struct PhaseComparison {
    StepPhase phase;
    TimeComparison times;
};

struct RunComparison {
    std::vector<PhaseComparison> phases;  // those both runs have, in kStepPhases order
    std::vector<ConfigDifference> differences;
};

// Run b against run a, the reference.
RunComparison compareRuns(const RunResult& a, const RunResult& b);

// Why a comparison has no p-value, or the test it ran, in words:
// "exact Mann–Whitney U test (3 + 4 steps)", "3 and 3 measured steps cannot
// reach p < 0.05 (the least p is 0.1): 4 a side can".
std::string testText(const TimeComparison& times);

// {phases: [{phase, ratio, ci_low, ci_high, ci_level, p_value, test,
// verdict, steps_a, steps_b, median_a_ms, median_b_ms}], differences:
// [{field, a, b, work}]}; absent figures are null.
nlohmann::json toJson(const RunComparison& comparison);

}  // namespace stepscope
