#include "results/run_file.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#ifdef STEPSCOPE_HAVE_SIMDJSON
#include <simdjson.h>
#endif

#include "config/config_field.h"
#include "config/limits.h"
#include "results/breakdown.h"
#include "results/json_text.h"
#include "util/atomic_file.h"
#include "util/checked_math.h"
#include "util/strings.h"

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
    // A whole number in min..max (util/checked_math.h's one conversion).
    int64_t integer(const std::string& key, int64_t min = std::numeric_limits<int64_t>::min(),
                    int64_t max = std::numeric_limits<int64_t>::max()) const {
        std::string problem;
        const auto value = jsonInteger(required(key), problem, min, max);
        if (!value) {
            throw RunFileError(where(key) + ": " + problem);
        }
        return *value;
    }
    // A whole number in 0..2^64-1 (a seed).
    uint64_t unsignedInteger(const std::string& key) const {
        const json& value = required(key);
        if (value.is_number_unsigned()) {
            return value.get<uint64_t>();
        }
        return uint64_t(integer(key, 0));
    }
    // A count or a size: a whole number ≥ 0.
    int64_t count(const std::string& key) const { return integer(key, 0); }
    // A whole number that an `int` holds, at least `min`.
    int smallInteger(const std::string& key, int min) const {
        return int(integer(key, min, std::numeric_limits<int>::max()));
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

json parseJson(std::string_view text) {
    try {
        return json::parse(text);
    } catch (const json::exception& error) {
        const size_t first = text.find_first_not_of(" \t\r\n");
        if (!dynamic_cast<const json::out_of_range*>(&error) &&
            (first == std::string_view::npos || (text[first] != '{' && text[first] != '['))) {
            throw RunFileError(
                "not a StepScope run file (a JSON file made by StepScope; this one is not JSON)");
        }
        throw RunFileError(jsonParseProblem(error, text));
    }
}

json modelJson(const ModelDims& m) {
    return {{"name", m.name},
            {"d_model", m.dModel},
            {"d_ff", m.dFf},
            {"layers", m.layers},
            {"heads", m.heads},
            {"vocab", m.vocabSize},
            {"max_context", m.maxContext},
            {"rope_theta", m.ropeTheta}};
}

json valueJson(const ConfigValue& value) {
    return std::visit([](const auto& held) { return json(held); }, value);
}

// Every field of the table (config/config_field.h) that the file holds.
json configJson(const RunConfig& config) {
    json object = json::object();
    for (const ConfigField& field : configFields()) {
        if (field.key.empty()) {
            continue;  // this machine's, not the run's
        }
        if (field.type == FieldType::Model) {
            object[field.key] = modelJson(config.model);
            continue;
        }
        const ConfigValue value = field.get(config);
        if (field.writtenWhenDefault || value != field.defaultValue()) {
            object[field.key] = valueJson(value);
        }
    }
    return object;
}

ModelDims readModel(const FieldReader& model) {
    ModelDims dims;
    dims.name = model.string("name");
    dims.dModel = model.integer("d_model");
    dims.dFf = model.integer("d_ff");
    dims.layers = model.integer("layers");
    dims.heads = model.integer("heads");
    dims.vocabSize = model.integer("vocab");
    dims.maxContext = model.integer("max_context");
    dims.ropeTheta = model.number("rope_theta");
    return dims;
}

// An integer field's value, within what its member holds (an `int` must not
// take 2^40 as 0): its declared range, which validate() checks again with its
// own message; a range checked with the model (config/limits.h) is checked
// after reading.
ConfigValue readInteger(const FieldReader& reader, const ConfigField& field) {
    if (std::holds_alternative<uint64_t>(field.defaultValue())) {
        return reader.unsignedInteger(field.key);
    }
    if (field.rangeElsewhere) {
        return reader.integer(field.key);
    }
    return reader.integer(field.key, field.min, field.max);
}

// One field's value, with a message that names its key and what it allows.
void readField(const FieldReader& reader, const ConfigField& field, RunConfig& config) {
    switch (field.type) {
        case FieldType::Model:
            config.model = readModel(reader.object(field.key));
            return;
        case FieldType::Integer:
            field.set(config, readInteger(reader, field));
            return;
        case FieldType::Switch:
            field.set(config, reader.boolean(field.key));
            return;
        case FieldType::Number:
            field.set(config, reader.number(field.key));  // its range: validate()'s
            return;
        default: {
            const std::string text = reader.string(field.key);
            try {
                field.set(config, text);
            } catch (const InvalidConfigError&) {
                throw RunFileError(reader.where(field.key) + ": '" + text + "' is not one of " +
                                   field.allowed());
            }
        }
    }
}

RunConfig configFromJson(const FieldReader& reader) {
    RunConfig config;
    for (const ConfigField& field : configFields()) {
        // A key the first version lacked is missing from older files: its default.
        if (!field.key.empty() && (field.requiredInFile || reader.has(field.key))) {
            readField(reader, field, config);
        }
    }
    // Numbers beyond the world's limits are refused here, before a reader
    // loops over the layers or sizes anything by them (config/limits.h).
    // Zeros are left to validate(): results made without a model (tests,
    // tools) have them, and no reader does work for them.
    for (const auto& problem : modelLimitProblems(config.model)) {
        if (problem.overMaximum) {
            throw RunFileError(reader.object("model").where(problem.field) + ": " +
                               problem.message);
        }
    }
    for (const auto& problem :
         workloadLimitProblems(config.model, config.contextLength, config.batchSize)) {
        if (problem.overMaximum) {
            throw RunFileError(reader.where(problem.field) + ": " + problem.message);
        }
    }
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
        row.calls = item.count("calls");
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
    timeline.step = reader.smallInteger("step", -1);
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
    json memory = {{"device", trace.device},
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
    if (trace.op.size() == trace.size()) {
        memory["op"] = trace.op;  // absent from older files and from traces without it
    }
    return memory;
}

// Columns of equal length with values in range; a million events read in
// one pass each. Integers go through the one checked conversion, within
// `min`..`max` and what T holds: 257 must not pass as category 1, 1.5 as 1,
// or 1e300 as -2^63.
template <typename T>
std::vector<T> readColumn(const FieldReader& reader, const std::string& key, size_t expected,
                          int64_t min = std::numeric_limits<int64_t>::min(),
                          int64_t max = std::numeric_limits<int64_t>::max()) {
    const json& column = reader.required(key);
    if (!column.is_array() || (expected != size_t(-1) && column.size() != expected)) {
        throw RunFileError(reader.where(key) + ": expected an array of " +
                           (expected == size_t(-1) ? std::string("numbers")
                                                   : std::to_string(expected) + " numbers"));
    }
    std::vector<T> values;
    values.reserve(column.size());
    if constexpr (!std::is_floating_point_v<T>) {
        min = std::max(min, int64_t(std::numeric_limits<T>::min()));
        max = int64_t(std::min<uint64_t>(uint64_t(max), uint64_t(std::numeric_limits<T>::max())));
    }
    for (size_t i = 0; i < column.size(); ++i) {
        const json& value = column[i];
        if (!value.is_number()) {
            throw RunFileError(reader.where(key) + ": expected numbers only");
        }
        if constexpr (std::is_floating_point_v<T>) {
            values.push_back(value.get<T>());
        } else if (std::is_same_v<T, uint64_t> && value.is_number_unsigned()) {
            values.push_back(T(value.get<uint64_t>()));  // an address past 2^63
        } else {
            std::string problem;
            const auto whole = jsonInteger(value, problem, min, max);
            if (!whole) {
                throw RunFileError(reader.where(key) + "[" + std::to_string(i) + "]: " + problem);
            }
            values.push_back(T(*whole));
        }
    }
    return values;
}

MemoryTrace readMemory(const FieldReader& reader) {
    MemoryTrace trace;
    trace.device = reader.string("device");
    trace.clockOriginUs = reader.optionalNumber("clock_origin_us").value_or(0);
    const json& paths = reader.required("paths");
    if (!paths.is_array()) {
        throw RunFileError(reader.where("paths") + ": expected an array of strings");
    }
    for (size_t i = 0; i < paths.size(); ++i) {
        if (!paths[i].is_string()) {
            throw RunFileError(reader.where("paths") + "[" + std::to_string(i) +
                               "]: expected a string");
        }
        trace.paths.push_back(paths[i].get<std::string>());
    }
    trace.timeUs = readColumn<double>(reader, "time_us", size_t(-1));
    const size_t n = trace.timeUs.size();
    const auto pathCount = int64_t(trace.paths.size());
    trace.address = readColumn<uint64_t>(reader, "address", n);
    trace.bytes = readColumn<int64_t>(reader, "bytes", n);  // + allocated, − freed
    trace.category = readColumn<uint8_t>(reader, "category", n, 0, int64_t(kMemoryCategories) - 1);
    trace.phase = readColumn<uint8_t>(reader, "phase", n, 0, 3);
    trace.step = readColumn<int32_t>(reader, "step", n, -1);
    trace.path = readColumn<int32_t>(reader, "path", n, -1, pathCount - 1);
    if (reader.has("op")) {
        trace.op = readColumn<int32_t>(reader, "op", n, -1, pathCount - 1);
    }
    trace.allocated = readColumn<int64_t>(reader, "allocated", n, 0);  // sizes
    trace.reserved = readColumn<int64_t>(reader, "reserved", n, 0);
    const json& phases = reader.required("phases");
    if (!phases.is_array()) {
        throw RunFileError(reader.where("phases") + ": expected an array");
    }
    for (size_t i = 0; i < phases.size(); ++i) {
        const json& range = phases[i];
        const bool fits = range.is_array() && range.size() == 4 && range[0].is_number_integer() &&
                          range[0].get<int64_t>() >= 0 && range[0].get<int64_t>() < 4 &&
                          range[1].is_number_integer() &&
                          std::in_range<int32_t>(range[1].get<int64_t>()) && range[2].is_number() &&
                          range[3].is_number();
        if (!fits) {
            throw RunFileError(reader.where("phases") + "[" + std::to_string(i) +
                               "]: expected [phase 0-3, step, start_us, end_us]");
        }
        trace.phases.push_back({range[0].get<uint8_t>(), range[1].get<int32_t>(),
                                range[2].get<double>(), range[3].get<double>()});
    }
    for (const auto& [key, peak] : {std::pair{"device_peak_allocated", &trace.devicePeakAllocated},
                                    std::pair{"device_peak_reserved", &trace.devicePeakReserved}}) {
        if (reader.has(key) && !reader.required(key).is_null()) {
            *peak = reader.count(key);
        }
    }
    return trace;
}

#ifdef STEPSCOPE_HAVE_SIMDJSON
// The memory section holds nearly all of a large run file's bytes (ten
// numbers per event), and nlohmann spends over a second on a million events.
// simdjson reads it straight into the columns; the rest of the file, small,
// still goes through nlohmann with the memory value replaced by null. Any
// trouble on this path sends the whole file down the nlohmann path, so error
// messages stay those of readMemory.
namespace fast {

using namespace simdjson;

struct Failed {};  // any error: the caller falls back to the careful path

template <typename T>
T check(simdjson_result<T> result) {
    T value;
    if (std::move(result).get(value) != SUCCESS) {
        throw Failed{};
    }
    return value;
}

// Integers in min..max and what T holds; anything else (1.5, 1e300, a
// negative size) sends the file down the careful path, which names it.
template <typename T>
void readColumn(ondemand::value value, std::vector<T>& out,
                int64_t min = std::numeric_limits<int64_t>::min(),
                int64_t max = std::numeric_limits<int64_t>::max()) {
    out.clear();
    for (auto element : check(value.get_array())) {
        T number;
        if constexpr (std::is_floating_point_v<T>) {
            number = T(check(element.get_double()));
        } else if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8) {
            number = T(check(element.get_uint64()));
        } else {
            const int64_t wide = check(element.get_int64());
            if (wide < min || wide > max || !std::in_range<T>(wide)) {
                throw Failed{};  // the careful path says which value
            }
            number = T(wide);
        }
        out.push_back(number);
    }
}

std::optional<double> optionalNumber(ondemand::value value) {
    if (check(value.is_null())) {
        return std::nullopt;
    }
    return check(value.get_double());
}

// A size the file may leave null: a whole number ≥ 0, or the careful path.
std::optional<int64_t> optionalSize(ondemand::value value) {
    const std::optional<double> number = optionalNumber(value);
    if (!number) {
        return std::nullopt;
    }
    const std::optional<int64_t> size = integerFromDouble(*number, 0);
    if (!size || *size >= int64_t(1) << 53) {  // a double holds it exactly: the careful path
        throw Failed{};
    }
    return size;
}

// The memory object's parts as they are read, in any order: the columns
// that are checked against "paths" wait here until it has come.
struct PendingMemory {
    MemoryTrace trace;
    std::vector<int32_t> path;
    std::vector<int32_t> op;
    std::vector<uint8_t> category;
    std::vector<uint8_t> phase;
    unsigned seen = 0;     // kDevice | kPaths | kPhases
    unsigned columns = 0;  // one bit a required column, 511 when all nine have come
    bool hasOp = false;
};
enum : unsigned { kDevice = 1, kPaths = 2, kPhases = 4 };

// "phases": [phase, step, start, end] each.
void readPhases(ondemand::value value, std::vector<MemoryTrace::PhaseRange>& phases) {
    for (auto item : check(value.get_array())) {
        std::vector<double> range;
        for (auto number : check(item.get_array())) {
            range.push_back(check(number.get_double()));
        }
        // Only through the checked conversion: the careful path says which is wrong.
        const auto phase = range.size() == 4 ? integerFromDouble(range[0], 0, 3) : std::nullopt;
        const auto step = range.size() == 4
                              ? integerFromDouble(range[1], std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max())
                              : std::nullopt;
        if (!phase || !step) {
            throw Failed{};
        }
        phases.push_back({uint8_t(*phase), int32_t(*step), range[2], range[3]});
    }
}

// One field of the memory object; unknown keys are skipped.
void readMemoryField(std::string_view key, ondemand::value value, PendingMemory& memory) {
    MemoryTrace& trace = memory.trace;
    if (key == "device") {
        trace.device = std::string(check(value.get_string()));
        memory.seen |= kDevice;
    } else if (key == "clock_origin_us") {
        trace.clockOriginUs = optionalNumber(value).value_or(0);
    } else if (key == "paths") {
        for (auto name : check(value.get_array())) {
            trace.paths.emplace_back(check(name.get_string()));
        }
        memory.seen |= kPaths;
    } else if (key == "time_us") {
        readColumn(value, trace.timeUs);
        memory.columns |= 1;
    } else if (key == "address") {
        readColumn(value, trace.address);
        memory.columns |= 2;
    } else if (key == "bytes") {
        readColumn(value, trace.bytes);
        memory.columns |= 4;
    } else if (key == "category") {
        readColumn(value, memory.category, 0, int64_t(kMemoryCategories) - 1);
        memory.columns |= 8;
    } else if (key == "phase") {
        readColumn(value, memory.phase, 0, 3);
        memory.columns |= 16;
    } else if (key == "step") {
        readColumn(value, trace.step, -1);
        memory.columns |= 32;
    } else if (key == "path") {
        readColumn(value, memory.path, -1);
        memory.columns |= 64;
    } else if (key == "op") {
        readColumn(value, memory.op, -1);
        memory.hasOp = true;
    } else if (key == "allocated") {
        readColumn(value, trace.allocated, 0);
        memory.columns |= 128;
    } else if (key == "reserved") {
        readColumn(value, trace.reserved, 0);
        memory.columns |= 256;
    } else if (key == "phases") {
        readPhases(value, trace.phases);
        memory.seen |= kPhases;
    } else if (key == "device_peak_allocated") {
        trace.devicePeakAllocated = optionalSize(value);
    } else if (key == "device_peak_reserved") {
        trace.devicePeakReserved = optionalSize(value);
    }
}

// Every part there, every column as long as the first, every path id in "paths".
bool isComplete(const PendingMemory& memory) {
    const MemoryTrace& trace = memory.trace;
    const size_t n = trace.timeUs.size();
    const auto paths = int32_t(trace.paths.size());
    const auto inPaths = [&](const std::vector<int32_t>& ids) {
        return std::all_of(ids.begin(), ids.end(),
                           [&](int32_t id) { return id >= -1 && id < paths; });
    };
    return memory.seen == (kDevice | kPaths | kPhases) && memory.columns == 511 &&
           trace.address.size() == n && trace.bytes.size() == n && memory.category.size() == n &&
           memory.phase.size() == n && trace.step.size() == n && memory.path.size() == n &&
           trace.allocated.size() == n && trace.reserved.size() == n &&
           (!memory.hasOp || memory.op.size() == n) && inPaths(memory.path) && inPaths(memory.op);
}

// Reads the memory object the iterator stands on; limits are checked after
// all columns are in, since "paths" may come after the columns.
MemoryTrace readMemory(ondemand::object object) {
    PendingMemory memory;
    for (auto field : object) {
        const std::string_view key = check(field.unescaped_key());
        readMemoryField(key, check(field.value()), memory);
    }
    if (!isComplete(memory)) {
        throw Failed{};
    }
    MemoryTrace& trace = memory.trace;
    trace.category = std::move(memory.category);
    trace.phase = std::move(memory.phase);
    trace.path = std::move(memory.path);
    trace.op = std::move(memory.op);
    return std::move(trace);
}

// The file without its memory value (null in its place) and the memory read,
// or nullopt when the file is not shaped as expected.
struct Split {
    std::string rest;
    MemoryTrace memory;
};

std::optional<Split> splitMemory(padded_string_view text) {
    try {
        ondemand::parser parser;
        ondemand::document document = check(parser.iterate(text));
        const char* begin = text.data();
        for (auto field : check(document.get_object())) {
            if (check(field.unescaped_key()) != "memory") {
                continue;
            }
            ondemand::value value = check(field.value());
            if (check(value.type()) != ondemand::json_type::object) {
                return std::nullopt;  // null, or wrong: the careful path says which
            }
            const size_t start = size_t(check(value.current_location()) - begin);
            Split split;
            split.memory = readMemory(check(value.get_object()));
            // The iterator now stands on the token after the memory object.
            const size_t end = size_t(check(document.current_location()) - begin);
            if (start >= end || end > text.size() || text[start] != '{') {
                return std::nullopt;
            }
            split.rest.reserve(text.size() - (end - start) + 4);
            split.rest.append(text.substr(0, start)).append("null").append(text.substr(end));
            return split;
        }
    } catch (const Failed&) {
    }
    return std::nullopt;
}

}  // namespace fast
#endif

}  // namespace

