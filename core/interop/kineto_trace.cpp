#include "interop/kineto_trace.h"

#include <simdjson.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <unordered_map>

#include "util/atomic_file.h"
#include "util/checked_math.h"
#include "util/strings.h"
#include "util/system_memory.h"

namespace stepscope {

std::string_view toString(TraceCategory category) {
    switch (category) {
        case TraceCategory::CpuOp:
            return "cpu_op";
        case TraceCategory::UserAnnotation:
            return "user_annotation";
        case TraceCategory::GpuUserAnnotation:
            return "gpu_user_annotation";
        case TraceCategory::PythonFunction:
            return "python_function";
        case TraceCategory::CudaRuntime:
            return "cuda_runtime";
        case TraceCategory::CudaDriver:
            return "cuda_driver";
        case TraceCategory::Kernel:
            return "kernel";
        case TraceCategory::GpuMemcpy:
            return "gpu_memcpy";
        case TraceCategory::GpuMemset:
            return "gpu_memset";
        case TraceCategory::Ac2g:
            return "ac2g";
        case TraceCategory::Other:
            return "other";
    }
    return "other";
}

namespace {

using Kind = KinetoTraceError::Kind;
using simdjson::error_code;
namespace od = simdjson::ondemand;

// Beyond these a time is not a time: 1e17 µs is the year 5138 since the
// epoch, 1e13 µs is four months of one event.
constexpr double kMaxAbsTimeUs = 1e17;
constexpr double kMaxDurationUs = 1e13;
constexpr int64_t kMaxRank = int64_t(1) << 24;

std::string shortNumber(double number) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", number);
    return text;
}

[[noreturn]] void fail(Kind kind, const std::string& label, const std::string& what) {
    throw KinetoTraceError(kind, "'" + label + "': " + what);
}

// Bytes with simdjson's padding after them, so the parser may read past the end.
struct PaddedBytes {
    std::vector<char> storage;
    size_t size = 0;
    const char* data() const { return storage.data(); }
    std::string_view view() const { return {storage.data(), size}; }
    void resizeKeepingPadding(size_t bytes) {
        size = bytes;
        storage.resize(bytes + simdjson::SIMDJSON_PADDING);
    }
};

bool isGzip(std::string_view bytes) {
    return bytes.size() >= 2 && uint8_t(bytes[0]) == 0x1f && uint8_t(bytes[1]) == 0x8b;
}

// The most JSON text this process can read: the limit, and what memory holds
// with the parse (a 10 MB .json.gz of 10 GB under an 8 GB limit ended in a
// bare std::bad_alloc).
struct TextBudget {
    uint64_t limit = 0;
    uint64_t room = 0;  // memory this process may still take
    uint64_t most() const { return std::min(limit, room / kParseBytesPerTextByte); }
    // What a refusal of more than `most()` says.
    std::string refusal(const std::string& what) const {
        if (limit <= room / kParseBytesPerTextByte) {
            return what + " more than the limit of " + std::to_string(limit >> 20) + " MiB";
        }
        return what + " more than " + formatBytes(double(most())) +
               ": reading that much JSON takes " + std::to_string(kParseBytesPerTextByte) +
               " times it in memory, and this process may take " + formatBytes(double(room)) +
               " more";
    }
};

TextBudget budgetOf(const KinetoTraceLimits& limits) {
    const int64_t room = limits.memoryRoomBytes.value_or(memoryRoomBytes());
    return {limits.maxBytes, uint64_t(std::max<int64_t>(room, 0))};
}

// Inflates one or more concatenated gzip members into padded bytes, at most
// `budget.most()` of them, growing the buffer as the stream says it goes on
// (its declared size is a hint only); a stream that ends early or does not
// inflate has its own message.
PaddedBytes gunzip(std::string_view compressed, const TextBudget& budget,
                   const std::string& label) {
    const uint64_t limit = budget.most();
    PaddedBytes out;
    // The trailer's size (mod 2^32) is a hint only: a truncated file's trailer
    // is compressed data, so the hint is capped by a generous ratio.
    size_t hint = compressed.size() * 8;
    if (compressed.size() >= 18) {
        uint32_t trailer = 0;
        std::memcpy(&trailer, compressed.data() + compressed.size() - 4, 4);
        hint = std::min<size_t>(trailer, compressed.size() * 64);
    }
    hint = size_t(std::min<uint64_t>(std::max<size_t>(hint, 4096), limit));
    out.resizeKeepingPadding(hint);
    size_t produced = 0;

    z_stream stream{};
    if (inflateInit2(&stream, 15 + 16) != Z_OK) {
        fail(Kind::Gzip, label, "cannot start zlib");
    }
    struct End {
        z_stream* s;
        ~End() { inflateEnd(s); }
    } end{&stream};
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
    size_t inputLeft = compressed.size();
    bool streamEnded = false;
    while (true) {
        if (produced == out.size) {
            if (out.size >= limit) {
                fail(Kind::TooLarge, label, budget.refusal("inflates to"));
            }
            out.resizeKeepingPadding(size_t(std::min<uint64_t>(uint64_t(out.size) * 2, limit)));
        }
        const uInt inChunk = uInt(std::min<size_t>(inputLeft, 1u << 30));
        const uInt outChunk = uInt(std::min<size_t>(out.size - produced, 1u << 30));
        stream.avail_in = inChunk;
        stream.next_out = reinterpret_cast<Bytef*>(out.storage.data() + produced);
        stream.avail_out = outChunk;
        const int status = inflate(&stream, Z_NO_FLUSH);
        inputLeft -= inChunk - stream.avail_in;
        produced += outChunk - stream.avail_out;
        if (status == Z_STREAM_END) {
            streamEnded = true;
            // Another member may follow (gzip allows concatenation); anything
            // else after a complete member is ignored, as Python's gzip does with padding.
            if (inputLeft >= 2 && stream.next_in[0] == 0x1f && stream.next_in[1] == 0x8b) {
                inflateReset(&stream);
                streamEnded = false;
                continue;
            }
            break;
        }
        if (status == Z_DATA_ERROR || status == Z_NEED_DICT || status == Z_MEM_ERROR ||
            status == Z_STREAM_ERROR) {
            fail(Kind::Gzip, label,
                 std::string("corrupt gzip data (") + (stream.msg ? stream.msg : "zlib error") +
                     ") after " + std::to_string(compressed.size() - inputLeft) + " bytes");
        }
        if (inputLeft == 0 && stream.avail_out != 0) {
            break;  // all input used and zlib wants more: truncated
        }
    }
    if (!streamEnded) {
        fail(Kind::Gzip, label,
             "truncated gzip: the compressed stream ends early (" +
                 std::to_string(compressed.size()) + " bytes read, " + std::to_string(produced) +
                 " inflated)");
    }
    out.resizeKeepingPadding(produced);
    return out;
}

// What the first bytes say a file is, when they say it is not JSON.
void refuseNonJson(std::string_view bytes, const std::string& label) {
    size_t start = 0;
    if (bytes.substr(0, 3) == "\xEF\xBB\xBF") {
        start = 3;  // a UTF-8 byte-order mark
    }
    while (start < bytes.size() && (bytes[start] == ' ' || bytes[start] == '\n' ||
                                    bytes[start] == '\r' || bytes[start] == '\t')) {
        ++start;
    }
    if (start == bytes.size()) {
        fail(Kind::NotJson, label,
             bytes.empty() ? "empty file, not a trace" : "only white space, not a trace");
    }
    if (bytes.substr(0, 8) == "\x89PNG\r\n\x1a\n") {
        fail(Kind::NotJson, label, "a PNG image, not a trace");
    }
    if (bytes[start] != '{' && bytes[start] != '[') {
        const bool text = std::all_of(
            bytes.begin() + long(start), bytes.begin() + long(std::min(bytes.size(), start + 64)),
            [](char c) { return uint8_t(c) >= 0x20 || c == '\n' || c == '\r' || c == '\t'; });
        fail(Kind::NotJson, label,
             text ? "text, not JSON: a trace starts with '{' or '['"
                  : "binary data, not a trace (neither JSON nor gzip)");
    }
}

// Every string once; ids are stable, the texts move out at the end.
class StringTable {
public:
    int32_t intern(std::string_view text) {
        const auto found = ids_.find(text);
        if (found != ids_.end()) {
            return found->second;
        }
        texts_.emplace_back(text);
        const int32_t id = int32_t(texts_.size() - 1);
        ids_.emplace(std::string_view(texts_.back()), id);
        return id;
    }
    const std::string& text(int32_t id) const { return texts_[size_t(id)]; }
    size_t size() const { return texts_.size(); }
    std::vector<std::string> release() {
        ids_.clear();
        std::vector<std::string> out;
        out.reserve(texts_.size());
        for (auto& text : texts_) {
            out.push_back(std::move(text));
        }
        texts_.clear();
        return out;
    }

private:
    std::deque<std::string> texts_;  // a deque never moves its elements
    std::unordered_map<std::string_view, int32_t> ids_;
};

// A pid or tid: a number, or a string by its id in the string table.
struct TrackPart {
    int64_t value = 0;
    bool isText = false;
    bool operator==(const TrackPart&) const = default;
};
struct TrackKey {
    TrackPart pid;
    TrackPart tid;
    bool operator==(const TrackKey&) const = default;
};
struct TrackKeyHash {
    size_t operator()(const TrackKey& key) const {
        const uint64_t a = uint64_t(key.pid.value) * 0x9E3779B97F4A7C15ull + key.pid.isText;
        const uint64_t b = uint64_t(key.tid.value) * 0xC2B2AE3D27D4EB4Full + key.tid.isText * 7;
        return size_t(a ^ (b >> 1) ^ (b << 17));
    }
};

// Names the field being read, built only when a message needs it.
struct FieldPath {
    const char* container = "traceEvents";
    int64_t index = -1;  // -1: not in an array
    const char* field = "";
    const char* argument = nullptr;  // inside "args"
    std::string text() const {
        std::string out = container;
        if (index >= 0) {
            out += "[" + std::to_string(index) + "]";
        }
        if (*field) {
            out += std::string(".") + field;
        }
        if (argument) {
            out += std::string(".") + argument;
        }
        return out;
    }
};

// One event's fields as written, before its phase says which of them count.
struct EventFields {
    TraceEvent event;
    std::optional<TrackPart> pid;
    std::optional<TrackPart> tid;
    std::optional<double> ts;
    std::optional<int64_t> flowId;
    bool bindsEnclosing = false;
    char phase = 0;
    int32_t nameId = -1;
    std::string_view metaName;
    bool haveMetaName = false;
};

class Reader {
public:
    Reader(const std::string& label, const KinetoTraceLimits& limits)
        : label_(label), limits_(limits) {}

