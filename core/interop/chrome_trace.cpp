#include "interop/chrome_trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace stepscope {

namespace {

constexpr int kHostProcess = 1;
constexpr int kGpuProcess = 2;

bool onGpu(SpanKind kind) {
    return kind == SpanKind::Kernel || kind == SpanKind::Memcpy || kind == SpanKind::Memset;
}

// Active bytes by category during the traced step, on the step's time axis
// (both tracers stamp one clock), at most one sample per microsecond bucket.
void appendMemoryCounter(const RunResult& run, nlohmann::json& trace) {
    const MemoryTrace& memory = run.memory;
    if (memory.empty()) {
        return;
    }
    double stepEndUs = 0;
    for (const auto& span : run.timeline.spans) {
        stepEndUs = std::max(stepEndUs, span.startUs + span.durationUs);
    }
    const double shift = memory.clockOriginUs - run.timeline.clockOriginUs;
    constexpr size_t kMaxSamples = 5000;
    const double bucket = std::max(1.0, stepEndUs / double(kMaxSamples));
    CategoryBytes active{};
    double lastBucket = -1;
    for (size_t i = 0; i < memory.size(); ++i) {
        active[memory.category[i]] += memory.bytes[i];
        const double at = memory.timeUs[i] + shift;
        const bool lastOfTime = i + 1 == memory.size() || memory.timeUs[i + 1] != memory.timeUs[i];
        if (at < 0 || at > stepEndUs || !lastOfTime || std::floor(at / bucket) == lastBucket) {
            continue;
        }
        lastBucket = std::floor(at / bucket);
        nlohmann::json args = nlohmann::json::object();
        for (size_t c = 0; c < kMemoryCategories; ++c) {
            args[toString(MemoryCategory(c))] = double(active[c]) / (1024.0 * 1024.0);
        }
        trace.push_back({{"ph", "C"},
                         {"name", "active memory (MiB)"},
                         {"pid", kHostProcess},
                         {"ts", at},
                         {"args", args}});
    }
}

}  // namespace

std::string chromeTraceJson(const RunResult& run) {
    using nlohmann::json;
    if (run.timeline.step < 0 || run.timeline.spans.empty()) {
        throw std::invalid_argument(
            "chrome-trace: the run has no traced step; make it with --ops or --kernels");
    }
    // Stable thread ids per track: ranges first, then host threads, then streams.
    std::map<std::pair<int, std::string>, int> trackIds;
    auto trackOf = [&trackIds](const TimelineSpan& span) {
        const int pid = onGpu(span.kind) ? kGpuProcess : kHostProcess;
        const auto key = std::make_pair(pid, span.track);
        const auto found = trackIds.find(key);
        if (found != trackIds.end()) {
            return std::make_pair(pid, found->second);
        }
        const int tid = int(trackIds.size());
        trackIds[key] = tid;
        return std::make_pair(pid, tid);
    };
    std::vector<std::tuple<int, int, double, json>> events;
    for (const TimelineSpan& span : run.timeline.spans) {
        const auto [pid, tid] = trackOf(span);
        json args = {{"phase", span.phase}};
        if (!span.category.empty()) {
            args["category"] = span.category;
        }
        if (!span.detail.empty()) {
            args[span.kind == SpanKind::Operator ? "module" : "operator"] = span.detail;
        }
        events.emplace_back(pid, tid, span.startUs,
                            json{{"ph", "X"},
                                 {"name", span.name},
                                 {"cat", toString(span.kind)},
                                 {"ts", span.startUs},
                                 {"dur", std::max(0.0, span.durationUs)},
                                 {"pid", pid},
                                 {"tid", tid},
                                 {"args", args}});
    }
    std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
        return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) <
               std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
    });

    json trace = json::array();
    const std::string device =
        run.environment.deviceName.empty() ? "GPU" : "GPU " + run.environment.deviceName;
    trace.push_back({{"ph", "M"},
                     {"name", "process_name"},
                     {"pid", kHostProcess},
                     {"args", {{"name", "host"}}}});
    trace.push_back({{"ph", "M"},
                     {"name", "process_name"},
                     {"pid", kGpuProcess},
                     {"args", {{"name", device}}}});
    for (const auto& [key, tid] : trackIds) {
        trace.push_back({{"ph", "M"},
                         {"name", "thread_name"},
                         {"pid", key.first},
                         {"tid", tid},
                         {"args", {{"name", key.second}}}});
    }
    for (auto& event : events) {
        trace.push_back(std::move(std::get<3>(event)));
    }
    appendMemoryCounter(run, trace);
    const json document = {{"traceEvents", trace},
                           {"displayTimeUnit", "ms"},
                           {"otherData",
                            {{"producer", "StepScope"},
                             {"model", run.config.model.name},
                             {"step", run.timeline.step},
                             {"started_at", run.environment.startedAt}}}};
    return document.dump() + "\n";
}

}  // namespace stepscope
