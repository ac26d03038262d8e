#include "interop/snapshot_pickle_stream.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "interop/snapshot_builder.h"

namespace stepscope {

namespace {

// The opcodes of the layout, by pickletools' names.
enum Op : uint8_t {
    kMark = '(',
    kStop = '.',
    kNone = 'N',
    kBinInt = 'J',
    kBinInt1 = 'K',
    kBinInt2 = 'M',
    kBinFloat = 'G',
    kBinUnicode = 'X',
    kEmptyDict = '}',
    kEmptyList = ']',
    kEmptyTuple = ')',
    kTuple = 't',
    kAppend = 'a',
    kAppends = 'e',
    kSetItem = 's',
    kSetItems = 'u',
    kBinGet = 'h',
    kLongBinGet = 'j',
    kBinPut = 'q',
    kLongBinPut = 'r',
    kProto = 0x80,
    kTuple1 = 0x85,
    kTuple3 = 0x87,
    kNewTrue = 0x88,
    kNewFalse = 0x89,
    kLong1 = 0x8a,
    kShortBinUnicode = 0x8c,
    kBinUnicode8 = 0x8d,
    kMemoize = 0x94,
    kFrame = 0x95,
};

// Thrown where the file leaves the layout; the tree reader takes over.
struct LeftTheLayout {};
// Thrown where reading ahead (to tell whose an entry is) has gone far enough.
struct LookedTooFar {};

[[noreturn]] void leave() {
    throw LeftTheLayout{};
}

// A value as this reader keeps it on the memo: scalars as they are, strings
// as views into the file, frames and stacks as interned ids, any other
// container by nothing but that it is one.
struct Value {
    enum class Kind : uint8_t { Container, Building, None, Bool, Int, Float, Text, Frame, Stack };
    Kind kind = Kind::Container;
    uint8_t word = 0;     // Text: its Word, found once where the file spells it
    uint32_t length = 0;  // Text
    uint64_t bits = 0;    // Bool and Int value, Float bits, Text offset, Frame or Stack id
};
using Kind = Value::Kind;

// The words of an event (its keys and actions), told apart by a tag each
// string gets once rather than by comparing text at each of millions of
// events (Python's pickler spells each once and refers back to it).
enum Word : uint8_t {
    kNoWord,
    kAddr,
    kSize,
    kAction,
    kStream,
    kFrames,
    kTimeUs,
    kCategory,
    kDeviceFree,
    kFirstAction,  // then one per kActions entry
};
constexpr SnapshotAction kActions[] = {SnapshotAction::Alloc,         SnapshotAction::FreeRequested,
                                       SnapshotAction::FreeCompleted, SnapshotAction::Free,
                                       SnapshotAction::SegmentAlloc,  SnapshotAction::SegmentFree,
                                       SnapshotAction::SegmentMap,    SnapshotAction::SegmentUnmap,
                                       SnapshotAction::Oom,           SnapshotAction::Snapshot};

uint8_t wordOf(std::string_view text) {
    static const auto kWords = [] {
        std::vector<std::string_view> words = {
            "", "addr", "size", "action", "stream", "frames", "time_us", "category", "device_free"};
        for (const SnapshotAction action : kActions) {
            words.push_back(toString(action));
        }
        return words;
    }();
    if (text.size() > 14) {  // longer than any word
        return kNoWord;
    }
    for (size_t i = 1; i < kWords.size(); ++i) {
        if (text == kWords[i]) {
            return static_cast<uint8_t>(i);
        }
    }
    return kNoWord;
}

// What a value's parent takes after it. A container asks before it reads
// its next opcode as its own one-item form (Python writes a batch of one as
// the item and APPEND, or key, value and SETITEM), and leaves that opcode
// to its parent when the parent takes it.
enum class Next : uint8_t {
    Key,         // a dict's next key (a str) or its end
    Value,       // a list's or tuple's next item, of any kind
    Dict,        // a list of dicts' next dict or its end
    List,        // a list of lists' next list or its end
    Terminator,  // only the parent's closing opcode (APPEND, SETITEM, STOP)
};

bool isText(uint8_t op) {
    return op == kShortBinUnicode || op == kBinUnicode || op == kBinUnicode8;
}
bool isGet(uint8_t op) {
    return op == kBinGet || op == kLongBinGet;
}
bool isScalar(uint8_t op) {
    switch (op) {
        case kNone:
        case kNewTrue:
        case kNewFalse:
        case kBinInt:
        case kBinInt1:
        case kBinInt2:
        case kLong1:
        case kBinFloat:
        case kShortBinUnicode:
        case kBinUnicode:
        case kBinUnicode8:
        case kBinGet:
        case kLongBinGet:
            return true;
        default:
            return false;
    }
}
bool isValueStart(uint8_t op) {
    return isScalar(op) || op == kEmptyList || op == kEmptyDict || op == kEmptyTuple || op == kMark;
}
bool isEmptyDict(uint8_t op) {
    return op == kEmptyDict;
}
bool isEmptyList(uint8_t op) {
    return op == kEmptyList;
}

// Little-endian two's complement of at most 8 bytes (LONG1).
int64_t littleSigned(const unsigned char* bytes, size_t n) {
    if (n == 0) {
        return 0;
    }
    uint64_t value = 0;
    for (size_t i = n; i-- > 0;) {
        value = (value << 8) | bytes[i];
    }
    if (n < 8 && (bytes[n - 1] & 0x80)) {
        value |= ~uint64_t{0} << (8 * n);
    }
    return static_cast<int64_t>(value);
}

class PickleStream {
public:
    PickleStream(std::string_view bytes, MemorySnapshot& out, const SnapshotLimits& limits,
                 const SnapshotProgress& progress)
        : data_(reinterpret_cast<const unsigned char*>(bytes.data())),
          size_(bytes.size()),
          out_(out),
          limits_(limits),
          progress_(progress),
          interner_(out) {}