    KinetoTrace read(const PaddedBytes& bytes);

private:
    // simdjson's errors: a JSON fault for the document, a type fault for the field.
    [[noreturn]] void jsonFault(error_code error, const FieldPath& path) const {
        switch (error) {
            case simdjson::INCORRECT_TYPE:
            case simdjson::NUMBER_ERROR:
            case simdjson::NUMBER_OUT_OF_RANGE:
                fail(Kind::Invalid, label_, path.text() + ": " + simdjson::error_message(error));
            case simdjson::DEPTH_ERROR:
                fail(Kind::NotJson, label_,
                     "not a trace: JSON nested deeper than " +
                         std::to_string(simdjson::DEFAULT_MAX_DEPTH) + " levels at " + path.text());
            case simdjson::UTF8_ERROR:
                fail(Kind::NotJson, label_, "not valid JSON: not UTF-8 text");
            default:
                fail(Kind::NotJson, label_,
                     "not valid JSON at " + path.text() + ": " + simdjson::error_message(error) +
                         (error == simdjson::INCOMPLETE_ARRAY_OR_OBJECT ||
                                  error == simdjson::TAPE_ERROR
                              ? " (a truncated file?)"
                              : ""));
        }
    }
    template <typename T>
    T get(simdjson::simdjson_result<T> result, const FieldPath& path) const {
        T value;
        if (const error_code error = std::move(result).get(value)) {
            jsonFault(error, path);
        }
        return value;
    }
    // The same, saying what the field should have been when it is something else.
    template <typename T>
    T get(simdjson::simdjson_result<T> result, const FieldPath& path, const char* expected) const {
        T value;
        if (const error_code error = std::move(result).get(value)) {
            if (error == simdjson::INCORRECT_TYPE || error == simdjson::NUMBER_ERROR ||
                error == simdjson::NUMBER_OUT_OF_RANGE) {
                invalid(path, std::string("not ") + expected);
            }
            jsonFault(error, path);
        }
        return value;
    }
    [[noreturn]] void invalid(const FieldPath& path, const std::string& what) const {
        fail(Kind::Invalid, label_, path.text() + ": " + what);
    }

