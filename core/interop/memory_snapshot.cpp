#include "interop/memory_snapshot.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <unordered_map>

#include "interop/snapshot_builder.h"
#include "interop/snapshot_pickle_stream.h"
#include "results/json_text.h"
#include "util/atomic_file.h"
#include "util/checked_math.h"

namespace stepscope {

namespace {

using Kind = SnapshotError::Kind;

// Text from the file, safe to put in a message.
std::string quoted(std::string_view text) {
    std::string out = "\"";
    for (size_t i = 0; i < text.size() && i < 60; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        out += (c >= 0x20 && c < 0x7f) ? char(c) : '?';
    }
    return out + (text.size() > 60 ? "...\"" : "\"");
}

enum class Type : uint8_t { Null, Bool, Integer, Float, String, List, Dict, Other };

// The two forms a snapshot comes in, behind one interface the reader below
// is written against: a pickle (values in PickleDocument's arena) and JSON.
struct PickleTree {
    const PickleDocument& doc;
    using Node = PickleRef;

    Node root() const { return doc.root(); }
    Type type(Node n) const {
        switch (doc.kind(n)) {
            case PickleKind::None:
                return Type::Null;
            case PickleKind::Bool:
                return Type::Bool;
            case PickleKind::Int:
            case PickleKind::BigInt:
                return Type::Integer;
            case PickleKind::Float:
                return Type::Float;
            case PickleKind::String:
                return Type::String;
            case PickleKind::List:
            case PickleKind::Tuple:
                return Type::List;
            case PickleKind::Dict:
                return Type::Dict;
            default:
                return Type::Other;
        }
    }
    std::string describe(Node n) const {
        switch (doc.kind(n)) {
            case PickleKind::None:
                return "None";
            case PickleKind::Bool:
                return "a bool";
            case PickleKind::Int:
                return "an integer";
            case PickleKind::BigInt:
                return "an integer beyond 64 bits";
            case PickleKind::Float:
                return "a float";
            case PickleKind::String:
                return "a string";
            case PickleKind::List:
                return "a list";
            case PickleKind::Tuple:
                return "a tuple";
            case PickleKind::Dict:
                return "a dict";
            default:
                return "a " + doc.typeName(n);
        }
    }
    std::optional<int64_t> int64(Node n) const { return doc.toInt64(n); }
    std::optional<uint64_t> uint64(Node n) const { return doc.toUInt64(n); }
    std::optional<double> number(Node n) const {
        if (doc.kind(n) == PickleKind::Float) {
            return doc.real(n);
        }
        if (const auto value = doc.toInt64(n)) {
            return static_cast<double>(*value);
        }
        return std::nullopt;
    }
    bool boolean(Node n) const { return doc.boolean(n); }
    std::string_view text(Node n) const { return doc.text(n); }
    size_t length(Node n) const { return doc.items(n).size(); }
    template <typename F>
    void forEachItem(Node n, F&& f) const {
        size_t index = 0;
        for (const PickleRef item : doc.items(n)) {
            f(index++, item);
        }
    }
    // Pairs with a str key; Python would keep the last of equal keys, and so
    // does a reader that assigns fields in order.
    template <typename F>
    void forEachField(Node n, F&& f) const {
        const std::span<const PickleRef> entries = doc.items(n);
        for (size_t i = 0; i + 1 < entries.size(); i += 2) {
            if (doc.kind(entries[i]) == PickleKind::String) {
                f(doc.text(entries[i]), entries[i + 1]);
            }
        }
    }
    // Values the pickle shares through its memo (a stack, a frame) have one
    // identity, so the reader converts each once.
    static constexpr bool kShares = true;
    uint64_t identity(Node n) const { return n; }
};

struct JsonTree {
    const nlohmann::json& rootValue;
    using Node = const nlohmann::json*;

