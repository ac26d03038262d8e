#include "results/memory_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "estimate/cost_model.h"
#include "estimate/memory_estimate.h"
#include "util/strings.h"

namespace stepscope {

namespace {

const MemoryTrace& traceOf(const RunResult& run) {
    if (run.memory.empty()) {
        throw std::invalid_argument("memory: the run has no memory trace; make it with --memory");
    }
    return run.memory;
}

nlohmann::json categoriesJson(const CategoryBytes& bytes) {
    nlohmann::json out = nlohmann::json::object();
    for (size_t c = 0; c < kMemoryCategories; ++c) {
        out[toString(MemoryCategory(c))] = bytes[c];
    }
    return out;
}

}  // namespace

int64_t residualStreamBytes(const RunConfig& config) {
    const int64_t element = config.precision == Precision::Fp32 ? 4 : 2;
    return config.batchSize * config.contextLength * config.model.dModel * element;
}

std::string formatMemoryReport(const RunResult& run, size_t topCount) {
    const MemoryTrace& trace = traceOf(run);
    const MemorySummary summary = summarizeMemory(trace, topCount);
    const MemoryPrediction prediction = predictMemory(run.config);
    std::ostringstream out;
    char line[256];
    out << "memory on " << trace.device << ": " << trace.size() << " events\n";
    std::snprintf(line, sizeof line, "peak %s at %.1f ms, in %s of step %d (estimate %s in %s)\n",
                  formatBytes(double(summary.peakBytes)).c_str(), summary.peakTimeUs / 1e3,
                  phaseName(summary.peakPhase), summary.peakStep,
                  formatBytes(double(prediction.peakBytes)).c_str(),
                  phaseName(prediction.peakPhase));
    out << line << "peak by phase:";
    for (int phase = 0; phase < 4; ++phase) {
        out << "  " << phaseName(phase) << " "
            << formatBytes(double(summary.peakByPhase[size_t(phase)]));
    }
    out << "\n\n| category | at peak | max over the run | estimate (max) |\n|---|---:|---:|---:|\n";
    for (size_t c = 0; c < kMemoryCategories; ++c) {
        out << "| " << toString(MemoryCategory(c)) << " | "
            << formatBytes(double(summary.atPeak[c])) << " | "
            << formatBytes(double(summary.maxByCategory[c])) << " | "
            << formatBytes(double(prediction.maxByCategory[c])) << " |\n";
    }
    out << "\nresidual-stream tensor (batch × ctx × d_model × element): "
        << formatBytes(double(residualStreamBytes(run.config))) << "\n";
    if (trace.devicePeakAllocated) {
        out << "CUDA caching allocator: peak allocated "
            << formatBytes(double(*trace.devicePeakAllocated)) << ", peak reserved "
            << formatBytes(double(trace.devicePeakReserved.value_or(0))) << "\n";
    }
    out << "\n| size | category | phase | step | module | lifetime ms |\n"
           "|---:|---|---|---:|---|---:|\n";
    for (const auto& allocation : summary.top) {
        const double end = allocation.endUs >= 0 ? allocation.endUs : trace.timeUs.back();
        std::snprintf(line, sizeof line, "%.3f%s", (end - allocation.startUs) / 1e3,
                      allocation.endUs >= 0 ? "" : " (alive)");
        out << "| " << formatBytes(double(allocation.bytes)) << " | "
            << toString(allocation.category) << " | " << phaseName(allocation.phase) << " | "
            << allocation.step << " | " << trace.name(allocation.path) << " | " << line << " |\n";
    }
    return out.str();
}

nlohmann::json memoryReportJson(const RunResult& run, size_t topCount) {
    const MemoryTrace& trace = traceOf(run);
    const MemorySummary summary = summarizeMemory(trace, topCount);
    const MemoryEstimate estimate = estimateMemory(run.config);
    nlohmann::json top = nlohmann::json::array();
    for (const auto& allocation : summary.top) {
        top.push_back({{"bytes", allocation.bytes},
                       {"category", toString(allocation.category)},
                       {"phase", phaseName(allocation.phase)},
                       {"step", allocation.step},
                       {"module", trace.name(allocation.path)},
                       {"start_us", allocation.startUs},
                       {"end_us", allocation.endUs >= 0 ? nlohmann::json(allocation.endUs)
                                                        : nlohmann::json(nullptr)}});
    }
    nlohmann::json byPhase = nlohmann::json::object();
    for (int phase = 0; phase < 4; ++phase) {
        byPhase[phaseName(phase)] = summary.peakByPhase[size_t(phase)];
    }
    return {{"device", trace.device},
            {"events", trace.size()},
            {"peak_bytes", summary.peakBytes},
            {"peak_phase", phaseName(summary.peakPhase)},
            {"peak_step", summary.peakStep},
            {"peak_time_us", summary.peakTimeUs},
            {"peak_by_phase", byPhase},
            {"at_peak", categoriesJson(summary.atPeak)},
            {"max_by_category", categoriesJson(summary.maxByCategory)},
            {"estimate",
             {{"peak_bytes", predictMemory(run.config).peakBytes},
              {"parameters", estimate.parameters},
              {"gradients", estimate.gradients},
              {"optimizer_state", estimate.optimizerState},
              {"activations", estimate.activations},
              {"residual_stream_tensor", residualStreamBytes(run.config)}}},
            {"device_peak_allocated", trace.devicePeakAllocated
                                          ? nlohmann::json(*trace.devicePeakAllocated)
                                          : nlohmann::json(nullptr)},
            {"device_peak_reserved", trace.devicePeakReserved
                                         ? nlohmann::json(*trace.devicePeakReserved)
                                         : nlohmann::json(nullptr)},
            {"top", top}};
}

std::string formatMemorySweepTable(const std::vector<RunResult>& runs) {
    std::vector<std::string> modes;
    std::map<std::tuple<std::string, std::string, int64_t>, std::map<std::string, std::string>>
        rows;
    for (const RunResult& run : runs) {
        const std::string mode = toString(run.config.mode);
        if (std::find(modes.begin(), modes.end(), mode) == modes.end()) {
            modes.push_back(mode);
        }
        auto& row =
            rows[{run.config.model.name, toString(run.config.precision), run.config.contextLength}];
        const std::string estimate = formatBytes(double(predictMemory(run.config).peakBytes));
        if (run.memory.empty()) {
            row[mode] = toString(run.status) + " (est. " + estimate + ")";
        } else {
            row[mode] = formatBytes(double(summarizeMemory(run.memory, 0).peakBytes)) + " (est. " +
                        estimate + ")";
        }
    }
    std::ostringstream out;
    out << "| model | precision | ctx |";
    for (const auto& mode : modes) {
        out << " peak " << mode << " |";
    }
    out << "\n|---|---|---:|";
    for (size_t i = 0; i < modes.size(); ++i) {
        out << "---:|";
    }
    out << "\n";
    for (const auto& [key, cells] : rows) {
        out << "| " << std::get<0>(key) << " | " << std::get<1>(key) << " | " << std::get<2>(key)
            << " |";
        for (const auto& mode : modes) {
            const auto found = cells.find(mode);
            out << " " << (found == cells.end() ? "–" : found->second) << " |";
        }
        out << "\n";
    }
    return out.str();
}

}  // namespace stepscope
