#include "interop/chrome_trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace stepscope {

namespace {

// Kineto's layout: the host process, and the device's pid 0 with a tid per stream.
constexpr int kHostProcess = 1;
constexpr int kDeviceProcess = 0;

bool onGpu(SpanKind kind) {
    return kind == SpanKind::Kernel || kind == SpanKind::Memcpy || kind == SpanKind::Memset;
}

// Kineto's category of a span, and the runtime call that launches a device one.
const char* kinetoCategory(SpanKind kind) {
    switch (kind) {
        case SpanKind::Range:
            return "user_annotation";
        case SpanKind::Operator:
            return "cpu_op";
        case SpanKind::Kernel:
            return "kernel";
        case SpanKind::Memcpy:
            return "gpu_memcpy";
        case SpanKind::Memset:
            return "gpu_memset";
    }
    return "user_annotation";
}
const char* launchName(SpanKind kind) {
    return kind == SpanKind::Memcpy   ? "cudaMemcpyAsync"
           : kind == SpanKind::Memset ? "cudaMemsetAsync"
                                      : "cudaLaunchKernel";
}

// The number that ends "stream 7" (Kineto's tid of a stream), else -1.
int64_t trailingNumber(const std::string& track) {
    const size_t digits = track.find_last_not_of("0123456789");
    const std::string tail = digits == std::string::npos ? track : track.substr(digits + 1);
    return tail.empty() || tail.size() > 9 ? -1 : std::stoll(tail);
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

// Builds the events of one traced step, Kineto-shaped, track by track.
class KinetoExport {
public:
    explicit KinetoExport(const RunResult& run) : run_(run) {}

    nlohmann::json events() {
        for (size_t i = 0; i < run_.timeline.spans.size(); ++i) {
            const TimelineSpan& span = run_.timeline.spans[i];
            if (span.kind == SpanKind::Operator) {
                operatorsByName_[span.name].push_back(i);  // spans come sorted by start
            }
        }
        for (const TimelineSpan& span : run_.timeline.spans) {
            if (onGpu(span.kind)) {
                addDeviceSpan(span);
            } else {
                addHostSpan(span);
            }
        }
        std::stable_sort(events_.begin(), events_.end(), [](const auto& a, const auto& b) {
            return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) <
                   std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
        });
        nlohmann::json trace = metadata();
        for (auto& event : events_) {
            trace.push_back(std::move(std::get<3>(event)));
        }
        appendMemoryCounter(run_, trace);
        return trace;
    }

    bool hasDeviceEvents() const { return !streams_.empty(); }

private:
    using Event = std::tuple<int, int64_t, double, nlohmann::json>;

    int64_t hostThread(const std::string& track) {
        const auto found = hostTracks_.find(track);
        if (found != hostTracks_.end()) {
            return found->second;
        }
        const int64_t tid = int64_t(hostTracks_.size()) + 1;
        hostTracks_[track] = tid;
        return tid;
    }

    nlohmann::json spanEvent(const TimelineSpan& span, int pid, int64_t tid, std::string name,
                             nlohmann::json args) const {
        if (!span.phase.empty()) {
            args["phase"] = span.phase;
        }
        if (!span.category.empty()) {
            args["category"] = span.category;
        }
        return {{"ph", "X"},
                {"cat", kinetoCategory(span.kind)},
                {"name", std::move(name)},
                {"pid", pid},
                {"tid", tid},
                {"ts", span.startUs},
                {"dur", std::max(0.0, span.durationUs)},
                {"args", std::move(args)}};
    }

    // Ranges are user annotations; "step N" is the ProfilerStep#N HTA counts steps by.
    void addHostSpan(const TimelineSpan& span) {
        const int64_t tid = hostThread(span.track);
        const int64_t id = nextId_++;
        nlohmann::json args = {{"External id", id}};
        std::string name = span.name;
        if (span.kind == SpanKind::Range && name == "step " + std::to_string(run_.timeline.step)) {
            name = "ProfilerStep#" + std::to_string(run_.timeline.step);
        }
        if (span.kind == SpanKind::Operator) {
            operatorIds_[&span] = id;
            if (!span.detail.empty()) {
                args["module"] = span.detail;
            }
        }
        events_.emplace_back(kHostProcess, tid, span.startUs,
                             spanEvent(span, kHostProcess, tid, std::move(name), std::move(args)));
    }

    // The run keeps the launching operator's name, not its launch call: the
    // launch is written as a zero-length call at the start of the latest
    // operator of that name that began before the kernel.
    const TimelineSpan* launchingOperator(const TimelineSpan& kernel) const {
        const auto found = operatorsByName_.find(kernel.detail);
        if (found == operatorsByName_.end()) {
            return nullptr;
        }
        const TimelineSpan* best = nullptr;
        for (const size_t index : found->second) {
            const TimelineSpan& op = run_.timeline.spans[index];
            if (op.startUs > kernel.startUs) {
                break;
            }
            best = &op;
        }
        return best;
    }

    void addDeviceSpan(const TimelineSpan& span) {
        const int64_t stream = std::max<int64_t>(0, trailingNumber(span.track));
        streams_[stream] = span.track;
        const int64_t correlation = nextId_++;
        const TimelineSpan* op = launchingOperator(span);
        const TimelineSpan& host = op ? *op : span;
        const int64_t tid = hostThread(op ? op->track : "thread 0");
        const int64_t external = op ? operatorIds_.at(op) : correlation;
        const double launchUs = host.startUs;
        events_.emplace_back(
            kHostProcess, tid, launchUs,
            nlohmann::json{{"ph", "X"},
                           {"cat", "cuda_runtime"},
                           {"name", launchName(span.kind)},
                           {"pid", kHostProcess},
                           {"tid", tid},
                           {"ts", launchUs},
                           {"dur", 0.0},
                           {"args", {{"External id", external}, {"correlation", correlation}}}});
        flows_.push_back({{"ph", "s"},
                          {"id", correlation},
                          {"pid", kHostProcess},
                          {"tid", tid},
                          {"ts", launchUs},
                          {"cat", "ac2g"},
                          {"name", "ac2g"}});
        nlohmann::json args = {{"External id", external},
                               {"correlation", correlation},
                               {"device", 0},
                               {"stream", stream}};
        if (!span.detail.empty()) {
            args["operator"] = span.detail;
        }
        events_.emplace_back(kDeviceProcess, stream, span.startUs,
                             spanEvent(span, kDeviceProcess, stream, span.name, std::move(args)));
        flows_.push_back({{"ph", "f"},
                          {"id", correlation},
                          {"pid", kDeviceProcess},
                          {"tid", stream},
                          {"ts", span.startUs},
                          {"cat", "ac2g"},
                          {"name", "ac2g"},
                          {"bp", "e"}});
    }

    nlohmann::json metadata() const {
        nlohmann::json trace = nlohmann::json::array();
        auto name = [&trace](const char* what, int pid, int64_t tid, const std::string& value) {
            trace.push_back({{"ph", "M"},
                             {"name", what},
                             {"pid", pid},
                             {"tid", tid},
                             {"args", {{"name", value}}}});
        };
        name("process_name", kHostProcess, 0, "host");
        for (const auto& [track, tid] : hostTracks_) {
            name("thread_name", kHostProcess, tid, track);
        }
        if (!streams_.empty()) {
            const std::string device = run_.environment.deviceName.empty()
                                           ? "GPU 0"
                                           : "GPU 0 " + run_.environment.deviceName;
            name("process_name", kDeviceProcess, 0, device);
        }
        for (const auto& [stream, track] : streams_) {
            name("thread_name", kDeviceProcess, stream, track);
        }
        for (const nlohmann::json& flow : flows_) {
            trace.push_back(flow);
        }
        return trace;
    }

    const RunResult& run_;
    std::map<std::string, std::vector<size_t>> operatorsByName_;
    std::map<const TimelineSpan*, int64_t> operatorIds_;
    std::map<std::string, int64_t> hostTracks_;
    std::map<int64_t, std::string> streams_;
    std::vector<Event> events_;
    std::vector<nlohmann::json> flows_;
    int64_t nextId_ = 1;
};

}  // namespace

std::string chromeTraceJson(const RunResult& run) {
    using nlohmann::json;
    if (run.timeline.step < 0 || run.timeline.spans.empty()) {
        throw std::invalid_argument(
            "chrome-trace: the run has no traced step; make it with --ops or --kernels");
    }
    KinetoExport exporter(run);
    const json events = exporter.events();
    const json other = {{"producer", "StepScope"},
                        {"model", run.config.model.name},
                        {"step", run.timeline.step},
                        {"started_at", run.environment.startedAt}};
    // Written by hand at the top: HTA finds a rank by the text `"rank": N`
    // (with the space, which nlohmann's compact dump leaves out).
    std::string out =
        "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"none\", \"rank\": 0, "
        "\"world_size\": 1}";
    if (exporter.hasDeviceEvents()) {
        const std::string name =
            run.environment.deviceName.empty() ? "GPU" : run.environment.deviceName;
        out += ", \"deviceProperties\": " + json::array({{{"id", 0}, {"name", name}}}).dump();
    }
    out += ", \"displayTimeUnit\": \"ms\", \"otherData\": " + other.dump() +
           ", \"traceEvents\": " + events.dump() + "}\n";
    return out;
}

}  // namespace stepscope