    Node root() const { return &rootValue; }
    Type type(Node n) const {
        switch (n->type()) {
            case nlohmann::json::value_t::null:
                return Type::Null;
            case nlohmann::json::value_t::boolean:
                return Type::Bool;
            case nlohmann::json::value_t::number_integer:
            case nlohmann::json::value_t::number_unsigned:
                return Type::Integer;
            case nlohmann::json::value_t::number_float:
                return Type::Float;
            case nlohmann::json::value_t::string:
                return Type::String;
            case nlohmann::json::value_t::array:
                return Type::List;
            case nlohmann::json::value_t::object:
                return Type::Dict;
            default:
                return Type::Other;
        }
    }
    std::string describe(Node n) const {
        switch (type(n)) {
            case Type::Null:
                return "null";
            case Type::Bool:
                return "a boolean";
            case Type::Integer:
                return "an integer";
            case Type::Float:
                return "a number with a fraction";
            case Type::String:
                return "a string";
            case Type::List:
                return "a list";
            case Type::Dict:
                return "an object";
            default:
                return "a binary value";
        }
    }
    std::optional<int64_t> int64(Node n) const {
        if (n->is_number_integer() && !n->is_number_unsigned()) {
            return n->get<int64_t>();
        }
        if (n->is_number_unsigned() &&
            n->get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max())) {
            return static_cast<int64_t>(n->get<uint64_t>());
        }
        if (n->is_number_float()) {  // 4096.0, 1e3: whole; 1.5 and 1e300 are not
            return integerFromDouble(n->get<double>());
        }
        return std::nullopt;
    }
    std::optional<uint64_t> uint64(Node n) const {
        if (n->is_number_unsigned()) {
            return n->get<uint64_t>();
        }
        if (n->is_number_integer() && n->get<int64_t>() >= 0) {
            return static_cast<uint64_t>(n->get<int64_t>());
        }
        if (const auto whole =
                n->is_number_float() ? integerFromDouble(n->get<double>(), 0) : std::nullopt) {
            return static_cast<uint64_t>(*whole);
        }
        return std::nullopt;
    }
    std::optional<double> number(Node n) const {
        if (n->is_number()) {
            return n->get<double>();
        }
        return std::nullopt;
    }
    bool boolean(Node n) const { return n->get<bool>(); }
    std::string_view text(Node n) const { return n->get_ref<const std::string&>(); }
    size_t length(Node n) const { return n->size(); }
    template <typename F>
    void forEachItem(Node n, F&& f) const {
        size_t index = 0;
        for (const auto& item : *n) {
            f(index++, &item);
        }
    }
    template <typename F>
    void forEachField(Node n, F&& f) const {
        for (const auto& [key, value] : n->items()) {
            f(std::string_view(key), &value);
        }
    }
    static constexpr bool kShares = false;
    uint64_t identity(Node) const { return 0; }
};

// Walks the snapshot's structure (a fixed depth: no recursion over data)
// into MemorySnapshot, keeping the path to the value it reads for messages.
template <typename Tree>
class SnapshotReader {
public:
    using Node = typename Tree::Node;

    SnapshotReader(const Tree& tree, MemorySnapshot& out, const SnapshotLimits& limits)
        : tree_(tree), out_(out), limits_(limits), interner_(out) {}