    // The root dict; each part in the order the tree reader interns them.
    void read() {
        tick();
        if (peek() == kProto) {
            ++pos_;
            if (little<uint8_t>() > 5) {
                leave();
            }
        }
        expect(kEmptyDict);
        const Slots root = containerPuts();
        enum : uint8_t { kSegments = 1, kTraces = 2, kAnnotations = 4, kSettings = 8 };
        uint8_t seen = 0;
        // Once each, and not after a part the tree reader reads later.
        auto inOrder = [&](uint8_t part, uint8_t later) {
            if (seen & (part | later)) {
                leave();
            }
            seen |= part;
        };
        entries(Next::Terminator, [&](std::string_view key, Next after) {
            if (key == "segments") {
                inOrder(kSegments, kTraces | kAnnotations);
                segments(after);
            } else if (key == "device_traces") {
                inOrder(kTraces, kAnnotations);
                traces(after);
            } else if (key == "external_annotations") {
                inOrder(kAnnotations, 0);
                annotations(after);
            } else if (key == "allocator_settings") {
                inOrder(kSettings, 0);
                settings(after);
            } else {
                skip(after, 0);
            }
        });
        complete(root, Value{});
        expect(kStop);
        if (!(seen & (kSegments | kTraces))) {
            leave();
        }
        interner_.finish();
    }

private:
    static constexpr uint64_t kReportEvery = uint64_t{1} << 20;
    static constexpr int kMaxSkipDepth = 64;
    static constexpr size_t kMaxTupleItems = 8;  // values on the stack before TUPLE1-3 take them
    static constexpr size_t kLookAhead = 64 << 10;
    static constexpr size_t kEventsBeforeReserving = 4096;
    static constexpr double kReserveMargin = 1.5;  // later events may take fewer bytes
    static constexpr size_t kLeastEventBytes = 8;  // EMPTY_DICT, MEMOIZE, an action, …
    static constexpr size_t kLeastMemoBytes = 8;   // reserved no further: a hint, not a bound

    // -- Bytes and opcodes.

    // The next opcode, past any FRAME (a length prefix that means nothing
    // else; the tree reader refuses one longer than the rest of the file).
    uint8_t peek() {
        while (true) {
            if (pos_ >= limit_) [[unlikely]] {
                if (pos_ >= size_) {
                    leave();
                }
                throw LookedTooFar{};
            }
            const uint8_t op = data_[pos_];
            if (op != kFrame) {
                return op;
            }
            if (size_ - pos_ < 9) {
                leave();
            }
            uint64_t length = 0;
            std::memcpy(&length, data_ + pos_ + 1, 8);
            pos_ += 9;
            if (length > size_ - pos_) {
                leave();
            }
        }
    }
    uint8_t next() {
        const uint8_t op = peek();
        ++pos_;
        return op;
    }
    void expect(uint8_t op) {
        if (next() != op) {
            leave();
        }
    }
    const unsigned char* take(uint64_t n) {
        if (n > size_ - pos_) {
            leave();
        }
        const unsigned char* at = data_ + pos_;
        pos_ += n;
        return at;
    }
    template <typename T>
    T little() {
        T value;
        std::memcpy(&value, take(sizeof(T)), sizeof(T));
        return value;
    }