json slurmEnvironmentJson(const EnvironmentInfo& env) {
    if (env.slurmJobId.empty() && env.slurmArrayJobId.empty() && env.slurmArrayTaskId.empty() &&
        env.slurmNode.empty()) {
        return nullptr;
    }
    return {{"job_id", env.slurmJobId},
            {"array_job_id", env.slurmArrayJobId},
            {"array_task_id", env.slurmArrayTaskId},
            {"node", env.slurmNode}};
}

json stepsJson(const std::vector<StepRecord>& records) {
    json steps = json::array();
    for (const auto& step : records) {
        json item = {{"index", step.index},
                     {"warmup", step.warmup},
                     {"total_ms", step.totalMs},
                     {"forward_ms", optionalNumber(step.forwardMs)},
                     {"backward_ms", optionalNumber(step.backwardMs)},
                     {"optimizer_ms", optionalNumber(step.optimizerMs)},
                     {"loss", optionalNumber(step.loss)}};
        if (step.communicationWaitMs) {  // a distributed run's
            item["comm_wait_ms"] = *step.communicationWaitMs;
        }
        steps.push_back(std::move(item));
    }
    return steps;
}

json optionalBytes(const std::optional<int64_t>& bytes) {
    return bytes ? json(*bytes) : json(nullptr);
}