    void read() {
        const Node root = tree_.root();
        if (tree_.type(root) != Type::Dict) {
            throw SnapshotError(Kind::NotASnapshot,
                                out_.source + ": not a PyTorch memory snapshot: it holds " +
                                    tree_.describe(root) +
                                    " (a snapshot is a dict with \"segments\" and "
                                    "\"device_traces\")");
        }
        std::optional<Node> segments, traces, annotations, settings;
        tree_.forEachField(root, [&](std::string_view key, Node value) {
            if (key == "segments") {
                segments = value;
            } else if (key == "device_traces") {
                traces = value;
            } else if (key == "external_annotations") {
                annotations = value;
            } else if (key == "allocator_settings") {
                settings = value;
            }
        });
        if (!segments && !traces) {
            throw SnapshotError(Kind::NotASnapshot,
                                out_.source +
                                    ": not a PyTorch memory snapshot: a dict without "
                                    "\"segments\" or \"device_traces\"");
        }
        if (segments) {
            Field field(*this, "segments");
            readSegments(*segments);
        }
        if (traces) {
            Field field(*this, "device_traces");
            readTraces(*traces);
        }
        if (annotations) {
            Field field(*this, "external_annotations");
            readAnnotations(*annotations);
        }
        if (settings) {
            Field field(*this, "allocator_settings");
            readSettings(*settings);
        }
        interner_.finish();
    }

private:
    // The path to the value being read: "device_traces", 0, 12, "size".
    struct PathPart {
        const char* key;  // nullptr for an index
        size_t index;
    };
    void push(PathPart part) {
        if (depth_ == path_.size()) {
            throw std::logic_error("snapshot reader: path deeper than its schema");
        }
        path_[depth_++] = part;
    }
    struct Field {
        Field(SnapshotReader& reader, const char* key) : reader(reader) { reader.push({key, 0}); }
        Field(SnapshotReader& reader, size_t index) : reader(reader) {
            reader.push({nullptr, index});
        }
        ~Field() { --reader.depth_; }
        Field(const Field&) = delete;
        Field& operator=(const Field&) = delete;
        SnapshotReader& reader;
    };
    std::string path() const {
        std::string out;
        for (size_t i = 0; i < depth_; ++i) {
            const PathPart& part = path_[i];
            if (part.key) {
                out += (out.empty() ? "" : ".") + std::string(part.key);
            } else {
                out += "[" + std::to_string(part.index) + "]";
            }
        }
        return out;
    }
    [[noreturn]] void fail(Kind kind, const std::string& what) const {
        throw SnapshotError(kind, out_.source + ": " + path() + ": " + what);
    }
    [[noreturn]] void expected(const char* what, Node got) const {
        fail(Kind::Malformed, std::string("expected ") + what + ", got " + tree_.describe(got));
    }
    void checkCount(size_t count, size_t limit, const char* what) const {
        if (count > limit) {
            fail(Kind::TooLarge,
                 "more than " + std::to_string(limit) + " " + what + " (the reader's limit)");
        }
    }

    // Typed fields; each names itself in a message.
    void needList(Node n) const {
        if (tree_.type(n) != Type::List) {
            expected("a list", n);
        }
    }
    void needDict(Node n) const {
        if (tree_.type(n) != Type::Dict) {
            expected("a dict", n);
        }
    }
    // A field's own error: its key joins the path only then, so reading
    // a million events builds no path.
    [[noreturn]] void failField(const char* key, Kind kind, const std::string& what) {
        push({key, 0});
        fail(kind, what);
    }
    [[noreturn]] void expectedField(const char* key, const char* what, Node got) {
        push({key, 0});
        expected(what, got);
    }
    // A number where an integer belongs says why it is not one (1.5, 1e300).
    void refuseFraction(Node n, const char* key) {
        if (tree_.type(n) == Type::Float) {
            failField(key, Kind::Malformed, integerProblem(*tree_.number(n)));
        }
    }
    int64_t integer(Node n, const char* key) {
        const auto value = tree_.int64(n);
        if (!value) {
            refuseFraction(n, key);
            expectedField(key, "an integer", n);
        }
        return *value;
    }
    int64_t byteCount(Node n, const char* key) {
        const auto value = tree_.int64(n);
        if (!value || *value < 0) {
            if (value) {
                failField(key, Kind::Malformed,
                          "expected a size in bytes, got " + std::to_string(*value));
            }
            refuseFraction(n, key);
            expectedField(key, "a size in bytes (an integer)", n);
        }
        return *value;
    }
    uint64_t address(Node n, const char* key) {
        const auto value = tree_.uint64(n);
        if (!value) {
            expectedField(key, "an address (a non-negative integer)", n);
        }
        return *value;
    }
    double number(Node n, const char* key) {
        const auto value = tree_.number(n);
        if (!value) {
            expectedField(key, "a number", n);
        }
        return *value;
    }
    std::string_view text(Node n, const char* key) {
        if (tree_.type(n) != Type::String) {
            expectedField(key, "a string", n);
        }
        return tree_.text(n);
    }
    bool boolean(Node n, const char* key) {
        if (tree_.type(n) != Type::Bool) {
            expectedField(key, "a bool", n);
        }
        return tree_.boolean(n);
    }
    [[noreturn]] void missing(const char* key) const {
        fail(Kind::Malformed, std::string("has no \"") + key + "\"");
    }