    void tick() {
        if (pos_ >= nextReport_) [[unlikely]] {
            nextReport_ = pos_ + kReportEvery;
            if (progress_ && !progress_(double(pos_) / double(std::max<size_t>(size_, 1)))) {
                throw SnapshotError(
                    SnapshotError::Kind::Stopped,
                    out_.source + ": reading stopped (byte " + std::to_string(pos_) + ")");
            }
        }
    }

    // -- The memo.

    const Value& memoAt(uint64_t index) const {
        if (index >= memo_.size()) {
            leave();
        }
        return memo_[index];
    }
    // The entry a GET at the next opcode names (after peek()).
    const Value& memoOfGet() const {
        if (data_[pos_] == kBinGet) {
            if (size_ - pos_ < 2) {
                leave();
            }
            return memoAt(data_[pos_ + 1]);
        }
        if (size_ - pos_ < 5) {
            leave();
        }
        uint32_t index = 0;
        std::memcpy(&index, data_ + pos_ + 1, 4);
        return memoAt(index);
    }
    // MEMOIZE and PUTs after a value store it at the memo's next index:
    // Python's and LibTorch's picklers number entries in order, so the memo
    // stays dense and is never written twice.
    void puts(const Value& value) {
        while (true) {
            const uint8_t op = peek();
            uint64_t index = memo_.size();
            if (op == kMemoize) {
                ++pos_;
            } else if (op == kBinPut) {
                ++pos_;
                index = little<uint8_t>();
            } else if (op == kLongBinPut) {
                ++pos_;
                index = little<uint32_t>();
            } else {
                return;
            }
            if (index != memo_.size()) {
                leave();
            }
            memo_.push_back(value);
        }
    }
    // A container's memo entries: Building until it is complete, so a GET of
    // it from inside itself (a cycle) is the tree reader's.
    struct Slots {
        size_t begin;
        size_t end;
    };
    Slots containerPuts() {
        const size_t begin = memo_.size();
        puts(Value{Kind::Building});
        return {begin, memo_.size()};
    }
    void complete(Slots slots, const Value& value) {
        for (size_t i = slots.begin; i < slots.end; ++i) {
            memo_[i] = value;
        }
    }

    // -- Scalars.

    Value integer(int64_t value) { return Value{Kind::Int, 0, 0, static_cast<uint64_t>(value)}; }
    Value text(uint64_t length) {
        if (length > limits_.pickle.maxStringBytes || length > UINT32_MAX) {
            leave();
        }
        const uint64_t offset = pos_;
        const auto* bytes = reinterpret_cast<const char*>(take(length));
        return Value{Kind::Text, wordOf(std::string_view(bytes, length)),
                     static_cast<uint32_t>(length), offset};
    }
    // A scalar or memo reference whose opcode was just read, and its puts.
    Value scalar(uint8_t op) {
        Value value;
        switch (op) {
            case kNone:
                value.kind = Kind::None;
                break;
            case kNewTrue:
            case kNewFalse:
                value = Value{Kind::Bool, 0, 0, op == kNewTrue};
                break;
            case kBinInt:
                value = integer(little<int32_t>());
                break;
            case kBinInt1:
                value = integer(little<uint8_t>());
                break;
            case kBinInt2:
                value = integer(little<uint16_t>());
                break;
            case kLong1: {
                const auto n = little<uint8_t>();
                if (n > 8) {  // wider than int64 (or said so with extra bytes)
                    leave();
                }
                value = integer(littleSigned(take(n), n));
                break;
            }
            case kBinFloat: {
                const unsigned char* bytes = take(8);
                uint64_t bits = 0;
                for (int i = 0; i < 8; ++i) {
                    bits = (bits << 8) | bytes[i];
                }
                value = Value{Kind::Float, 0, 0, bits};
                break;
            }
            case kShortBinUnicode:
                value = text(little<uint8_t>());
                break;
            case kBinUnicode:
                value = text(little<uint32_t>());
                break;
            case kBinUnicode8:
                value = text(little<uint64_t>());
                break;
            case kBinGet:
                value = memoAt(little<uint8_t>());
                break;
            case kLongBinGet:
                value = memoAt(little<uint32_t>());
                break;
            default:
                leave();
        }
        if (value.kind == Kind::Building) {
            leave();
        }
        puts(value);
        return value;
    }
    // A scalar field's value; a container there is the tree reader's to refuse.
    Value field() {
        const uint8_t op = next();
        if (!isScalar(op)) {
            leave();
        }
        return scalar(op);
    }

