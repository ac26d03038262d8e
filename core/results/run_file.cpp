#include "results/run_file.h"

#include <nlohmann/json.hpp>

#include "results/breakdown.h"
#include "util/atomic_file.h"

namespace stepscope {

using nlohmann::json;

namespace {

json optionalNumber(const std::optional<double>& value) {
    return value ? json(*value) : json(nullptr);
}

json statsJson(const Stats& stats) {
    return {{"count", stats.count},   {"mean", stats.mean}, {"std", stats.std},
            {"median", stats.median}, {"min", stats.min},   {"max", stats.max},
            {"cv", stats.cv}};
}

json optionalStats(const std::optional<Stats>& stats) {
    return stats ? statsJson(*stats) : json(nullptr);
}

// Reads fields of one JSON object and says which one is wrong, by path.
class FieldReader {
public:
    FieldReader(const json& object, std::string path) : object_(object), path_(std::move(path)) {
        if (!object_.is_object()) {
            throw RunFileError(where() + ": expected an object");
        }
    }

    const json& required(const std::string& key) const {
        const auto found = object_.find(key);
        if (found == object_.end()) {
            throw RunFileError(where(key) + ": missing");
        }
        return *found;
    }
    FieldReader object(const std::string& key) const {
        return FieldReader(required(key), where(key));
    }
    std::string string(const std::string& key) const {
        const json& value = required(key);
        if (!value.is_string()) {
            throw RunFileError(where(key) + ": expected a string");
        }
        return value.get<std::string>();
    }
    bool has(const std::string& key) const { return object_.contains(key); }
    // Calls `read` with a reader for each object of the array under `key`.
    template <typename Read>
    void forEachItem(const std::string& key, Read read) const {
        const json& items = required(key);
        if (!items.is_array()) {
            throw RunFileError(where(key) + ": expected an array");
        }
        for (size_t i = 0; i < items.size(); ++i) {
            read(FieldReader(items[i], where(key) + "[" + std::to_string(i) + "]"));
        }
    }
    std::string stringOr(const std::string& key, const std::string& fallback) const {
        return object_.contains(key) ? string(key) : fallback;
    }
    double number(const std::string& key) const {
        const json& value = required(key);
        if (!value.is_number()) {
            throw RunFileError(where(key) + ": expected a number");
        }
        return value.get<double>();
    }
    int64_t integer(const std::string& key) const {
        const json& value = required(key);
        if (!value.is_number_integer()) {
            throw RunFileError(where(key) + ": expected an integer");
        }
        return value.get<int64_t>();
    }
    bool boolean(const std::string& key) const {
        const json& value = required(key);
        if (!value.is_boolean()) {
            throw RunFileError(where(key) + ": expected true or false");
        }
        return value.get<bool>();
    }
    std::optional<double> optionalNumber(const std::string& key) const {
        const auto found = object_.find(key);
        if (found == object_.end() || found->is_null()) {
            return std::nullopt;
        }
        return number(key);
    }
    template <typename Enum>
    Enum choice(const std::string& key, std::optional<Enum> (*parse)(const std::string&),
                const std::string& allowed) const {
        const std::string text = string(key);
        const auto value = parse(text);
        if (!value) {
            throw RunFileError(where(key) + ": '" + text + "' is not one of " + allowed);
        }
        return *value;
    }
    std::string where(const std::string& key = {}) const {
        return key.empty() ? path_ : path_ + "." + key;
    }

private:
    const json& object_;
    std::string path_;
};

json parseJson(const std::string& text) {
    try {
        return json::parse(text);
    } catch (const json::parse_error& error) {
        throw RunFileError(std::string("not valid JSON: ") + error.what());
    }
}

json configJson(const RunConfig& config) {
    const ModelDims& m = config.model;
    return {{"model",
             {{"name", m.name},
              {"d_model", m.dModel},
              {"d_ff", m.dFf},
              {"layers", m.layers},
              {"heads", m.heads},
              {"vocab", m.vocabSize},
              {"max_context", m.maxContext},
              {"rope_theta", m.ropeTheta}}},
            {"ctx", config.contextLength},
            {"batch", config.batchSize},
            {"mode", toString(config.mode)},
            {"precision", toString(config.precision)},
            {"tf32", config.tf32},
            {"warmup", config.warmupSteps},
            {"steps", config.measuredSteps},
            {"device", toString(config.device)},
            {"seed", config.seed},
            {"attention", config.attention},
            {"threads", config.threads},
            {"force", config.force},
            {"trace_ops", config.traceOps},
            {"trace_kernels", config.traceKernels},
            {"trace_memory", config.traceMemory}};
}

RunConfig configFromJson(const FieldReader& reader) {
    RunConfig config;
    const FieldReader model = reader.object("model");
    config.model.name = model.string("name");
    config.model.dModel = model.integer("d_model");
    config.model.dFf = model.integer("d_ff");
    config.model.layers = model.integer("layers");
    config.model.heads = model.integer("heads");
    config.model.vocabSize = model.integer("vocab");
    config.model.maxContext = model.integer("max_context");
    config.model.ropeTheta = model.number("rope_theta");
    config.contextLength = reader.integer("ctx");
    config.batchSize = reader.integer("batch");
    config.mode = reader.choice<RunMode>("mode", parseRunMode,
                                         "inference, forward, "
                                         "forward-backward, train-step");
    config.precision = reader.choice<Precision>("precision", parsePrecision, "fp32, bf16, fp16");
    config.tf32 = reader.boolean("tf32");
    config.warmupSteps = static_cast<int>(reader.integer("warmup"));
    config.measuredSteps = static_cast<int>(reader.integer("steps"));
    config.device = reader.choice<DeviceKind>("device", parseDeviceKind, "cpu, cuda");
    config.seed = static_cast<uint64_t>(reader.integer("seed"));
    config.attention = reader.string("attention");
    config.threads = static_cast<int>(reader.integer("threads"));
    config.force = reader.boolean("force");
    config.traceOps = reader.has("trace_ops") ? reader.boolean("trace_ops") : false;
    config.traceKernels = reader.has("trace_kernels") ? reader.boolean("trace_kernels") : false;
    config.traceMemory = reader.has("trace_memory") ? reader.boolean("trace_memory") : false;
    return config;
}

json timeRowsJson(const std::vector<TimeRow>& rows) {
    json out = json::array();
    for (const auto& row : rows) {
        out.push_back({{"name", row.name},
                       {"category", row.category},
                       {"phase", row.phase},
                       {"calls", row.calls},
                       {"total_ms", row.totalMs}});
    }
    return out;
}

// Operator and kernel rows; only traced runs have them.
std::vector<TimeRow> readTimeRows(const FieldReader& root, const std::string& key) {
    std::vector<TimeRow> rows;
    if (!root.has(key)) {
        return rows;
    }
    root.forEachItem(key, [&](const FieldReader& item) {
        TimeRow row;
        row.name = item.string("name");
        row.category = item.string("category");
        row.phase = item.string("phase");
        row.calls = item.integer("calls");
        row.totalMs = item.number("total_ms");
        rows.push_back(row);
    });
    return rows;
}

std::optional<SpanKind> parseSpanKind(const std::string& text) {
    for (SpanKind kind : {SpanKind::Range, SpanKind::Operator, SpanKind::Kernel, SpanKind::Memcpy,
                          SpanKind::Memset}) {
        if (text == toString(kind)) {
            return kind;
        }
    }
    return std::nullopt;
}

json timelineJson(const StepTimeline& timeline) {
    json spans = json::array();
    for (const auto& span : timeline.spans) {
        spans.push_back({{"kind", toString(span.kind)},
                         {"name", span.name},
                         {"category", span.category},
                         {"phase", span.phase},
                         {"track", span.track},
                         {"detail", span.detail},
                         {"start_us", span.startUs},
                         {"duration_us", span.durationUs}});
    }
    return {{"step", timeline.step}, {"clock_origin_us", timeline.clockOriginUs}, {"spans", spans}};
}

StepTimeline readTimeline(const FieldReader& reader) {
    StepTimeline timeline;
    timeline.step = static_cast<int>(reader.integer("step"));
    timeline.clockOriginUs = reader.optionalNumber("clock_origin_us").value_or(0);
    reader.forEachItem("spans", [&](const FieldReader& item) {
        TimelineSpan span;
        span.kind =
            item.choice<SpanKind>("kind", parseSpanKind, "range, operator, kernel, memcpy, memset");
        span.name = item.string("name");
        span.category = item.string("category");
        span.phase = item.string("phase");
        span.track = item.string("track");
        span.detail = item.string("detail");
        span.startUs = item.number("start_us");
        span.durationUs = item.number("duration_us");
        timeline.spans.push_back(std::move(span));
    });
    return timeline;
}

json memoryJson(const MemoryTrace& trace) {
    if (trace.empty()) {
        return nullptr;
    }
    json phases = json::array();
    for (const auto& range : trace.phases) {
        phases.push_back({range.phase, range.step, range.startUs, range.endUs});
    }
    return {{"device", trace.device},
            {"clock_origin_us", trace.clockOriginUs},
            {"paths", trace.paths},
            {"time_us", trace.timeUs},
            {"address", trace.address},
            {"bytes", trace.bytes},
            {"category", trace.category},
            {"phase", trace.phase},
            {"step", trace.step},
            {"path", trace.path},
            {"allocated", trace.allocated},
            {"reserved", trace.reserved},
            {"phases", phases},
            {"device_peak_allocated",
             trace.devicePeakAllocated ? json(*trace.devicePeakAllocated) : json(nullptr)},
            {"device_peak_reserved",
             trace.devicePeakReserved ? json(*trace.devicePeakReserved) : json(nullptr)}};
}

// Columns of equal length with values in range; a million events read in
// one pass each.
template <typename T>
std::vector<T> readColumn(const FieldReader& reader, const std::string& key, size_t expected,
                          int64_t limit = -1) {
    const json& column = reader.required(key);
    if (!column.is_array() || (expected != size_t(-1) && column.size() != expected)) {
        throw RunFileError(reader.where(key) + ": expected an array of " +
                           (expected == size_t(-1) ? std::string("numbers")
                                                   : std::to_string(expected) + " numbers"));
    }
    std::vector<T> values;
    values.reserve(column.size());
    for (const json& value : column) {
        if (!value.is_number()) {
            throw RunFileError(reader.where(key) + ": expected numbers only");
        }
        const T number = value.get<T>();
        if (limit >= 0 && (int64_t(number) < -1 || int64_t(number) >= limit)) {
            throw RunFileError(reader.where(key) + ": " + std::to_string(int64_t(number)) +
                               " is out of range 0.." + std::to_string(limit - 1));
        }
        values.push_back(number);
    }
    return values;
}

MemoryTrace readMemory(const FieldReader& reader) {
    MemoryTrace trace;
    trace.device = reader.string("device");
    trace.clockOriginUs = reader.optionalNumber("clock_origin_us").value_or(0);
    for (const json& path : reader.required("paths")) {
        trace.paths.push_back(path.get<std::string>());
    }
    trace.timeUs = readColumn<double>(reader, "time_us", size_t(-1));
    const size_t n = trace.timeUs.size();
    trace.address = readColumn<uint64_t>(reader, "address", n);
    trace.bytes = readColumn<int64_t>(reader, "bytes", n);
    trace.category = readColumn<uint8_t>(reader, "category", n, int64_t(kMemoryCategories));
    trace.phase = readColumn<uint8_t>(reader, "phase", n, 4);
    trace.step = readColumn<int32_t>(reader, "step", n);
    trace.path = readColumn<int32_t>(reader, "path", n, int64_t(trace.paths.size()));
    trace.allocated = readColumn<int64_t>(reader, "allocated", n);
    trace.reserved = readColumn<int64_t>(reader, "reserved", n);
    for (const json& range : reader.required("phases")) {
        if (!range.is_array() || range.size() != 4) {
            throw RunFileError(reader.where("phases") + ": expected [phase, step, start, end]");
        }
        trace.phases.push_back({range[0].get<uint8_t>(), range[1].get<int32_t>(),
                                range[2].get<double>(), range[3].get<double>()});
    }
    if (const auto peak = reader.optionalNumber("device_peak_allocated")) {
        trace.devicePeakAllocated = int64_t(*peak);
    }
    if (const auto peak = reader.optionalNumber("device_peak_reserved")) {
        trace.devicePeakReserved = int64_t(*peak);
    }
    return trace;
}

}  // namespace

std::string runResultToJson(const RunResult& result, int indent) {
    const EnvironmentInfo& env = result.environment;
    const RunSummary& s = result.summary;
    json steps = json::array();
    for (const auto& step : result.steps) {
        steps.push_back({{"index", step.index},
                         {"warmup", step.warmup},
                         {"total_ms", step.totalMs},
                         {"forward_ms", optionalNumber(step.forwardMs)},
                         {"backward_ms", optionalNumber(step.backwardMs)},
                         {"optimizer_ms", optionalNumber(step.optimizerMs)},
                         {"loss", optionalNumber(step.loss)}});
    }
    const json document = {
        {"format", "stepscope-run"},
        {"version", kRunFileVersion},
        {"status", toString(result.status)},
        {"message", result.message},
        {"config", configJson(result.config)},
        {"model", {{"name", result.config.model.name}, {"parameters", result.parameterCount}}},
        {"environment",
         {{"stepscope_version", env.stepscopeVersion},
          {"libtorch_version", env.libtorchVersion},
          {"cuda_version", env.cudaVersion},
          {"device_name", env.deviceName},
          {"cpu_model", env.cpuModel},
          {"cpu_threads", env.cpuThreads},
          {"hostname", env.hostname},
          {"started_at", env.startedAt}}},
        {"steps", steps},
        {"operators", timeRowsJson(result.operators)},
        {"kernels", timeRowsJson(result.kernels)},
        {"flop_groups", flopGroupsJson(result.flopGroups)},
        {"timeline", timelineJson(result.timeline)},
        {"memory", memoryJson(result.memory)},
        {"summary",
         {{"total_ms", statsJson(s.total)},
          {"forward_ms", optionalStats(s.forward)},
          {"backward_ms", optionalStats(s.backward)},
          {"optimizer_ms", optionalStats(s.optimizer)},
          {"tokens_per_second", s.tokensPerSecond},
          {"flops_per_step", s.flopsPerStep},
          {"achieved_flops_per_second", s.achievedFlopsPerSecond},
          {"device_peak_flops_per_second", optionalNumber(s.devicePeakFlopsPerSecond)},
          {"mfu", optionalNumber(s.mfu)}}},
    };
    return document.dump(indent) + "\n";
}

RunResult runResultFromJson(const std::string& text) {
    const json document = parseJson(text);
    const FieldReader root(document, "run");
    if (root.stringOr("format", "") != "stepscope-run") {
        throw RunFileError("run.format: not a StepScope run file (expected \"stepscope-run\")");
    }
    const int64_t version = root.integer("version");
    if (version != kRunFileVersion) {
        throw RunFileError("run.version: version " + std::to_string(version) +
                           " is not supported; this StepScope reads version " +
                           std::to_string(kRunFileVersion));
    }
    RunResult result;
    result.status = root.choice<RunStatus>("status", parseRunStatus,
                                           "ok, oom, failed, cancelled, refused, unavailable");
    result.message = root.stringOr("message", "");
    result.config = configFromJson(root.object("config"));
    result.parameterCount = root.object("model").integer("parameters");

    const FieldReader env = root.object("environment");
    result.environment.stepscopeVersion = env.stringOr("stepscope_version", "");
    result.environment.libtorchVersion = env.stringOr("libtorch_version", "");
    result.environment.cudaVersion = env.stringOr("cuda_version", "");
    result.environment.deviceName = env.stringOr("device_name", "");
    result.environment.cpuModel = env.stringOr("cpu_model", "");
    result.environment.cpuThreads = static_cast<int>(env.integer("cpu_threads"));
    result.environment.hostname = env.stringOr("hostname", "");
    result.environment.startedAt = env.stringOr("started_at", "");

    root.forEachItem("steps", [&](const FieldReader& step) {
        StepRecord record;
        record.index = static_cast<int>(step.integer("index"));
        record.warmup = step.boolean("warmup");
        record.totalMs = step.number("total_ms");
        record.forwardMs = step.optionalNumber("forward_ms");
        record.backwardMs = step.optionalNumber("backward_ms");
        record.optimizerMs = step.optionalNumber("optimizer_ms");
        record.loss = step.optionalNumber("loss");
        result.steps.push_back(record);
    });
    result.operators = readTimeRows(root, "operators");
    result.kernels = readTimeRows(root, "kernels");
    if (root.has("flop_groups")) {
        root.forEachItem("flop_groups", [&](const FieldReader& item) {
            FlopGroupRow row;
            row.group = item.string("group");
            row.flopsPerStep = item.number("flops_per_step");
            row.msPerStep = item.number("ms_per_step");
            row.achievedFlopsPerSecond = item.number("achieved_flops_per_second");
            result.flopGroups.push_back(row);
        });
    }
    if (root.has("memory") && !root.required("memory").is_null()) {
        result.memory = readMemory(root.object("memory"));
    }
    if (root.has("timeline")) {
        result.timeline = readTimeline(root.object("timeline"));
    }
    // The summary is derived data: recompute it so that it always agrees with the steps.
    const FieldReader summary = root.object("summary");
    result.summary = summarizeSteps(result.steps, result.config,
                                    summary.optionalNumber("device_peak_flops_per_second"));
    return result;
}

std::string runConfigToJson(const RunConfig& config) {
    return configJson(config).dump();
}

RunConfig runConfigFromJson(const std::string& text) {
    const json document = parseJson(text);
    return configFromJson(FieldReader(document, "config"));
}

void writeRunFile(const RunResult& result, const std::string& path) {
    writeFileAtomically(path, runResultToJson(result));
}

RunResult readRunFile(const std::string& path) {
    std::string text;
    try {
        text = readFile(path);
    } catch (const std::exception& error) {
        throw RunFileError(error.what());
    }
    try {
        return runResultFromJson(text);
    } catch (const RunFileError& error) {
        throw RunFileError("'" + path + "': " + error.what());
    }
}

}  // namespace stepscope