    // A list of {filename, line, name} dicts, interned.
    uint32_t stack(Node n) {
        Field field(*this, "frames");
        needList(n);
        if (tree_.length(n) == 0) {
            return kNoStack;
        }
        uint64_t identity = 0;
        if constexpr (Tree::kShares) {
            identity = tree_.identity(n);
            if (const auto found = stackOf_.find(identity); found != stackOf_.end()) {
                return found->second;
            }
        }
        checkCount(tree_.length(n), limits_.maxStackFrames, "frames in one stack");
        candidate_.clear();
        tree_.forEachItem(n, [&](size_t index, Node item) {
            Field at(*this, index);
            candidate_.push_back(frame(item));
        });
        const uint32_t id = interner_.stack(candidate_);
        if constexpr (Tree::kShares) {
            stackOf_.emplace(identity, id);
        }
        return id;
    }
    uint32_t frame(Node n) {
        if constexpr (Tree::kShares) {
            if (const auto found = frameOf_.find(tree_.identity(n)); found != frameOf_.end()) {
                return found->second;
            }
        }
        needDict(n);
        std::optional<Node> filename, name, line;
        tree_.forEachField(n, [&](std::string_view key, Node value) {
            if (key == "filename") {
                filename = value;
            } else if (key == "name") {
                name = value;
            } else if (key == "line") {
                line = value;
            }
        });
        if (!filename) {
            missing("filename");
        }
        if (!name) {
            missing("name");
        }
        if (!line) {
            missing("line");
        }
        // Filename, then name: the order the streaming reader interns them in.
        const uint32_t file = interner_.string(text(*filename, "filename"));
        const uint32_t function = interner_.string(text(*name, "name"));
        const uint32_t id = interner_.frame(file, function, integer(*line, "line"));
        if constexpr (Tree::kShares) {
            frameOf_.emplace(tree_.identity(n), id);
        }
        return id;
    }