    std::string_view asText(const Value& value) const {
        if (value.kind != Kind::Text) {
            leave();
        }
        return std::string_view(reinterpret_cast<const char*>(data_ + value.bits), value.length);
    }
    int64_t asInt(const Value& value) const {
        if (value.kind != Kind::Int) {
            leave();
        }
        return static_cast<int64_t>(value.bits);
    }
    int64_t asByteCount(const Value& value) const {
        const int64_t count = asInt(value);
        if (count < 0) {
            leave();
        }
        return count;
    }
    uint64_t asAddress(const Value& value) const {
        return static_cast<uint64_t>(asByteCount(value));
    }
    double asNumber(const Value& value) const {
        if (value.kind == Kind::Float) {
            return std::bit_cast<double>(value.bits);
        }
        return static_cast<double>(asInt(value));
    }
    bool asBool(const Value& value) const {
        if (value.kind != Kind::Bool) {
            leave();
        }
        return value.bits != 0;
    }
    int asDevice(const Value& value) const {
        const int64_t device = asInt(value);
        if (device < 0 || uint64_t(device) >= limits_.maxDevices) {
            leave();
        }
        return static_cast<int>(device);
    }

    // -- Containers.

    bool takes(Next next, uint8_t op) const {
        switch (next) {
            case Next::Key:
                return isText(op) || (isGet(op) && memoOfGet().kind == Kind::Text);
            case Next::Value:
                return isValueStart(op);
            case Next::Dict:
                return op == kEmptyDict || isGet(op);
            case Next::List:
                return op == kEmptyList || isGet(op);
            case Next::Terminator:
                break;
        }
        return false;
    }

    // A dict's entries after its EMPTY_DICT and puts: batches (MARK, key,
    // value, ..., SETITEMS) and one-entry forms (key, value, SETITEM) until
    // the next opcode is its parent's. `entry(key, after)` reads the value;
    // with `anyKeys`, a key that is not a str comes as nullopt (the tree
    // reader passes over those entries).
    template <typename Entry>
    void entries(Next parent, Entry&& entry, bool anyKeys = false) {
        auto keyStarts = [&](uint8_t op) {
            return anyKeys ? isScalar(op) : isText(op) || isGet(op);
        };
        auto readKey = [&]() -> std::optional<std::string_view> {
            const uint8_t op = next();
            if (!keyStarts(op)) {
                leave();
            }
            const Value key = scalar(op);
            if (anyKeys && key.kind != Kind::Text) {
                return std::nullopt;
            }
            return asText(key);
        };
        auto one = [&](Next after) {
            if constexpr (std::is_invocable_v<Entry, const Value&, Next>) {
                const uint8_t op = next();
                if (!isText(op) && !isGet(op)) {
                    leave();
                }
                const Value key = scalar(op);
                asText(key);
                entry(key, after);
            } else if constexpr (std::is_invocable_v<Entry, std::optional<std::string_view>,
                                                     Next>) {
                entry(readKey(), after);
            } else {
                entry(*readKey(), after);
            }
        };
        while (true) {
            const uint8_t op = peek();
            if (op == kMark) {
                ++pos_;
                while (peek() != kSetItems) {
                    one(Next::Key);
                }
                ++pos_;
            } else if (keyStarts(op) && (!takes(parent, op) || oneEntryFollows())) {
                one(Next::Terminator);
                expect(kSetItem);
            } else {
                return;
            }
        }
    }

    // Whether a key that both a dict and its parent dict would take is the
    // dict's own one entry: read ahead (a bounded way) for the SETITEM that
    // would add it to the dict, then go back. By the stack machine's rule a
    // SETITEM after the dict, a key and a value adds to that dict.
    bool oneEntryFollows() {
        const size_t pos = pos_;
        const size_t memo = memo_.size();
        const size_t limit = limit_;
        limit_ = std::min(limit_, pos_ + kLookAhead);
        bool ours = false;
        try {
            const uint8_t op = next();
            scalar(op);
            skip(Next::Terminator, 0);
            ours = next() == kSetItem;
        } catch (const LookedTooFar&) {
        } catch (const LeftTheLayout&) {
        }
        pos_ = pos;
        memo_.resize(memo);
        limit_ = limit;
        return ours;
    }

    // A list's items after its EMPTY_LIST and puts: batches (MARK, items,
    // APPENDS) and one-item forms (item, APPEND) until the next opcode is
    // its parent's. `starts(op)` says whether op may begin an item, `item`
    // reads one (told what follows it: `inBatch` in a batch).
    template <typename Starts, typename Item>
    void items(Next parent, Starts&& starts, Next inBatch, Item&& item) {
        while (true) {
            tick();
            const uint8_t op = peek();
            if (op == kMark) {
                ++pos_;
                while (peek() != kAppends) {
                    tick();
                    item(inBatch);
                }
                ++pos_;
            } else if (starts(op) && !takes(parent, op)) {
                item(Next::Terminator);
                expect(kAppend);
            } else {
                return;
            }
        }
    }