    using ValueResult = od::value;

    std::string_view readString(ValueResult value, const FieldPath& path) {
        const std::string_view text = get(value.get_string(), path, "a string");
        if (text.size() > limits_.maxStringBytes) {
            fail(Kind::TooLarge, label_,
                 path.text() + ": a string of " + std::to_string(text.size()) +
                     " bytes, more than the limit of " + std::to_string(limits_.maxStringBytes));
        }
        return text;
    }
    int64_t readInteger(ValueResult value, const FieldPath& path) {
        int64_t number = 0;
        if (value.get_int64().get(number) == simdjson::SUCCESS) {
            return number;
        }
        // 7.0 is an integer written as a double; anything else is refused.
        const double wide = get(value.get_double(), path, "an integer");
        const std::optional<int64_t> whole = integerFromDouble(wide);
        if (!whole) {
            invalid(path, integerProblem(wide));
        }
        return *whole;
    }
    double readTime(ValueResult value, const FieldPath& path, double low, double high) {
        const double number = get(value.get_double(), path, "a finite number");
        if (!std::isfinite(number) || number < low || number > high) {
            invalid(path, shortNumber(number) + " is outside [" + shortNumber(low) + ", " +
                              shortNumber(high) + "] µs");
        }
        return number;
    }
    TrackPart readTrackPart(ValueResult value, const FieldPath& path) {
        const od::json_type type = get(value.type(), path);
        if (type == od::json_type::string) {
            return {strings_.intern(readString(value, path)), true};
        }
        if (type == od::json_type::number) {
            return {readInteger(value, path), false};
        }
        invalid(path, "neither a number nor a string");
    }
    int64_t readId(ValueResult value, const FieldPath& path) {
        const od::json_type type = get(value.type(), path);
        if (type != od::json_type::string) {
            return readInteger(value, path);
        }
        // Chrome lets flow ids be strings; Kineto writes numbers. Decimal or 0x hex.
        std::string_view text = readString(value, path);
        int base = 10;
        if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
            text.remove_prefix(2);
            base = 16;
        }
        int64_t id = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id, base);
        if (error != std::errc() || end != text.data() + text.size()) {
            invalid(path, "not an integer id");
        }
        return id;
    }

    int32_t trackOf(const TrackKey& key) {
        if (haveLastTrack_ && key == lastTrackKey_) {
            return lastTrack_;
        }
        auto [it, added] = trackIds_.try_emplace(key, int32_t(trackKeys_.size()));
        if (added) {
            if (int64_t(trackKeys_.size()) >= limits_.maxTracks) {
                fail(Kind::TooLarge, label_,
                     "more than " + std::to_string(limits_.maxTracks) + " threads and streams");
            }
            trackKeys_.push_back(key);
        }
        haveLastTrack_ = true;
        lastTrackKey_ = key;
        lastTrack_ = it->second;
        return it->second;
    }
    TraceCategory categoryOf(int32_t id) {
        if (size_t(id) >= categoryById_.size()) {
            categoryById_.resize(size_t(id) + 1, -1);
        }
        if (categoryById_[size_t(id)] < 0) {
            static const std::unordered_map<std::string_view, TraceCategory> known = {
                {"cpu_op", TraceCategory::CpuOp},
                {"user_annotation", TraceCategory::UserAnnotation},
                {"gpu_user_annotation", TraceCategory::GpuUserAnnotation},
                {"python_function", TraceCategory::PythonFunction},
                {"cuda_runtime", TraceCategory::CudaRuntime},
                {"cuda_driver", TraceCategory::CudaDriver},
                {"kernel", TraceCategory::Kernel},
                {"gpu_memcpy", TraceCategory::GpuMemcpy},
                {"gpu_memset", TraceCategory::GpuMemset},
                {"ac2g", TraceCategory::Ac2g},
            };
            const auto found = known.find(strings_.text(id));
            categoryById_[size_t(id)] =
                int8_t(found == known.end() ? TraceCategory::Other : found->second);
        }
        return TraceCategory(categoryById_[size_t(id)]);
    }
    // "ProfilerStep#12" -> 12, as HTA's regex ProfilerStep\s*#\s*(\d+) reads it; else -1.
    int64_t stepNumberOf(int32_t nameId) {
        if (size_t(nameId) >= stepById_.size()) {
            stepById_.resize(size_t(nameId) + 1, -2);
        }
        int64_t& cached = stepById_[size_t(nameId)];
        if (cached == -2) {
            cached = -1;
            std::string_view text = strings_.text(nameId);
            constexpr std::string_view prefix = "ProfilerStep";
            if (text.substr(0, prefix.size()) == prefix) {
                text.remove_prefix(prefix.size());
                auto skipSpace = [&text] {
                    while (!text.empty() && std::isspace(uint8_t(text.front()))) {
                        text.remove_prefix(1);
                    }
                };
                skipSpace();
                if (!text.empty() && text.front() == '#') {
                    text.remove_prefix(1);
                    skipSpace();
                    int64_t number = 0;
                    const auto [end, error] =
                        std::from_chars(text.data(), text.data() + text.size(), number);
                    if (error == std::errc() && end != text.data()) {
                        cached = number;
                    }
                }
            }
        }
        return cached;
    }

    void readEvent(od::object object, int64_t index, KinetoTrace& trace);
    void readEventField(od::field& field, FieldPath& path, EventFields& fields);
    void fillLeftOut(EventFields& fields);
    void readMetadata(const EventFields& fields, const TrackKey& key, KinetoTrace& trace);
    void countOtherCategory(const TraceEvent& event);
    void addEvent(const TraceEvent& event, KinetoTrace& trace);
    void readArgs(od::object args, FieldPath path, TraceEvent& event, std::string_view* metaName);
    void readDevices(ValueResult value, KinetoTrace& trace);
    void readDistributed(ValueResult value, KinetoTrace& trace);
    void readEvents(od::array events, KinetoTrace& trace, bool topLevelArray);
    bool readTopLevelField(od::field& field, std::string_view key, KinetoTrace& trace);
    void readTopLevelObject(od::object object, KinetoTrace& trace);
    void finish(KinetoTrace& trace);

    std::string label_;
    KinetoTraceLimits limits_;
    StringTable strings_;
    std::unordered_map<TrackKey, int32_t, TrackKeyHash> trackIds_;
    std::vector<TrackKey> trackKeys_;
    TrackKey lastTrackKey_;
    int32_t lastTrack_ = 0;
    bool haveLastTrack_ = false;
    std::vector<int8_t> categoryById_;
    std::vector<int64_t> stepById_;
    std::vector<int64_t> otherCategoryCount_;  // by category string id
    std::vector<int32_t> otherCategoryOrder_;
    // Metadata names, applied to the tracks at the end (they may come first).
    std::unordered_map<TrackKey, int32_t, TrackKeyHash> threadNames_;  // tid part used
    std::vector<std::pair<TrackPart, int32_t>> processNames_;
};