json rankJson(const RankRecord& rank) {
    json phases = json::array();
    for (const PhaseSpan& phase : rank.phases) {
        phases.push_back({{"step", phase.step},
                          {"phase", phase.phase},
                          {"start_us", phase.startUs},
                          {"end_us", phase.endUs}});
    }
    json collectives = json::array();
    for (const CollectiveSpan& span : rank.spans.collectives) {
        collectives.push_back({{"op", span.op},
                               {"group", span.group},
                               {"seq", span.sequence},
                               {"bytes", span.bytes},
                               {"dtype", span.dtype},
                               {"phase", span.phase},
                               {"thread", span.thread},
                               {"step", span.step},
                               {"async", !span.blocking},
                               {"start_us", span.startUs},
                               {"end_us", span.endUs}});
    }
    json byCategory = json::object();
    for (const auto& [category, bytes] : rank.memory.byCategory) {
        byCategory[category] = optionalBytes(bytes);
    }
    const RankCommunication& c = rank.communication;
    return {{"rank", rank.rank},
            {"host", rank.host},
            {"steps", stepsJson(rank.steps)},
            {"phases", phases},
            {"collectives", collectives},
            {"communication",
             {{"time_us", c.communicationUs},
              {"compute_us", c.computeUs},
              {"exposed_us", c.exposedUs},
              {"overlap_pct", c.overlapPercent},
              {"collectives", c.collectives},
              {"bytes", c.bytes},
              {"wait_us", c.waitUs}}},
            {"memory",
             {{"peak_bytes", optionalBytes(rank.memory.peakBytes)},
              {"after_init_bytes", optionalBytes(rank.memory.afterInitBytes)},
              {"before_optimizer_bytes", optionalBytes(rank.memory.beforeOptimizerBytes)},
              {"after_optimizer_bytes", optionalBytes(rank.memory.afterOptimizerBytes)},
              {"by_category", byCategory}}}};
}