    // -- Values the snapshot does not use: an unknown key's, passed over.

    // A scalar or a container of anything, and the tuples Python writes as
    // their items then TUPLE1-3 (so a value may be a run of values).
    void skip(Next after, int depth) {
        if (depth > kMaxSkipDepth) {
            leave();
        }
        skipOne(after, depth);
        size_t pending = 1;  // values on the stack since this one began
        while (true) {
            const uint8_t op = peek();
            if (op >= kTuple1 && op <= kTuple3 && size_t(op - kTuple1) + 1 <= pending) {
                ++pos_;
                pending -= op - kTuple1;
                puts(Value{});
            } else if (pending < kMaxTupleItems && isValueStart(op) &&
                       (pending > 1 || !takes(after, op))) {
                skipOne(Next::Value, depth);
                ++pending;
            } else {
                break;
            }
        }
        if (pending != 1) {
            leave();
        }
    }
    void skipOne(Next after, int depth) {
        const uint8_t op = next();
        if (isScalar(op)) {
            scalar(op);
            return;
        }
        switch (op) {
            case kEmptyList: {
                const Slots self = containerPuts();
                items(after, isValueStart, Next::Value,
                      [&](Next itemAfter) { skip(itemAfter, depth + 1); });
                complete(self, Value{});
                return;
            }
            case kEmptyDict: {
                const Slots self = containerPuts();
                entries(
                    after,
                    [&](std::optional<std::string_view>, Next itemAfter) {
                        skip(itemAfter, depth + 1);
                    },
                    true);
                complete(self, Value{});
                return;
            }
            case kEmptyTuple:
                puts(Value{});
                return;
            case kMark:  // a tuple of any length
                while (peek() != kTuple) {
                    skip(Next::Value, depth + 1);
                }
                ++pos_;
                puts(Value{});
                return;
            default:
                leave();
        }
    }
    // True where the value just read is the first item of a tuple.
    bool tupleFollows(Next after) {
        const uint8_t op = peek();
        return (op >= kTuple1 && op <= kTuple3) || (isValueStart(op) && !takes(after, op));
    }

    // -- The snapshot's parts.

    template <typename Item>
    void listOf(Next after, bool (*starts)(uint8_t), Next inBatch, Item&& item) {
        expect(kEmptyList);
        const Slots self = containerPuts();
        items(after, starts, inBatch, item);
        complete(self, Value{});
    }
    // Each key once: a second is the tree reader's (it keeps the last).
    static void once(uint32_t& seen, uint32_t key) {
        if (seen & key) {
            leave();
        }
        seen |= key;
    }

    void segments(Next after) {
        listOf(after, isEmptyDict, Next::Dict, [&](Next) {
            if (out_.segments.size() >= limits_.maxSegments) {
                leave();
            }
            segment();
        });
    }
    void segment() {
        expect(kEmptyDict);
        const Slots self = containerPuts();
        SnapshotSegment segment{};
        segment.stack = kNoStack;
        segment.large = true;
        segment.firstBlock = static_cast<uint32_t>(out_.blocks.size());
        std::optional<Value> device, address, totalSize;
        uint32_t seen = 0;
        entries(Next::Dict, [&](std::string_view key, Next after) {
            if (key == "device") {
                once(seen, 1);
                device = field();
            } else if (key == "address") {
                once(seen, 2);
                address = field();
            } else if (key == "total_size") {
                once(seen, 4);
                totalSize = field();
            } else if (key == "blocks") {
                once(seen, 8);
                blocks(after);
            } else if (key == "stream") {
                once(seen, 16);
                segment.stream = asInt(field());
            } else if (key == "segment_type") {
                once(seen, 32);
                segment.large = asText(field()) != "small";
            } else if (key == "is_expandable") {
                once(seen, 64);
                segment.expandable = asBool(field());
            } else if (key == "frames") {
                once(seen, 128);
                if (seen & 8) {  // the tree reader interns a segment's stack before its blocks'
                    leave();
                }
                segment.stack = stack(after);
            } else {
                skip(after, 0);
            }
        });
        complete(self, Value{});
        if (!device || !address || !totalSize) {
            leave();
        }
        segment.device = asDevice(*device);
        segment.address = asAddress(*address);
        segment.totalSize = asByteCount(*totalSize);
        segment.blockCount = static_cast<uint32_t>(out_.blocks.size() - segment.firstBlock);
        // Blocks were placed from 0 (the address may come after them); each
        // follows the ones before it from the segment's address, as memory_viz
        // places them.
        for (size_t i = segment.firstBlock; i < out_.blocks.size(); ++i) {
            out_.blocks[i].address += segment.address;
        }
        out_.segments.push_back(segment);
    }
    void blocks(Next after) {
        uint64_t at = 0;
        listOf(after, isEmptyDict, Next::Dict, [&](Next) {
            if (out_.blocks.size() >= limits_.maxBlocks) {
                leave();
            }
            out_.blocks.push_back(block(at));
            at += static_cast<uint64_t>(out_.blocks.back().size);
        });
    }
    SnapshotBlock block(uint64_t at) {
        expect(kEmptyDict);
        const Slots self = containerPuts();
        SnapshotBlock block{at, 0, -1, SnapshotBlockState::Other, kNoStack};
        std::optional<Value> size, state;
        uint32_t seen = 0;
        entries(Next::Dict, [&](std::string_view key, Next after) {
            if (key == "size") {
                once(seen, 1);
                size = field();
            } else if (key == "state") {
                once(seen, 2);
                state = field();
            } else if (key == "requested_size") {
                once(seen, 4);
                block.requestedSize = asByteCount(field());
            } else if (key == "address") {
                once(seen, 8);
                asAddress(field());  // checked, not used: see segment()
            } else if (key == "frames") {
                once(seen, 16);
                block.stack = stack(after);
            } else {
                skip(after, 0);
            }
        });
        complete(self, Value{});
        if (!size || !state) {
            leave();
        }
        block.size = asByteCount(*size);
        block.state = blockStateOf(asText(*state));
        if (block.requestedSize < 0) {
            block.requestedSize = block.size;
        }
        return block;
    }