void Reader::readArgs(od::object args, FieldPath path, TraceEvent& event,
                      std::string_view* metaName) {
    path.field = "args";
    for (auto fieldResult : args) {
        od::field field = get(std::move(fieldResult), path);
        const simdjson::ondemand::raw_json_string key = field.key();
        if (key == "stream") {
            path.argument = "stream";
            event.stream = readInteger(field.value(), path);
        } else if (key == "correlation") {
            path.argument = "correlation";
            event.correlation = readInteger(field.value(), path);
        } else if (key == "External id") {
            path.argument = "External id";
            event.externalId = readInteger(field.value(), path);
        } else if (metaName && key == "name") {
            path.argument = "name";
            *metaName = readString(field.value(), path);
        }
        path.argument = nullptr;
    }
}

// One field of an event, into `fields`; what each key means does not depend on the phase.
void Reader::readEventField(od::field& field, FieldPath& path, EventFields& fields) {
    TraceEvent& event = fields.event;
    const od::raw_json_string key = field.key();
    if (key == "ph") {
        path.field = "ph";
        const std::string_view text = readString(field.value(), path);
        if (text.size() != 1) {
            invalid(path, "not a one-letter phase");
        }
        fields.phase = text[0];
    } else if (key == "name") {
        path.field = "name";
        fields.nameId = strings_.intern(readString(field.value(), path));
    } else if (key == "cat") {
        path.field = "cat";
        event.categoryName = strings_.intern(readString(field.value(), path));
        event.hasCategory = true;
    } else if (key == "ts") {
        path.field = "ts";
        fields.ts = readTime(field.value(), path, -kMaxAbsTimeUs, kMaxAbsTimeUs);
    } else if (key == "dur") {
        path.field = "dur";
        event.durationUs = readTime(field.value(), path, 0, kMaxDurationUs);
        event.hasDuration = true;
    } else if (key == "pid") {
        path.field = "pid";
        fields.pid = readTrackPart(field.value(), path);
    } else if (key == "tid") {
        path.field = "tid";
        fields.tid = readTrackPart(field.value(), path);
    } else if (key == "id") {
        path.field = "id";
        fields.flowId = readId(field.value(), path);
    } else if (key == "bp") {
        path.field = "bp";
        fields.bindsEnclosing = readString(field.value(), path) == "e";
    } else if (key == "args") {
        path.field = "args";
        od::value value = field.value();
        od::json_type type = get(value.type(), path);
        if (type == od::json_type::object) {
            readArgs(get(value.get_object(), path), path, event, &fields.metaName);
            fields.haveMetaName = !fields.metaName.empty();
        } else if (type != od::json_type::null) {
            invalid(path, "not an object");
        }
    }
}