// A distributed run's sections: each rank's record, the collectives matched
// across ranks, the straggler, the gate. A reader recomputes the matched
// collectives and figures from the ranks' spans; they are written for
// whoever reads the file without StepScope.
void addDistributed(json& document, const DistributedRun& run) {
    json ranks = json::array();
    for (const RankRecord& rank : run.ranks) {
        ranks.push_back(rankJson(rank));
    }
    json matched = json::array();
    for (const MatchedCollective& collective : run.collectives) {
        matched.push_back({{"op", collective.op},
                           {"group", collective.group},
                           {"seq", collective.sequence},
                           {"bytes", collective.bytes},
                           {"transfer_us", collective.transferUs},
                           {"wait_us", collective.waitUs}});
    }
    document["ranks"] = ranks;
    document["collectives"] = matched;
    document["unmatched_collectives"] = run.unmatched;
    document["straggler"] = run.straggler ? json{{"rank", run.straggler->rank},
                                                 {"others_wait_us", run.straggler->othersWaitUs}}
                                          : json(nullptr);
    if (run.gate) {
        document["gate"] = {{"ok", run.gate->ok},
                            {"max_rel_error", optionalNumber(run.gate->maxRelError)},
                            {"worst_parameter", run.gate->worstParameter},
                            {"tolerance", run.gate->tolerance}};
    }
}