    void readSegments(Node list) {
        needList(list);
        checkCount(tree_.length(list), limits_.maxSegments, "segments");
        out_.segments.reserve(tree_.length(list));
        tree_.forEachItem(list, [&](size_t index, Node item) {
            Field at(*this, index);
            readSegment(item);
        });
    }
    void readSegment(Node n) {
        needDict(n);
        SnapshotSegment segment{};
        segment.stack = kNoStack;
        segment.large = true;
        std::optional<Node> device, address, totalSize, blocks;
        tree_.forEachField(n, [&](std::string_view key, Node value) {
            if (key == "device") {
                device = value;
            } else if (key == "address") {
                address = value;
            } else if (key == "total_size") {
                totalSize = value;
            } else if (key == "blocks") {
                blocks = value;
            } else if (key == "stream") {
                segment.stream = integer(value, "stream");
            } else if (key == "segment_type") {
                segment.large = text(value, "segment_type") != "small";
            } else if (key == "is_expandable") {
                segment.expandable = boolean(value, "is_expandable");
            } else if (key == "frames") {
                segment.stack = stack(value);
            }
        });
        if (!device) {
            missing("device");
        }
        if (!address) {
            missing("address");
        }
        if (!totalSize) {
            missing("total_size");
        }
        segment.device = deviceIndex(*device, "device");
        segment.address = this->address(*address, "address");
        segment.totalSize = byteCount(*totalSize, "total_size");
        segment.firstBlock = static_cast<uint32_t>(out_.blocks.size());
        if (blocks) {
            Field field(*this, "blocks");
            needList(*blocks);
            checkCount(out_.blocks.size() + tree_.length(*blocks), limits_.maxBlocks,
                       "blocks in all segments");
            // memory_viz places each block after the ones before it, from the
            // segment's address; so do we (PyTorch writes the same "address").
            uint64_t at = segment.address;
            tree_.forEachItem(*blocks, [&](size_t index, Node item) {
                Field field(*this, index);
                out_.blocks.push_back(readBlock(item, at));
                at += static_cast<uint64_t>(out_.blocks.back().size);
            });
        }
        segment.blockCount = static_cast<uint32_t>(out_.blocks.size() - segment.firstBlock);
        out_.segments.push_back(segment);
    }
    SnapshotBlock readBlock(Node n, uint64_t at) {
        needDict(n);
        SnapshotBlock block{at, 0, -1, SnapshotBlockState::Other, kNoStack};
        std::optional<Node> size, state;
        tree_.forEachField(n, [&](std::string_view key, Node value) {
            if (key == "size") {
                size = value;
            } else if (key == "state") {
                state = value;
            } else if (key == "requested_size") {
                block.requestedSize = byteCount(value, "requested_size");
            } else if (key == "address") {
                address(value, "address");  // checked, not used: see readSegment
            } else if (key == "frames") {
                block.stack = stack(value);
            }
        });
        if (!size) {
            missing("size");
        }
        if (!state) {
            missing("state");
        }
        block.size = byteCount(*size, "size");
        block.state = blockStateOf(text(*state, "state"));
        if (block.requestedSize < 0) {
            block.requestedSize = block.size;
        }
        return block;
    }
    int deviceIndex(Node n, const char* key) {
        const int64_t device = integer(n, key);
        if (device < 0 || uint64_t(device) >= limits_.maxDevices) {
            failField(key, Kind::Malformed,
                      "device " + std::to_string(device) + " is not in 0.." +
                          std::to_string(limits_.maxDevices - 1));
        }
        return static_cast<int>(device);
    }