// What a field left out means; the empty strings are interned in this order,
// category first, so the string table comes out as it always has.
void Reader::fillLeftOut(EventFields& fields) {
    TraceEvent& event = fields.event;
    if (fields.phase == 0) {
        fields.phase = event.hasDuration ? 'X' : 'i';  // hand-made traces leave "ph" out
    }
    if (!event.hasCategory) {
        event.categoryName = strings_.intern("");
    }
    if (fields.nameId < 0) {
        fields.nameId = strings_.intern("");
    }
    event.name = fields.nameId;
    event.phase = fields.phase;
}

// A metadata event names a process or a thread; the names reach the tracks in finish().
void Reader::readMetadata(const EventFields& fields, const TrackKey& key, KinetoTrace& trace) {
    ++trace.metadataEvents;
    if (!fields.haveMetaName) {
        return;
    }
    const std::string& what = strings_.text(fields.nameId);
    if (what == "process_name") {
        processNames_.emplace_back(key.pid, strings_.intern(fields.metaName));
    } else if (what == "thread_name") {
        threadNames_[key] = strings_.intern(fields.metaName);
    }
}

// Categories outside TraceCategory are counted by name, in the order first seen.
void Reader::countOtherCategory(const TraceEvent& event) {
    if (event.category != TraceCategory::Other) {
        return;
    }
    const size_t id = size_t(event.categoryName);
    if (id >= otherCategoryCount_.size()) {
        otherCategoryCount_.resize(id + 1, 0);
    }
    if (otherCategoryCount_[id]++ == 0) {
        otherCategoryOrder_.push_back(event.categoryName);
    }
}

