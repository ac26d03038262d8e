#include "results/run_comparison.h"

#include <algorithm>
#include <cmath>

#include "config/config_field.h"
#include "util/strings.h"

namespace stepscope {

const char* toString(StepPhase phase) {
    switch (phase) {
        case StepPhase::Forward:
            return "forward";
        case StepPhase::Backward:
            return "backward";
        case StepPhase::CommWait:
            return "comm wait";
        case StepPhase::Optimizer:
            return "optimizer";
        case StepPhase::Total:
            break;
    }
    return "total";
}

std::vector<double> measuredTimes(const RunResult& run, StepPhase phase) {
    std::vector<double> times;
    for (const StepRecord& step : run.steps) {
        if (step.warmup) {
            continue;
        }
        const std::optional<double> value = phase == StepPhase::Total      ? step.totalMs
                                            : phase == StepPhase::Forward  ? step.forwardMs
                                            : phase == StepPhase::Backward ? step.backwardMs
                                            : phase == StepPhase::CommWait
                                                ? step.communicationWaitMs
                                                : step.optimizerMs;
        if (value) {
            times.push_back(*value);
        }
    }
    return times;
}

namespace {

// The fields whose difference changes the work of every phase of a step.
bool changesWork(const std::string& field) {
    static const std::vector<std::string> kWork = {"model", "d-model", "d-ff",  "layers",  "heads",
                                                   "vocab", "ctx",     "batch", "py-model"};
    return std::find(kWork.begin(), kWork.end(), field) != kWork.end();
}

// The model's dimensions, where the preset's name does not say them.
std::vector<std::pair<std::string, int64_t>> modelDims(const ModelDims& m) {
    return {{"d-model", m.dModel}, {"d-ff", m.dFf},        {"layers", m.layers},
            {"heads", m.heads},    {"vocab", m.vocabSize}, {"max-ctx", m.maxContext}};
}

}  // namespace

std::vector<ConfigDifference> configFieldDifferences(const RunConfig& a, const RunConfig& b) {
    std::vector<ConfigDifference> out;
    auto add = [&](const std::string& field, const std::string& x, const std::string& y) {
        if (x != y) {
            out.push_back({field, x, y, changesWork(field)});
        }
    };
    for (const ConfigField& field : configFields()) {
        // Not what a run measures: this machine's Python, the files beside
        // the run (their shapes are ctx and batch), whether it was forced.
        if (field.key.empty() || field.type == FieldType::Path || field.name == "force") {
            continue;
        }
        add(field.name, field.text(a), field.text(b));
        if (field.type == FieldType::Model) {
            const auto dimsA = modelDims(a.model), dimsB = modelDims(b.model);
            for (size_t i = 0; i < dimsA.size(); ++i) {
                // A preset's name says its dims; the vocabulary and context may differ.
                const bool named = a.model.name != b.model.name && i < 4;
                if (!named) {
                    add(dimsA[i].first, std::to_string(dimsA[i].second),
                        std::to_string(dimsB[i].second));
                }
            }
        }
    }
    return out;
}

bool unlikeIn(const ConfigDifference& difference, StepPhase phase) {
    return difference.work || (difference.field == "mode" && phase == StepPhase::Total);
}

RunComparison compareRuns(const RunResult& a, const RunResult& b) {
    RunComparison out;
    for (const StepPhase phase : kStepPhases) {
        const std::vector<double> x = measuredTimes(a, phase), y = measuredTimes(b, phase);
        if (!x.empty() && !y.empty()) {
            out.phases.push_back({phase, compareTimes(x, y)});
        }
    }
    out.differences = configFieldDifferences(a.config, b.config);
    return out;
}

std::string testText(const TimeComparison& t) {
    const std::string sizes = std::to_string(t.countA) + " and " + std::to_string(t.countB);
    if (t.pValue) {
        return std::string(t.countA + t.countB > kExactTestLimit
                               ? "Mann–Whitney U test (normal approximation)"
                               : "exact Mann–Whitney U test") +
               " of " + sizes + " measured steps";
    }
    const std::string needed =
        t.neededA == t.neededB ? std::to_string(t.neededA) + " a side"
                               : std::to_string(t.neededA) + " and " + std::to_string(t.neededB);
    return sizes + " measured steps cannot reach p < " + fixedDecimals(kNoiseAlpha, 2) +
           " (the least p is " + fixedDecimals(leastPValue(t.countA, t.countB), 2) +
           "): " + needed + " can";
}

namespace {

nlohmann::json number(const std::optional<double>& value) {
    return value && std::isfinite(*value) ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json toJson(const RunComparison& comparison) {
    nlohmann::json out;
    out["phases"] = nlohmann::json::array();
    for (const PhaseComparison& p : comparison.phases) {
        const TimeComparison& t = p.times;
        out["phases"].push_back(
            {{"phase", toString(p.phase)},
             {"ratio", number(t.ratio > 0 ? std::optional<double>(t.ratio) : std::nullopt)},
             {"ci_low", number(t.ciLow)},
             {"ci_high", number(t.ciHigh)},
             {"ci_level", t.ciLevel > 0 ? nlohmann::json(t.ciLevel) : nlohmann::json(nullptr)},
             {"p_value", number(t.pValue)},
             {"test", testText(t)},
             {"verdict", toString(t.verdict)},
             {"steps_a", t.countA},
             {"steps_b", t.countB},
             {"median_a_ms", t.medianA},
             {"median_b_ms", t.medianB}});
    }
    out["differences"] = nlohmann::json::array();
    for (const ConfigDifference& d : comparison.differences) {
        out["differences"].push_back(
            {{"field", d.field}, {"a", d.a}, {"b", d.b}, {"work", d.work}});
    }
    return out;
}

}  // namespace stepscope