    void readTraces(Node list) {
        needList(list);
        checkCount(tree_.length(list), limits_.maxDevices, "device traces");
        size_t events = 0;
        tree_.forEachItem(list, [&](size_t, Node trace) {
            if (tree_.type(trace) == Type::List) {
                events += tree_.length(trace);
            }
        });
        checkCount(events, limits_.maxEvents, "events in all device traces");
        out_.deviceTraces.resize(tree_.length(list));
        tree_.forEachItem(list, [&](size_t device, Node trace) {
            Field at(*this, device);
            needList(trace);
            SnapshotDeviceTrace& out = out_.deviceTraces[device];
            out.reserve(tree_.length(trace));
            tree_.forEachItem(trace, [&](size_t index, Node event) {
                Field field(*this, index);
                readEvent(event, out);
            });
        });
    }
    // The fields of one event that the reader uses.
    struct EventFields {
        std::optional<Node> action, addr, size, deviceFree, time, frames, category;
        int64_t stream = 0;
    };
    EventFields eventFields(Node n) {
        needDict(n);
        EventFields f;
        tree_.forEachField(n, [&](std::string_view key, Node value) {
            switch (key.size()) {
                case 4:
                    if (key == "addr") {
                        f.addr = value;
                    } else if (key == "size") {
                        f.size = value;
                    }
                    break;
                case 6:
                    if (key == "action") {
                        f.action = value;
                    } else if (key == "stream") {
                        f.stream = integer(value, "stream");
                    } else if (key == "frames") {
                        f.frames = value;
                    }
                    break;
                case 7:
                    if (key == "time_us") {
                        f.time = value;
                    }
                    break;
                case 8:
                    if (key == "category") {
                        f.category = value;
                    }
                    break;
                case 11:
                    if (key == "device_free") {
                        f.deviceFree = value;
                    }
                    break;
                default:
                    break;
            }
        });
        return f;
    }
    void readEvent(Node n, SnapshotDeviceTrace& out) {
        const auto [action, addr, size, deviceFree, time, frames, category, stream] =
            eventFields(n);
        if (!action) {
            missing("action");
        }
        const SnapshotAction kind = actionOf(text(*action, "action"));
        const bool needsAddress = eventNeedsAddress(kind);
        uint64_t where = 0;
        if (addr) {
            where = address(*addr, "addr");
        } else if (needsAddress) {
            missing("addr");
        }
        if (kind == SnapshotAction::Oom && deviceFree) {
            where = address(*deviceFree, "device_free");
        }
        int64_t bytes = 0;
        if (size) {
            bytes = byteCount(*size, "size");
        } else if (eventNeedsSize(kind)) {
            missing("size");
        }
        std::optional<double> timeUs;
        if (time) {
            timeUs = number(*time, "time_us");
            if (!std::isfinite(*timeUs)) {  // a pickle's float may be NaN: no order, no axis
                expectedField("time_us", "a finite number of microseconds", *time);
            }
        }
        const uint32_t stackId = frames ? stack(*frames) : kNoStack;
        uint16_t categoryId = 0;
        if (category) {
            const auto id = eventCategoryId(out_.eventCategories, text(*category, "category"));
            if (!id) {
                failField("category", Kind::TooLarge,
                          "more than " + std::to_string(kMaxEventCategories) +
                              " distinct event categories (the reader's limit)");
            }
            categoryId = *id;
        }
        appendEvent(out, kind, where, bytes, stream, timeUs, stackId, categoryId);
    }

    void readAnnotations(Node list) {
        needList(list);
        checkCount(tree_.length(list), limits_.maxAnnotations, "annotations");
        tree_.forEachItem(list, [&](size_t index, Node entry) {
            Field at(*this, index);
            needDict(entry);
            std::optional<Node> stage, name, time, device;
            tree_.forEachField(entry, [&](std::string_view key, Node value) {
                if (key == "stage") {
                    stage = value;
                } else if (key == "name") {
                    name = value;
                } else if (key == "time_us") {
                    time = value;
                } else if (key == "device") {
                    device = value;
                }
            });
            if (!stage) {
                missing("stage");
            }
            if (!name) {
                missing("name");
            }
            if (!time) {
                missing("time_us");
            }
            const std::string_view what = text(*stage, "stage");
            if (what != "START" && what != "END") {
                Field field(*this, "stage");
                fail(Kind::Malformed, "expected \"START\" or \"END\", got " + quoted(what));
            }
            out_.annotations.push_back({device ? deviceIndex(*device, "device") : -1,
                                        number(*time, "time_us"), what == "START",
                                        interner_.string(text(*name, "name"))});
        });
    }