// A timed event that is not a flow: kept, and a ProfilerStep's range noted.
void Reader::addEvent(const TraceEvent& event, KinetoTrace& trace) {
    if (int64_t(trace.events.size()) >= limits_.maxEvents) {
        fail(Kind::TooLarge, label_, "more than " + std::to_string(limits_.maxEvents) + " events");
    }
    if (event.phase == 'X' && event.stream == -1 &&
        event.category != TraceCategory::GpuUserAnnotation) {
        const int64_t step = stepNumberOf(event.name);
        if (step >= 0) {
            trace.steps.push_back(
                {step, event.startUs, event.durationUs, int32_t(trace.events.size())});
        }
    }
    ++trace.eventsByCategory[size_t(event.category)];
    trace.events.push_back(event);
}

// An event: its fields, then what its phase makes of them (a name for a
// track, a flow, a timed event, or nothing kept).
void Reader::readEvent(od::object object, int64_t index, KinetoTrace& trace) {
    FieldPath path;
    path.index = index;
    EventFields fields;
    for (auto fieldResult : object) {
        od::field field = get(std::move(fieldResult), path);
        readEventField(field, path, fields);
        path.field = "";
    }
    fillLeftOut(fields);
    TraceEvent& event = fields.event;
    const char phase = fields.phase;
    const TrackKey key{fields.pid.value_or(TrackPart{}), fields.tid.value_or(TrackPart{})};

    if (phase == 'M') {
        readMetadata(fields, key, trace);
        return;
    }
    const bool flow = phase == 's' || phase == 't' || phase == 'f';
    const bool timed = flow || phase == 'X' || phase == 'i' || phase == 'I' || phase == 'C' ||
                       phase == 'B' || phase == 'E' || phase == 'n' || phase == 'R';
    if (!timed) {
        ++trace.otherPhaseEvents;
        return;
    }
    if (!fields.ts) {
        path.field = "ts";
        invalid(path, "missing");
    }
    event.startUs = *fields.ts;
    event.track = trackOf(key);
    event.category = categoryOf(event.categoryName);
    countOtherCategory(event);
    if (flow) {
        if (!fields.flowId) {
            path.field = "id";
            invalid(path, "a flow event without an id");
        }
        trace.flows.push_back({*fields.flowId, *fields.ts, event.track, event.categoryName,
                               event.category, phase, fields.bindsEnclosing});
        ++trace.eventsByCategory[size_t(event.category)];
        return;
    }
    addEvent(event, trace);
}

void Reader::readDevices(ValueResult value, KinetoTrace& trace) {
    FieldPath path{"deviceProperties"};
    od::array array = get(value.get_array(), path, "an array");
    for (auto elementResult : array) {
        path.index = int64_t(trace.devices.size());
        path.field = "";
        if (path.index >= limits_.maxDevices) {
            fail(Kind::TooLarge, label_,
                 "deviceProperties: more than " + std::to_string(limits_.maxDevices) + " devices");
        }
        od::object object =
            get(get(std::move(elementResult), path).get_object(), path, "an object");
        TraceDevice device;
        for (auto fieldResult : object) {
            od::field field = get(std::move(fieldResult), path);
            const od::raw_json_string key = field.key();
            auto nonNegative = [&](const char* name) {
                path.field = name;
                const int64_t number = readInteger(field.value(), path);
                if (number < 0) {
                    invalid(path, "negative");
                }
                return number;
            };
            if (key == "id") {
                device.id = nonNegative("id");
            } else if (key == "name") {
                path.field = "name";
                device.name = readString(field.value(), path);
            } else if (key == "totalGlobalMem") {
                device.totalGlobalMem = nonNegative("totalGlobalMem");
            } else if (key == "computeMajor") {
                device.computeMajor = nonNegative("computeMajor");
            } else if (key == "computeMinor") {
                device.computeMinor = nonNegative("computeMinor");
            } else if (key == "numSms") {
                device.numSms = nonNegative("numSms");
            }
            path.field = "";
        }
        trace.devices.push_back(std::move(device));
    }
}