    // A "frames" value: a list of frame dicts, interned; a list met again
    // through the memo is the same stack.
    uint32_t stack(Next after) {
        const uint8_t op = next();
        if (isGet(op)) {
            const Value known = scalar(op);
            if (known.kind != Kind::Stack) {
                leave();
            }
            return static_cast<uint32_t>(known.bits);
        }
        if (op != kEmptyList) {
            leave();
        }
        const Slots self = containerPuts();
        frames_.clear();
        auto frameStarts = [this](uint8_t op) {
            return op == kEmptyDict || (isGet(op) && memoOfGet().kind == Kind::Frame);
        };
        items(after, frameStarts, Next::Dict, [&](Next) {
            if (frames_.size() >= limits_.maxStackFrames) {
                leave();
            }
            frames_.push_back(frame());
        });
        const uint32_t id = frames_.empty() ? kNoStack : interner_.stack(frames_);
        complete(self, Value{Kind::Stack, 0, 0, id});
        return id;
    }
    uint32_t frame() {
        const uint8_t op = next();
        if (isGet(op)) {
            const Value known = scalar(op);
            if (known.kind != Kind::Frame) {
                leave();
            }
            return static_cast<uint32_t>(known.bits);
        }
        if (op != kEmptyDict) {
            leave();
        }
        const Slots self = containerPuts();
        std::optional<Value> filename, name, line;
        uint32_t seen = 0;
        entries(Next::Dict, [&](std::string_view key, Next after) {
            if (key == "filename") {
                once(seen, 1);
                filename = field();
            } else if (key == "name") {
                once(seen, 2);
                name = field();
            } else if (key == "line") {
                once(seen, 4);
                line = field();
            } else {
                skip(after, 0);
            }
        });
        if (!filename || !name || !line) {
            leave();
        }
        const std::string_view file = asText(*filename);
        const std::string_view function = asText(*name);
        const int64_t number = asInt(*line);
        const uint32_t fileId = interner_.string(file);  // then the name, as the tree reader
        const uint32_t nameId = interner_.string(function);
        const uint32_t id = interner_.frame(fileId, nameId, number);
        complete(self, Value{Kind::Frame, 0, 0, id});
        return id;
    }