    // Settings as text, one level of dict or list shown inline.
    void readSettings(Node n) {
        needDict(n);
        checkCount(tree_.length(n), 1000, "allocator settings");
        tree_.forEachField(n, [&](std::string_view key, Node value) {
            std::string shown;
            if (tree_.type(value) == Type::Dict || tree_.type(value) == Type::List) {
                const bool dict = tree_.type(value) == Type::Dict;
                shown = dict ? "{" : "[";
                size_t count = 0;
                auto add = [&](std::string_view name, Node item) {
                    if (++count > 64) {
                        return;
                    }
                    shown += count > 1 ? ", " : "";
                    shown += dict ? utf8(name.substr(0, 200)) + ": " + scalar(item) : scalar(item);
                };
                if (dict) {
                    tree_.forEachField(value, add);
                } else {
                    tree_.forEachItem(value, [&](size_t, Node item) { add({}, item); });
                }
                shown += count > 64 ? ", ..." : "";
                shown += dict ? "}" : "]";
            } else {
                shown = scalar(value);
            }
            out_.allocatorSettings.emplace_back(utf8(key.substr(0, 200)), utf8(shown));
        });
    }
    std::string scalar(Node n) const {
        switch (tree_.type(n)) {
            case Type::Null:
                return "None";
            case Type::Bool:
                return tree_.boolean(n) ? "True" : "False";
            case Type::Integer: {
                if (const auto value = tree_.int64(n)) {
                    return std::to_string(*value);
                }
                if (const auto value = tree_.uint64(n)) {
                    return std::to_string(*value);
                }
                return "(a large integer)";
            }
            case Type::Float: {
                char text[32];
                std::snprintf(text, sizeof text, "%g", *tree_.number(n));
                return text;
            }
            case Type::String:
                return utf8(tree_.text(n).substr(0, 1000));
            default:
                return "...";
        }
    }

    const Tree& tree_;
    MemorySnapshot& out_;
    const SnapshotLimits& limits_;
    Interner interner_;
    // The snapshot's structure is at most six levels deep: a fixed array, so
    // entering an event costs two stores.
    std::array<PathPart, 12> path_{};
    size_t depth_ = 0;
    std::vector<uint32_t> candidate_;
    std::unordered_map<uint64_t, uint32_t> stackOf_;
    std::unordered_map<uint64_t, uint32_t> frameOf_;
};

// The pickle machine takes about four fifths of a snapshot's parse, the
// reader walking its values the rest.
constexpr double kPickleShare = 0.8;

}  // namespace

MemorySnapshot parseSnapshotPickleTree(std::string bytes, const std::string& source,
                                       const SnapshotLimits& limits,
                                       const SnapshotProgress& progress) {
    PickleDocument doc;
    try {
        PickleProgress told;
        if (progress) {
            told = [&progress](uint64_t read, uint64_t total) {
                return progress(kPickleShare * double(read) / double(std::max<uint64_t>(total, 1)));
            };
        }
        doc = readPickle(std::move(bytes), PicklePolicy{}, limits.pickle, told);
    } catch (const PickleError& error) {
        const std::string where =
            " (byte " + std::to_string(error.offset) + ", " + error.opcode + ")";
        switch (error.reason) {
            case PickleError::Reason::Refused:
                if (error.asked.rfind("torch", 0) == 0) {
                    throw SnapshotError(Kind::NotASnapshot,
                                        source +
                                            ": not a PyTorch memory snapshot: it holds a "
                                            "PyTorch object (it " +
                                            error.detail + where + ")");
                }
                throw SnapshotError(Kind::Refused, source + ": " + error.detail + where +
                                                       "; StepScope reads only plain "
                                                       "snapshots and runs nothing");
            case PickleError::Reason::TooLarge:
                throw SnapshotError(Kind::TooLarge, source + ": " + error.detail + where);
            case PickleError::Reason::Truncated:
                throw SnapshotError(Kind::Malformed,
                                    source + ": truncated: " + error.detail + where);
            case PickleError::Reason::Stopped:
                throw SnapshotError(Kind::Stopped, source + ": reading stopped" + where);
            case PickleError::Reason::Malformed:
                break;
        }
        throw SnapshotError(Kind::Malformed,
                            source + ": not a readable pickle: " + error.detail + where);
    }
    if (progress && !progress(kPickleShare)) {
        throw SnapshotError(Kind::Stopped, source + ": reading stopped");
    }
    MemorySnapshot snapshot;
    snapshot.source = source;
    PickleTree tree{doc};
    SnapshotReader<PickleTree>(tree, snapshot, limits).read();
    return snapshot;
}

