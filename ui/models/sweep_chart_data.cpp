#include "models/sweep_chart_data.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

#include "config/config_field.h"

namespace stepscope::ui {

namespace {

std::optional<double> numberIn(const std::string& text) {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

// "small", "train-step", "bf16" say what they are; "8" needs its field.
std::string seriesPart(const std::string& field, const std::string& value) {
    static const std::set<std::string> selfNamed = {"model", "mode", "precision", "engine",
                                                    "attention"};
    return selfNamed.count(field) ? value : field + " " + value;
}

bool isChartable(const RunResult& run) {
    return run.status == RunStatus::Ok && run.summary.total.count > 0;
}

// The x axis's values in the points' order; numbers on a numeric axis,
// else categories, one per text.
std::vector<std::string> placeX(const std::vector<const RunResult*>& points,
                                const std::string& xField, SweepChartData& chart) {
    std::vector<std::string> xTexts;
    for (const RunResult* point : points) {
        const std::string text = configFieldText(point->config, xField);
        if (std::find(xTexts.begin(), xTexts.end(), text) == xTexts.end()) {
            xTexts.push_back(text);
        }
        chart.numericX = chart.numericX && numberIn(text).has_value();
    }
    if (!chart.numericX) {
        chart.categories = xTexts;
    }
    return xTexts;
}

// "ctx 128 · bf16": what sets a point's series apart; "all points" when nothing does.
std::string seriesName(const RunConfig& config, const std::vector<std::string>& seriesFields) {
    std::string name;
    for (const auto& field : seriesFields) {
        name += (name.empty() ? "" : " · ") + seriesPart(field, configFieldText(config, field));
    }
    return name.empty() ? "all points" : name;
}

// A point's measured steps, numbered from 1, with their totals.
std::vector<std::pair<double, double>> measuredSteps(const RunResult& point) {
    std::vector<std::pair<double, double>> xy;
    int number = 0;
    for (const auto& step : point.steps) {
        if (!step.warmup) {
            xy.emplace_back(double(++number), step.totalMs);
        }
    }
    return xy;
}

// Each series in x order; a log x axis where the values span 4× or more.
void sortAndScale(SweepChartData& chart, bool byStep) {
    double low = 0, high = 0;
    bool first = true;
    for (auto& series : chart.series) {
        std::sort(series.points.begin(), series.points.end());
        for (const auto& [x, y] : series.points) {
            low = first ? x : std::min(low, x);
            high = first ? x : std::max(high, x);
            first = false;
        }
    }
    chart.logX = !byStep && chart.numericX && !first && low > 0 && high >= 4 * low;
}

}  // namespace

std::vector<std::string> varyingFields(const std::vector<RunConfig>& configs) {
    std::vector<std::string> fields;
    for (const auto& field : configFieldNames()) {
        std::set<std::string> values;
        for (const auto& config : configs) {
            values.insert(configFieldText(config, field));
        }
        if (values.size() > 1) {
            fields.push_back(field);
        }
    }
    return fields;
}

SweepChartData sweepChartData(const std::vector<const RunResult*>& points,
                              const std::string& xField,
                              const std::map<std::string, std::string>& held) {
    std::vector<RunConfig> configs;
    for (const RunResult* point : points) {
        configs.push_back(point->config);
    }
    std::vector<std::string> seriesFields;
    for (const auto& field : varyingFields(configs)) {
        if (field != xField && !held.count(field)) {
            seriesFields.push_back(field);
        }
    }
    const bool byStep = xField == kMeasuredStepAxis;
    SweepChartData chart;
    const std::vector<std::string> xTexts =
        byStep ? std::vector<std::string>() : placeX(points, xField, chart);
    std::map<std::string, size_t> seriesIndex;  // name → index in chart.series
    for (const RunResult* point : points) {
        const RunConfig& config = point->config;
        const bool kept = std::all_of(held.begin(), held.end(), [&](const auto& fieldValue) {
            return configFieldText(config, fieldValue.first) == fieldValue.second;
        });
        if (!kept || !isChartable(*point)) {
            continue;
        }
        const std::string name = seriesName(config, seriesFields);
        auto [at, added] = seriesIndex.try_emplace(name, chart.series.size());
        if (added) {
            chart.series.push_back({name, {}});
        }
        auto& xy = chart.series[at->second].points;
        if (byStep) {
            xy = measuredSteps(*point);  // a point given twice: its last run
            continue;
        }
        const std::string text = configFieldText(config, xField);
        const double x =
            chart.numericX ? *numberIn(text)
                           : double(std::find(xTexts.begin(), xTexts.end(), text) - xTexts.begin());
        std::erase_if(xy, [x](const auto& p) { return p.first == x; });
        xy.emplace_back(x, point->summary.total.mean);
    }
    sortAndScale(chart, byStep);
    return chart;
}

}  // namespace stepscope::ui