std::string runResultToJson(const RunResult& result, int indent) {
    const EnvironmentInfo& env = result.environment;
    const RunSummary& s = result.summary;
    const json steps = stepsJson(result.steps);
    json document = {
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
          {"started_at", env.startedAt},
          {"python", env.python},
          {"python_torch_version", env.pythonTorchVersion},
          {"pid", env.processId},
          {"isolated", env.isolated},
          {"slurm", slurmEnvironmentJson(env)}}},
        {"steps", steps},
        {"compile_ms", optionalNumber(result.compileMs)},
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
    if (result.cudaGraphKernels) {
        document["cuda_graph_kernels"] = *result.cudaGraphKernels;
    }
    if (!result.origin.empty()) {
        document["origin"] = result.origin;
    }
    if (result.distributed) {
        addDistributed(document, *result.distributed);
        document["summary"]["comm_wait_ms"] = optionalStats(s.communicationWait);
    }
    return document.dump(indent) + "\n";
}

namespace {

// The format and version, which say whether the rest can be read at all.
void checkFormatAndVersion(const FieldReader& root) {
    if (root.stringOr("format", "") != "stepscope-run") {
        throw RunFileError("run.format: not a StepScope run file (expected \"stepscope-run\")");
    }
    const int64_t version = root.integer("version");  // any whole number: the message says which
    if (version != kRunFileVersion) {
        throw RunFileError("run.version: version " + std::to_string(version) +
                           " is not supported; this StepScope reads version " +
                           std::to_string(kRunFileVersion));
    }
}

// "origin" came after files saved from a snapshot or a trace: those say what
// they are only by a config that names no model, which no run of ours has.
std::string readOrigin(const FieldReader& root, const RunConfig& config) {
    if (root.has("origin")) {
        const std::string origin = root.stringOr("origin", "");
        for (const char* known : {kOriginMemorySnapshot, kOriginProfilerTrace, kOriginPyTorch}) {
            if (origin == known) {
                return origin;
            }
        }
        throw RunFileError(std::string("run.origin: '") + origin + "' is not one of " +
                           kOriginMemorySnapshot + ", " + kOriginProfilerTrace + ", " +
                           kOriginPyTorch);
    }
    return config.model.dModel == 0 ? kOriginPyTorch : "";
}

EnvironmentInfo readEnvironment(const FieldReader& env) {
    EnvironmentInfo environment;
    environment.stepscopeVersion = env.stringOr("stepscope_version", "");
    environment.libtorchVersion = env.stringOr("libtorch_version", "");
    environment.cudaVersion = env.stringOr("cuda_version", "");
    environment.deviceName = env.stringOr("device_name", "");
    environment.cpuModel = env.stringOr("cpu_model", "");
    environment.cpuThreads = env.smallInteger("cpu_threads", 0);
    environment.hostname = env.stringOr("hostname", "");
    environment.startedAt = env.stringOr("started_at", "");
    environment.python = env.stringOr("python", "");
    environment.pythonTorchVersion = env.stringOr("python_torch_version", "");
    environment.processId = env.has("pid") ? env.smallInteger("pid", 0) : 0;
    environment.isolated = env.has("isolated") ? env.boolean("isolated") : false;
    if (env.has("slurm") && !env.required("slurm").is_null()) {
        const FieldReader slurm = env.object("slurm");
        environment.slurmJobId = slurm.stringOr("job_id", "");
        environment.slurmArrayJobId = slurm.stringOr("array_job_id", "");
        environment.slurmArrayTaskId = slurm.stringOr("array_task_id", "");
        environment.slurmNode = slurm.stringOr("node", "");
    }
    return environment;
}

std::vector<StepRecord> readSteps(const FieldReader& root) {
    std::vector<StepRecord> steps;
    root.forEachItem("steps", [&](const FieldReader& step) {
        StepRecord record;
        record.index = step.smallInteger("index", 0);
        record.warmup = step.boolean("warmup");
        record.totalMs = step.number("total_ms");
        record.forwardMs = step.optionalNumber("forward_ms");
        record.backwardMs = step.optionalNumber("backward_ms");
        record.optimizerMs = step.optionalNumber("optimizer_ms");
        record.loss = step.optionalNumber("loss");
        record.communicationWaitMs = step.optionalNumber("comm_wait_ms");
        steps.push_back(record);
    });
    return steps;
}

std::optional<int64_t> optionalBytes(const FieldReader& object, const std::string& key) {
    if (!object.has(key) || object.required(key).is_null()) {
        return std::nullopt;
    }
    return object.count(key);
}

RankRecord readRank(const FieldReader& item, int ranks) {
    RankRecord rank;
    rank.rank = int(item.integer("rank", 0, ranks - 1));
    rank.host = item.stringOr("host", "");
    rank.steps = readSteps(item);
    item.forEachItem("phases", [&](const FieldReader& phase) {
        rank.phases.push_back({phase.smallInteger("step", 0), phase.string("phase"),
                               phase.number("start_us"), phase.number("end_us")});
    });
    item.forEachItem("collectives", [&](const FieldReader& span) {
        CollectiveSpan read;
        read.op = span.string("op");
        read.group = span.string("group");
        read.sequence = span.count("seq");
        read.bytes = span.count("bytes");
        read.dtype = span.stringOr("dtype", "");
        read.phase = span.stringOr("phase", "");
        read.thread = span.stringOr("thread", "");
        read.step = span.has("step") ? int(span.integer("step", -1, INT_MAX)) : -1;
        read.blocking = span.has("async") && !span.boolean("async");
        read.startUs = span.number("start_us");
        read.endUs = span.number("end_us");
        rank.spans.collectives.push_back(std::move(read));
    });
    const FieldReader memory = item.object("memory");
    rank.memory.peakBytes = optionalBytes(memory, "peak_bytes");
    rank.memory.afterInitBytes = optionalBytes(memory, "after_init_bytes");
    rank.memory.beforeOptimizerBytes = optionalBytes(memory, "before_optimizer_bytes");
    rank.memory.afterOptimizerBytes = optionalBytes(memory, "after_optimizer_bytes");
    const json& categories = memory.required("by_category");
    if (!categories.is_object()) {
        throw RunFileError(memory.where("by_category") + ": expected an object");
    }
    const FieldReader byCategory(categories, memory.where("by_category"));
    for (const auto& entry : categories.items()) {
        rank.memory.byCategory.emplace_back(entry.key(), optionalBytes(byCategory, entry.key()));
    }
    return rank;
}

// A distributed run's ranks and gate; what matching their spans says is
// computed again, not read (a file cannot make it disagree with its spans).
std::optional<DistributedRun> readDistributed(const FieldReader& root, const RunConfig& config) {
    if (!root.has("ranks")) {
        return std::nullopt;
    }
    DistributedRun run;
    root.forEachItem("ranks", [&](const FieldReader& item) {
        run.ranks.push_back(readRank(item, config.ranks));
    });
    for (size_t r = 0; r < run.ranks.size(); ++r) {
        if (run.ranks[r].rank != int(r)) {
            throw RunFileError(root.where("ranks") + "[" + std::to_string(r) + "].rank: expected " +
                               std::to_string(r) + " (the ranks in order, each once)");
        }
    }
    if (root.has("gate")) {
        const FieldReader gate = root.object("gate");
        run.gate = CorrectnessGate{gate.boolean("ok"), gate.optionalNumber("max_rel_error"),
                                   gate.stringOr("worst_parameter", ""), gate.number("tolerance")};
    }
    analyzeRanks(run);
    return run;
}

// Files written before FLOP groups existed have none.
std::vector<FlopGroupRow> readFlopGroups(const FieldReader& root) {
    std::vector<FlopGroupRow> rows;
    if (root.has("flop_groups")) {
        root.forEachItem("flop_groups", [&](const FieldReader& item) {
            FlopGroupRow row;
            row.group = item.string("group");
            row.flopsPerStep = item.number("flops_per_step");
            row.msPerStep = item.number("ms_per_step");
            row.achievedFlopsPerSecond = item.number("achieved_flops_per_second");
            rows.push_back(row);
        });
    }
    return rows;
}

// `padded`: the same text with simdjson's padding after it, where there is.
RunResult fromJson(std::string_view text, [[maybe_unused]] const char* padded) {
#ifdef STEPSCOPE_HAVE_SIMDJSON
    std::optional<fast::Split> split;
    if (padded) {
        split = fast::splitMemory(simdjson::padded_string_view(
            padded, text.size(), text.size() + simdjson::SIMDJSON_PADDING));
    } else {
        const simdjson::padded_string copy(text);
        split = fast::splitMemory(copy);
    }
    const json document = parseJson(split ? std::string_view(split->rest) : text);
#else
    const json document = parseJson(text);
#endif
    const FieldReader root(document, "run");
    checkFormatAndVersion(root);
    RunResult result;
    result.status = root.choice<RunStatus>(
        "status", parseRunStatus, "ok, oom, failed, cancelled, refused, unavailable, incorrect");
    result.message = root.stringOr("message", "");
    result.config = configFromJson(root.object("config"));
    result.parameterCount = root.object("model").count("parameters");
    result.environment = readEnvironment(root.object("environment"));
    result.compileMs = root.optionalNumber("compile_ms");
    result.origin = readOrigin(root, result.config);
    if (root.has("cuda_graph_kernels")) {
        result.cudaGraphKernels = root.count("cuda_graph_kernels");
    }
    result.steps = readSteps(root);
    result.operators = readTimeRows(root, "operators");
    result.kernels = readTimeRows(root, "kernels");
    result.flopGroups = readFlopGroups(root);
    result.distributed = readDistributed(root, result.config);
    if (root.has("memory") && !root.required("memory").is_null()) {
        result.memory = readMemory(root.object("memory"));
    }
#ifdef STEPSCOPE_HAVE_SIMDJSON
    if (split) {
        result.memory = std::move(split->memory);
    }
#endif
    if (root.has("timeline")) {
        result.timeline = readTimeline(root.object("timeline"));
    }
    // The summary is derived data: recompute it so that it always agrees with the steps.
    const FieldReader summary = root.object("summary");
    result.summary = summarizeSteps(result.steps, result.config,
                                    summary.optionalNumber("device_peak_flops_per_second"));
    return result;
}

}  // namespace