    void traces(Next after) {
        listOf(after, isEmptyList, Next::List, [&](Next traceAfter) {
            if (out_.deviceTraces.size() >= limits_.maxDevices) {
                leave();
            }
            out_.deviceTraces.emplace_back();
            events(traceAfter, out_.deviceTraces.back());
        });
    }
    void events(Next after, SnapshotDeviceTrace& trace) {
        const size_t start = pos_;
        const size_t memoAtStart = memo_.size();
        listOf(after, isEmptyDict, Next::Dict, [&](Next) {
            if (events_ >= limits_.maxEvents) {
                leave();
            }
            ++events_;
            event(trace);
            if (trace.size() == kEventsBeforeReserving ||
                (trace.size() > kEventsBeforeReserving &&
                 trace.size() == trace.action.capacity())) {
                reserveAhead(trace, pos_ - start, memo_.size() - memoAtStart);
            }
        });
    }
    // Room for the rest of a device's events and their memo entries at the
    // rate its events so far took the file (after its first ones, and again
    // should that room run out): grown by doubling instead, ten million
    // events' columns and memo are copied and faulted in twice over (0.4 s
    // of a 2 s parse). Bounded by the events the limits still allow.
    void reserveAhead(SnapshotDeviceTrace& trace, size_t bytesSoFar, size_t memoSoFar) {
        // No file makes it hold more than a few times its own size: an event
        // and a memo entry each take some bytes of it.
        const size_t left = size_ - pos_;
        const double perByte = double(trace.size()) / double(std::max<size_t>(bytesSoFar, 1));
        const size_t more = std::min({size_t(double(left) * perByte * kReserveMargin),
                                      limits_.maxEvents - events_, left / kLeastEventBytes});
        // Never by less than half again: an estimate short by one event at a
        // time would copy the columns at each.
        const size_t events =
            std::max(trace.size() + more, trace.action.capacity() + trace.action.capacity() / 2);
        trace.reserve(events);
        const double memoPerEvent = double(memoSoFar) / double(trace.size());
        memo_.reserve(memo_.size() + std::min(size_t(double(more) * memoPerEvent * kReserveMargin),
                                              left / kLeastMemoBytes));
    }
    // One event's fields as the file gives them; event() checks and keeps them.
    struct EventFields {
        std::optional<Value> action, addr, size, deviceFree, time, category;
        int64_t stream = 0;
        uint32_t stack = kNoStack;
    };
    EventFields eventFields() {
        expect(kEmptyDict);
        const Slots self = containerPuts();
        EventFields f;
        uint32_t seen = 0;
        entries(Next::Dict, [&](const Value& key, Next after) {
            switch (key.word) {
                case kAddr:
                    once(seen, 1);
                    f.addr = field();
                    return;
                case kSize:
                    once(seen, 2);
                    f.size = field();
                    return;
                case kAction:
                    once(seen, 4);
                    f.action = field();
                    return;
                case kStream:
                    once(seen, 8);
                    f.stream = asInt(field());
                    return;
                case kFrames:
                    once(seen, 16);
                    f.stack = stack(after);
                    return;
                case kTimeUs:
                    once(seen, 32);
                    f.time = field();
                    return;
                case kCategory:
                    once(seen, 64);
                    f.category = field();
                    return;
                case kDeviceFree:
                    once(seen, 128);
                    f.deviceFree = field();
                    return;
                default:
                    skip(after, 0);
            }
        });
        complete(self, Value{});
        return f;
    }
    void event(SnapshotDeviceTrace& trace) {
        const auto [action, addr, size, deviceFree, time, category, stream, stackId] =
            eventFields();
        if (!action) {
            leave();
        }
        asText(*action);
        const SnapshotAction kind = action->word >= kFirstAction
                                        ? kActions[action->word - kFirstAction]
                                        : actionOf(asText(*action));
        uint64_t where = 0;
        if (addr) {
            where = asAddress(*addr);
        } else if (eventNeedsAddress(kind)) {
            leave();
        }
        if (kind == SnapshotAction::Oom && deviceFree) {
            where = asAddress(*deviceFree);
        }
        int64_t bytes = 0;
        if (size) {
            bytes = asByteCount(*size);
        } else if (eventNeedsSize(kind)) {
            leave();
        }
        std::optional<double> timeUs;
        if (time) {
            timeUs = asNumber(*time);
            if (!std::isfinite(*timeUs)) {
                leave();
            }
        }
        uint16_t categoryId = 0;
        if (category) {
            const auto id = eventCategoryId(out_.eventCategories, asText(*category));
            if (!id) {
                leave();
            }
            categoryId = *id;
        }
        appendEvent(trace, kind, where, bytes, stream, timeUs, stackId, categoryId);
    }

    void annotations(Next after) {
        listOf(after, isEmptyDict, Next::Dict, [&](Next) {
            if (out_.annotations.size() >= limits_.maxAnnotations) {
                leave();
            }
            annotation();
        });
    }
    void annotation() {
        expect(kEmptyDict);
        const Slots self = containerPuts();
        std::optional<Value> stage, name, time, device;
        uint32_t seen = 0;
        entries(Next::Dict, [&](std::string_view key, Next after) {
            if (key == "stage") {
                once(seen, 1);
                stage = field();
            } else if (key == "name") {
                once(seen, 2);
                name = field();
            } else if (key == "time_us") {
                once(seen, 4);
                time = field();
            } else if (key == "device") {
                once(seen, 8);
                device = field();
            } else {
                skip(after, 0);
            }
        });
        complete(self, Value{});
        if (!stage || !name || !time) {
            leave();
        }
        const std::string_view what = asText(*stage);
        if (what != "START" && what != "END") {
            leave();
        }
        const int deviceIndex = device ? asDevice(*device) : -1;
        const double timeUs = asNumber(*time);
        const std::string_view text = asText(*name);
        out_.annotations.push_back({deviceIndex, timeUs, what == "START", interner_.string(text)});
    }