void Reader::readDistributed(ValueResult value, KinetoTrace& trace) {
    FieldPath path{"distributedInfo"};
    od::object object = get(value.get_object(), path, "an object");
    TraceDistributedInfo info;
    bool haveWorld = false;
    for (auto fieldResult : object) {
        od::field field = get(std::move(fieldResult), path);
        const od::raw_json_string key = field.key();
        if (key == "backend") {
            path.field = "backend";
            info.backend = readString(field.value(), path);
        } else if (key == "rank") {
            path.field = "rank";
            info.rank = readInteger(field.value(), path);
            if (info.rank < 0 || info.rank >= kMaxRank) {
                invalid(path, std::to_string(info.rank) + " is outside [0, 2^24)");
            }
        } else if (key == "world_size") {
            path.field = "world_size";
            info.worldSize = readInteger(field.value(), path);
            haveWorld = true;
            if (info.worldSize < 1 || info.worldSize > kMaxRank) {
                invalid(path, std::to_string(info.worldSize) + " is outside [1, 2^24]");
            }
        }
        path.field = "";
    }
    if (haveWorld && info.rank >= info.worldSize) {
        path.field = "rank";
        invalid(path, std::to_string(info.rank) + " is not below world_size " +
                          std::to_string(info.worldSize));
    }
    trace.distributed = std::move(info);
}

void Reader::readEvents(od::array events, KinetoTrace& trace, bool topLevelArray) {
    FieldPath path;
    int64_t index = 0;
    for (auto elementResult : events) {
        path.index = index;
        od::value element = get(std::move(elementResult), path);
        od::object object;
        if (element.get_object().get(object) != simdjson::SUCCESS) {
            if (topLevelArray && index == 0) {
                fail(Kind::NotATrace, label_,
                     "JSON, but not a trace: an array whose first element is not an event");
            }
            invalid(path, "not an event object");
        }
        readEvent(object, index, trace);
        ++index;
    }
}

void Reader::finish(KinetoTrace& trace) {
    // Names from metadata: a process name covers every thread of its pid.
    for (const TrackKey& key : trackKeys_) {
        TraceTrack track;
        auto text = [this](const TrackPart& part) {
            return part.isText ? strings_.text(int32_t(part.value)) : std::to_string(part.value);
        };
        track.pid = text(key.pid);
        track.tid = text(key.tid);
        for (const auto& [pid, name] : processNames_) {
            if (pid == key.pid) {
                track.processName = strings_.text(name);
            }
        }
        const auto thread = threadNames_.find(key);
        if (thread != threadNames_.end()) {
            track.threadName = strings_.text(thread->second);
        }
        trace.tracks.push_back(std::move(track));
    }
    for (const int32_t id : otherCategoryOrder_) {
        trace.otherCategories.emplace_back(strings_.text(id), otherCategoryCount_[size_t(id)]);
    }
    std::stable_sort(trace.steps.begin(), trace.steps.end(),
                     [](const ProfilerStepRange& a, const ProfilerStepRange& b) {
                         return a.startUs < b.startUs;
                     });
    trace.strings = strings_.release();
}

// A key for the message that names a file's keys: at most 40 bytes, cut
// between UTF-8 characters.
std::string keyForMessage(std::string_view key) {
    size_t cut = std::min<size_t>(key.size(), 40);
    while (cut < key.size() && cut > 0 && (uint8_t(key[cut]) & 0xC0) == 0x80) {
        --cut;
    }
    return std::string(key.substr(0, cut));
}

// JSON that is not a trace says what it is by its first keys.
std::string noTraceEventsMessage(const std::vector<std::string>& keys) {
    std::string list;
    for (const auto& key : keys) {
        list += (list.empty() ? "" : ", ") + key;
    }
    return "JSON, but not a trace: no traceEvents" +
           (list.empty() ? std::string(" (an empty object)")
                         : " (its keys: " + list + (keys.size() == 6 ? ", ..." : "") + ")");
}

// One field of the top-level object; true for the events.
bool Reader::readTopLevelField(od::field& field, std::string_view key, KinetoTrace& trace) {
    FieldPath path{"", -1, ""};
    if (key == "traceEvents") {
        path.container = "traceEvents";
        od::array events;
        if (field.value().get_array().get(events) != simdjson::SUCCESS) {
            invalid(path, "not an array");
        }
        readEvents(events, trace, false);
        return true;
    }
    if (key == "deviceProperties") {
        readDevices(field.value(), trace);
    } else if (key == "distributedInfo") {
        readDistributed(field.value(), trace);
    } else if (key == "schemaVersion") {
        path.container = "schemaVersion";
        trace.schemaVersion = readInteger(field.value(), path);
    } else if (key == "baseTimeNanoseconds") {
        path.container = "baseTimeNanoseconds";
        trace.baseTimeNanoseconds = readInteger(field.value(), path);
    } else if (key == "format") {
        std::string_view format;
        if (field.value().get_string().get(format) == simdjson::SUCCESS &&
            format == "stepscope-run") {
            fail(Kind::RunFile, label_,
                 "a StepScope run file, not a profiler trace: open it as a run");
        }
    }
    return false;
}