RunResult runResultFromJson(const std::string& text) {
    return fromJson(text, nullptr);
}

MemoryTrace memoryTraceFromJson(const json& memory, const std::string& where) {
    return readMemory(FieldReader(memory, where));
}

std::string runConfigToJson(const RunConfig& config) {
    return configJson(config).dump();
}

namespace {

void addDifferences(const json& file, const json& here, const std::string& prefix,
                    std::vector<std::string>& differences) {
    if (file.is_object() && here.is_object()) {
        std::set<std::string> keys;
        for (const auto& [key, value] : file.items()) {
            keys.insert(key);
        }
        for (const auto& [key, value] : here.items()) {
            keys.insert(key);
        }
        for (const auto& key : keys) {
            const json none;
            addDifferences(file.contains(key) ? file.at(key) : none,
                           here.contains(key) ? here.at(key) : none, prefix + key + ".",
                           differences);
        }
    } else if (file != here) {
        differences.push_back(prefix.substr(0, prefix.size() - 1) + ": " + file.dump() +
                              " (file), " + here.dump() + " (here)");
    }
}

}  // namespace

std::vector<std::string> configDifferences(const RunConfig& file, const RunConfig& here) {
    std::vector<std::string> differences;
    addDifferences(configJson(file), configJson(here), "", differences);
    return differences;
}