    // Settings as text, as the tree reader shows them: a scalar as Python
    // prints it, a dict or list one level deep.
    void settings(Next after) {
        expect(kEmptyDict);
        const Slots self = containerPuts();
        size_t count = 0;
        entries(
            after,
            [&](std::optional<std::string_view> key, Next valueAfter) {
                if (2 * ++count > 1000) {  // the tree reader's bound, on key and value together
                    leave();
                }
                if (!key) {
                    skip(valueAfter, 0);
                    return;
                }
                const std::string shown = setting(valueAfter);
                out_.allocatorSettings.emplace_back(utf8(key->substr(0, 200)), utf8(shown));
            },
            true);
        complete(self, Value{});
    }
    std::string setting(Next after) {
        const uint8_t op = peek();
        if (isScalar(op)) {
            ++pos_;
            const Value value = scalar(op);
            // A container met again through the memo is shown one level deep
            // by the tree reader; this reader kept none of its items.
            if (value.kind == Kind::Container || value.kind == Kind::Frame ||
                value.kind == Kind::Stack || tupleFollows(after)) {
                leave();
            }
            return shown(value);
        }
        if (op != kEmptyDict && op != kEmptyList) {
            leave();  // a tuple: the tree reader shows it as a list
        }
        ++pos_;
        const bool dict = op == kEmptyDict;
        const Slots self = containerPuts();
        std::string text = dict ? "{" : "[";
        size_t count = 0;
        auto add = [&](std::optional<std::string_view> name, Next itemAfter) {
            const std::string item = settingItem(itemAfter);
            if (!name || ++count > 64) {
                return;
            }
            text += count > 1 ? ", " : "";
            text += dict ? utf8(name->substr(0, 200)) + ": " + item : item;
        };
        if (dict) {
            entries(after, add, true);
        } else {
            items(after, isValueStart, Next::Value,
                  [&](Next itemAfter) { add(std::string_view(), itemAfter); });
        }
        complete(self, Value{});
        if (tupleFollows(after)) {
            leave();
        }
        text += count > 64 ? ", ..." : "";
        text += dict ? "}" : "]";
        return text;
    }
    std::string settingItem(Next after) {
        const uint8_t op = peek();
        if (isScalar(op)) {
            ++pos_;
            const Value value = scalar(op);
            if (tupleFollows(after)) {
                leave();
            }
            return shown(value);
        }
        skip(after, 1);
        return "...";
    }
    std::string shown(const Value& value) const {
        switch (value.kind) {
            case Kind::None:
                return "None";
            case Kind::Bool:
                return value.bits ? "True" : "False";
            case Kind::Int:
                return std::to_string(static_cast<int64_t>(value.bits));
            case Kind::Float: {
                char text[32];
                std::snprintf(text, sizeof text, "%g", std::bit_cast<double>(value.bits));
                return text;
            }
            case Kind::Text:
                return utf8(asText(value).substr(0, 1000));
            default:
                return "...";
        }
    }

    const unsigned char* data_;
    size_t size_;
    size_t pos_ = 0;
    size_t limit_ = size_;  // where peek() stops: the end, or how far a look ahead goes
    uint64_t nextReport_ = 0;
    MemorySnapshot& out_;
    const SnapshotLimits& limits_;
    const SnapshotProgress& progress_;
    Interner interner_;
    std::vector<Value> memo_;
    std::vector<uint32_t> frames_;  // the stack being read
    size_t events_ = 0;
};

}  // namespace

std::optional<MemorySnapshot> streamSnapshotPickle(std::string_view bytes,
                                                   const std::string& source,
                                                   const SnapshotLimits& limits,
                                                   const SnapshotProgress& progress) {
    MemorySnapshot snapshot;
    snapshot.source = source;
    try {
        PickleStream(bytes, snapshot, limits, progress).read();
    } catch (const LeftTheLayout&) {
        return std::nullopt;
    }
    if (progress && !progress(1.0)) {
        throw SnapshotError(SnapshotError::Kind::Stopped, source + ": reading stopped");
    }
    return snapshot;
}

}  // namespace stepscope