// Kineto's layout: the events under "traceEvents", the devices and ranks beside them.
void Reader::readTopLevelObject(od::object object, KinetoTrace& trace) {
    const FieldPath top{"the top level"};
    bool haveEvents = false;
    std::vector<std::string> keys;  // the first six, for the message when there are no events
    for (auto fieldResult : object) {
        od::field field = get(std::move(fieldResult), top);
        const std::string_view key = get(field.unescaped_key(), top);
        if (keys.size() < 6) {
            keys.push_back(keyForMessage(key));
        }
        if (readTopLevelField(field, key, trace)) {
            haveEvents = true;
        }
    }
    if (!haveEvents) {
        fail(Kind::NotATrace, label_, noTraceEventsMessage(keys));
    }
}

KinetoTrace Reader::read(const PaddedBytes& bytes) {
    refuseNonJson(bytes.view(), label_);
    KinetoTrace trace;
    trace.path = label_;
    trace.events.reserve(size_t(std::min<int64_t>(limits_.maxEvents, int64_t(bytes.size / 256))));
    od::parser parser;
    od::document document;
    const FieldPath top{"the top level"};
    if (const error_code error =
            parser
                .iterate(simdjson::padded_string_view(bytes.data(), bytes.size,
                                                      bytes.size + simdjson::SIMDJSON_PADDING))
                .get(document)) {
        jsonFault(error, top);
    }
    const od::json_type type = get(document.type(), top);
    if (type == od::json_type::array) {
        readEvents(get(document.get_array(), top), trace, true);
    } else if (type != od::json_type::object) {
        fail(Kind::NotATrace, label_, "JSON, but not a trace: the top level is not an object");
    } else {
        readTopLevelObject(get(document.get_object(), top), trace);
    }
    const char* trailing = nullptr;
    if (document.current_location().get(trailing) == simdjson::SUCCESS) {
        fail(Kind::NotJson, label_, "not valid JSON: more text after the trace's end");
    }
    finish(trace);
    return trace;
}

PaddedBytes padded(std::string_view bytes) {
    PaddedBytes out;
    out.resizeKeepingPadding(bytes.size());
    std::memcpy(out.storage.data(), bytes.data(), bytes.size());
    return out;
}

KinetoTrace parseBytes(PaddedBytes bytes, const std::string& label,
                       const KinetoTraceLimits& limits) {
    const TextBudget budget = budgetOf(limits);
    if (isGzip(bytes.view())) {
        bytes = gunzip(bytes.view(), budget, label);
    } else if (bytes.size > budget.most()) {
        fail(Kind::TooLarge, label, budget.refusal("holds"));
    }
    try {
        return Reader(label, limits).read(bytes);
    } catch (const std::bad_alloc&) {  // the budget leaves this to other programs
        fail(Kind::TooLarge, label,
             "memory ran out reading its " + formatBytes(double(bytes.size)) + " of JSON");
    }
}

}  // namespace

KinetoTrace parseKinetoTrace(std::string_view bytes, const std::string& label,
                             const KinetoTraceLimits& limits) {
    return parseBytes(padded(bytes), label, limits);
}

KinetoTrace readKinetoTrace(const std::string& path, const KinetoTraceLimits& limits) {
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
        fail(Kind::Unreadable, path, "a folder: open it as a folder of rank traces");
    }
    if (const auto why = whyNotARegularFile(path)) {  // a FIFO would block, a device never end
        fail(Kind::Unreadable, path, *why);
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        fail(Kind::Unreadable, path, "cannot open: " + std::string(std::strerror(errno)));
    }
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    in.seekg(0, std::ios::beg);
    if (size < 0) {
        fail(Kind::Unreadable, path, "cannot tell its size");
    }
    // A compressed file may be a tenth of what it inflates to; both are capped.
    if (const TextBudget budget = budgetOf(limits); uint64_t(size) > budget.most()) {
        fail(Kind::TooLarge, path, budget.refusal("holds"));
    }
    PaddedBytes bytes;
    bytes.resizeKeepingPadding(size_t(size));
    if (!in.read(bytes.storage.data(), size)) {
        fail(Kind::Unreadable, path, "cannot read");
    }
    return parseBytes(std::move(bytes), path, limits);
}

std::vector<std::string> kinetoTraceFiles(const std::string& folder) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    std::error_code error;
    fs::directory_iterator it(folder, error);
    if (error) {
        fail(Kind::Unreadable, folder, "cannot list the folder: " + error.message());
    }
    for (const auto& entry : it) {
        const std::string name = entry.path().filename().string();
        if ((name.ends_with(".json") || name.ends_with(".json.gz")) &&
            entry.is_regular_file(error)) {
            files.push_back(entry.path().string());
        }
    }
    if (files.empty()) {
        fail(Kind::Unreadable, folder, "no trace files (*.json, *.json.gz) in the folder");
    }
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace stepscope