RunConfig runConfigFromJson(const std::string& text) {
    const json document = parseJson(text);
    return configFromJson(FieldReader(document, "config"));
}

namespace {

const char* typeName(FieldType type) {
    switch (type) {
        case FieldType::Integer:
            return "integer";
        case FieldType::Choice:
            return "choice";
        case FieldType::Switch:
            return "switch";
        case FieldType::Text:
            return "text";
        case FieldType::Path:
            return "path";
        case FieldType::Model:
            return "model";
        case FieldType::Number:
            return "number";
    }
    return "?";
}

const char* sectionName(FieldSection section) {
    static const char* const names[] = {"model",  "workload", "steps",      "trace",
                                        "engine", "data",     "distributed"};
    return names[static_cast<int>(section)];
}

nlohmann::ordered_json fieldSchema(const ConfigField& field) {
    using ordered = nlohmann::ordered_json;
    ordered engines = ordered::array();
    for (const auto& name : engineNames()) {
        if (field.takenBy(*parseEngine(name))) {
            engines.push_back(name);
        }
    }
    ordered out = {{"name", field.name},
                   {"key", field.key.empty() ? ordered(nullptr) : ordered(field.key)},
                   {"type", typeName(field.type)},
                   {"section", sectionName(field.section)},
                   {"help", field.help},
                   {"label", field.label},
                   {"value_name", field.valueName},
                   {"engines", engines},
                   {"sweep", field.sweep},
                   {"required", field.requiredInFile},
                   {"written_when_default", field.writtenWhenDefault},
                   {"names_code", field.code}};
    out["default"] =
        field.type == FieldType::Model
            ? ordered(nullptr)
            : std::visit([](const auto& held) { return ordered(held); }, field.defaultValue());
    if (field.type == FieldType::Integer) {
        out["min"] = field.min;
        out["max"] = field.maxNow ? ordered(nullptr) : ordered(field.max);  // null: this machine's
    }
    if (field.type == FieldType::Choice || field.type == FieldType::Model) {
        out["values"] = field.values;
        out["worker_values"] = field.workerValues;
        out["allowed"] = field.allowed();
        out["any_text"] = field.anyText;
    }
    return out;
}

}  // namespace