namespace {

// Streamed when the file keeps to Python's layout (nearly every snapshot),
// else read as a tree. Progress never goes back: a file the stream gives up
// on part way is read again from the start, and the bar waits meanwhile.
MemorySnapshot fromPickle(std::string bytes, const std::string& source,
                          const SnapshotLimits& limits, const SnapshotProgress& progress) {
    double shown = 0;
    SnapshotProgress forward;
    if (progress) {
        forward = [&](double fraction) {
            shown = std::max(shown, fraction);
            return progress(shown);
        };
    }
    if (auto streamed = streamSnapshotPickle(bytes, source, limits, forward)) {
        return std::move(*streamed);
    }
    return parseSnapshotPickleTree(std::move(bytes), source, limits, forward);
}

MemorySnapshot fromJson(const std::string& bytes, const std::string& source,
                        const SnapshotLimits& limits) {
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(bytes);
    } catch (const nlohmann::json::exception& error) {
        throw SnapshotError(Kind::Malformed, source + ": " + jsonParseProblem(error, bytes));
    }
    MemorySnapshot snapshot;
    snapshot.source = source;
    JsonTree tree{json};
    SnapshotReader<JsonTree>(tree, snapshot, limits).read();
    return snapshot;
}

}  // namespace

MemorySnapshot parseMemorySnapshot(std::string bytes, const std::string& source,
                                   const SnapshotLimits& limits, const SnapshotProgress& progress) {
    if (bytes.size() > limits.maxFileBytes) {
        throw SnapshotError(Kind::TooLarge, source + ": " + std::to_string(bytes.size()) +
                                                " bytes (the reader's limit is " +
                                                std::to_string(limits.maxFileBytes) + ")");
    }
    if (bytes.empty()) {
        throw SnapshotError(Kind::NotASnapshot, source + ": the file is empty");
    }
    if (bytes.rfind("PK\x03\x04", 0) == 0) {
        throw SnapshotError(Kind::NotASnapshot,
                            source +
                                ": not a PyTorch memory snapshot: it is a zip archive (what "
                                "torch.save writes); _dump_snapshot writes a plain pickle");
    }
    if (bytes.rfind("\x1f\x8b", 0) == 0) {
        throw SnapshotError(Kind::NotASnapshot,
                            source + ": compressed with gzip; decompress it first (gunzip)");
    }
    const size_t first = bytes.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && (bytes[first] == '{' || bytes[first] == '[')) {
        return fromJson(bytes, source, limits);
    }
    return fromPickle(std::move(bytes), source, limits, progress);
}

MemorySnapshot readMemorySnapshot(const std::string& path, const SnapshotLimits& limits,
                                  const SnapshotProgress& progress) {
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    if (!std::filesystem::exists(status)) {
        throw SnapshotError(Kind::Unreadable, path + ": no such file");
    }
    if (std::filesystem::is_directory(status)) {
        throw SnapshotError(Kind::Unreadable,
                            path + ": a directory; expected a memory snapshot file");
    }
    if (const auto why = whyNotARegularFile(path)) {  // a FIFO would block, a device never end
        throw SnapshotError(Kind::Unreadable, *why);
    }
    const auto size = std::filesystem::file_size(path, error);
    if (error) {
        throw SnapshotError(Kind::Unreadable, path + ": cannot read: " + error.message());
    }
    if (size > limits.maxFileBytes) {
        throw SnapshotError(Kind::TooLarge, path + ": " + std::to_string(size) +
                                                " bytes (the reader's limit is " +
                                                std::to_string(limits.maxFileBytes) + ")");
    }
    std::ifstream in(path, std::ios::binary);
    std::string bytes(size, '\0');
    if (!in || !in.read(bytes.data(), static_cast<std::streamsize>(size))) {
        throw SnapshotError(Kind::Unreadable, path + ": cannot read: " + std::strerror(errno));
    }
    return parseMemorySnapshot(std::move(bytes), path, limits, progress);
}

}  // namespace stepscope
