#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "results/run_result.h"

namespace stepscope::ui {

// The sweep chart as a pivot of its points: one config field is the x axis,
// every other field that varies is either a series (a line per value) or
// held at one value (the points with other values are left out).

// Not a config field: x is the measured step's number and each point is a
// line of its steps' times (the warm-up study's chart).
inline const std::string kMeasuredStepAxis = "step";

// The config fields (configFieldNames(), in that order) whose value differs
// between the configs.
std::vector<std::string> varyingFields(const std::vector<RunConfig>& configs);

struct ChartSeries {
    std::string name;  // "small · batch 8", or "all points" when nothing else varies
    std::vector<std::pair<double, double>> points;  // (x, mean total ms), x ascending
};

struct SweepChartData {
    std::vector<ChartSeries> series;
    // Numeric x (ctx, batch, the measured step, …) or a category per value
    // (model, mode, …): then x is the category's index in `categories`.
    bool numericX = true;
    bool logX = false;  // numeric, positive, spanning 4× or more
    std::vector<std::string> categories;
};

// `held`: field → the one value kept; a varying field that is neither
// `xField` nor held is a series. Points that are not ok, or ok with no
// measured step, are left out.
SweepChartData sweepChartData(const std::vector<const RunResult*>& points,
                              const std::string& xField,
                              const std::map<std::string, std::string>& held);

}  // namespace stepscope::ui