std::string configFieldsJson() {
    using ordered = nlohmann::ordered_json;
    ordered engines = ordered::array();
    for (const auto& name : engineNames()) {
        engines.push_back({{"name", name}, {"worker", runsInWorker(*parseEngine(name))}});
    }
    ordered fields = ordered::array();
    for (const ConfigField& field : configFields()) {
        fields.push_back(fieldSchema(field));
    }
    const ordered document = {{"format", "stepscope-config-fields"},
                              {"version", 1},
                              {"made_by", "core/config/run_config_fields.cpp (tst_config_fields)"},
                              {"engines", engines},
                              {"fields", fields}};
    return document.dump(2) + "\n";
}

void writeRunFile(const RunResult& result, const std::string& path) {
    writeFileAtomically(path, runResultToJson(result));
}

RunResult readRunFile(const std::string& path) {
#ifdef STEPSCOPE_HAVE_SIMDJSON
    std::error_code missing;
    if (const auto why = whyNotARegularFile(path); why && std::filesystem::exists(path, missing)) {
        throw RunFileError(*why);  // a FIFO would block the load below, a device never end
    }
    // Straight into a padded buffer: a large file is read once, not copied.
    simdjson::padded_string text;
    if (simdjson::padded_string::load(path).get(text) != simdjson::SUCCESS) {
        throw RunFileError("cannot open '" + path + "'");
    }
    try {
        return fromJson(std::string_view(text.data(), text.size()), text.data());
    } catch (const std::exception& error) {  // any reader's error names the file
        throw RunFileError("'" + path + "': " + error.what());
    }
#else
    std::string text;
    try {
        text = readFile(path);
    } catch (const std::exception& error) {
        throw RunFileError(error.what());
    }
    try {
        return runResultFromJson(text);
    } catch (const std::exception& error) {  // any reader's error names the file
        throw RunFileError("'" + path + "': " + error.what());
    }
#endif
}

}  // namespace stepscope
