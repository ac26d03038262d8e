#include "util/pickle_reader.h"

#include <bit>
#include <charconv>
#include <cstring>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>

namespace stepscope {

static_assert(std::endian::native == std::endian::little,
              "the pickle reader reads little-endian fields with memcpy");

namespace {

constexpr uint64_t kNoBuilder = UINT64_MAX;
constexpr uint32_t kNoChunk = UINT32_MAX;
// The first nodes of every document: values that need no node of their own.
constexpr PickleRef kNone = 0;
constexpr PickleRef kFalse = 1;
constexpr PickleRef kTrue = 2;
constexpr PickleRef kEmptyTuple = 3;

struct OpcodeName {
    unsigned char byte;
    const char* name;
};
// clang-format off
constexpr OpcodeName kOpcodeNames[] = {
    {'(', "MARK"}, {'.', "STOP"}, {'0', "POP"}, {'1', "POP_MARK"}, {'2', "DUP"}, {'F', "FLOAT"},
    {'I', "INT"}, {'J', "BININT"}, {'K', "BININT1"}, {'L', "LONG"}, {'M', "BININT2"},
    {'N', "NONE"}, {'P', "PERSID"}, {'Q', "BINPERSID"}, {'R', "REDUCE"}, {'S', "STRING"},
    {'T', "BINSTRING"}, {'U', "SHORT_BINSTRING"}, {'V', "UNICODE"}, {'X', "BINUNICODE"},
    {'a', "APPEND"}, {'b', "BUILD"}, {'c', "GLOBAL"}, {'d', "DICT"}, {'}', "EMPTY_DICT"},
    {'e', "APPENDS"}, {'g', "GET"}, {'h', "BINGET"}, {'i', "INST"}, {'j', "LONG_BINGET"},
    {'l', "LIST"}, {']', "EMPTY_LIST"}, {'o', "OBJ"}, {'p', "PUT"}, {'q', "BINPUT"},
    {'r', "LONG_BINPUT"}, {'s', "SETITEM"}, {'t', "TUPLE"}, {')', "EMPTY_TUPLE"},
    {'u', "SETITEMS"}, {'G', "BINFLOAT"}, {'B', "BINBYTES"}, {'C', "SHORT_BINBYTES"},
    {0x80, "PROTO"}, {0x81, "NEWOBJ"}, {0x82, "EXT1"}, {0x83, "EXT2"}, {0x84, "EXT4"},
    {0x85, "TUPLE1"}, {0x86, "TUPLE2"}, {0x87, "TUPLE3"}, {0x88, "NEWTRUE"}, {0x89, "NEWFALSE"},
    {0x8a, "LONG1"}, {0x8b, "LONG4"}, {0x8c, "SHORT_BINUNICODE"}, {0x8d, "BINUNICODE8"},
    {0x8e, "BINBYTES8"}, {0x8f, "EMPTY_SET"}, {0x90, "ADDITEMS"}, {0x91, "FROZENSET"},
    {0x92, "NEWOBJ_EX"}, {0x93, "STACK_GLOBAL"}, {0x94, "MEMOIZE"}, {0x95, "FRAME"},
    {0x96, "BYTEARRAY8"}, {0x97, "NEXT_BUFFER"}, {0x98, "READONLY_BUFFER"},
};
// clang-format on

const char* opcodeName(uint8_t op) {
    for (const OpcodeName& entry : kOpcodeNames) {
        if (entry.byte == op) {
            return entry.name;
        }
    }
    return nullptr;
}

std::string opcodeLabel(uint8_t op) {
    if (const char* name = opcodeName(op)) {
        return name;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", op);
    return hex;
}

// Text from the file, safe to put in a message: printable ASCII, cut short.
std::string printable(std::string_view text, size_t limit = 120) {
    std::string out;
    for (size_t i = 0; i < text.size() && i < limit; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        out += (c >= 0x20 && c < 0x7f) ? char(c) : '?';
    }
    if (text.size() > limit) {
        out += "...";
    }
    return out;
}

bool isContainer(PickleKind kind) {
    return kind == PickleKind::Tuple || kind == PickleKind::List || kind == PickleKind::Dict ||
           kind == PickleKind::Set || kind == PickleKind::FrozenSet;
}

// Little-endian two's complement of `n` bytes into int64, when it fits.
std::optional<int64_t> decodeLong(const unsigned char* bytes, uint64_t n) {
    if (n == 0) {
        return 0;
    }
    const bool negative = bytes[n - 1] & 0x80;
    if (n > 8) {
        const unsigned char fill = negative ? 0xff : 0x00;
        for (uint64_t i = 8; i < n; ++i) {
            if (bytes[i] != fill) {
                return std::nullopt;
            }
        }
        if (bool(bytes[7] & 0x80) != negative) {
            return std::nullopt;
        }
        n = 8;
    }
    uint64_t value = 0;
    for (uint64_t i = n; i-- > 0;) {
        value = (value << 8) | bytes[i];
    }
    if (negative && n < 8) {
        value |= ~uint64_t{0} << (8 * n);
    }
    return static_cast<int64_t>(value);
}

}  // namespace

PickleError::PickleError(Reason why, uint64_t at, std::string op, std::string message,
                         std::string askedFor)
    : std::runtime_error("byte " + std::to_string(at) + " (" + op + "): " + message),
      reason(why),
      offset(at),
      opcode(std::move(op)),
      detail(std::move(message)),
      asked(std::move(askedFor)) {}

PicklePolicy PicklePolicy::allowing(std::vector<std::pair<std::string, std::string>> globals) {
    auto allowed = std::make_shared<std::set<std::pair<std::string, std::string>, std::less<>>>(
        globals.begin(), globals.end());
    PicklePolicy policy;
    policy.allowGlobal = [allowed](std::string_view module, std::string_view name) {
        return allowed->count(
                   std::pair<std::string, std::string>(std::string(module), std::string(name))) > 0;
    };
    return policy;
}

// The stack machine. It builds containers in chunks while the pickle adds
// to them (a list may grow by APPENDS long after it was made), then lays
// every container's entries out contiguously once STOP is reached.
class PickleMachine {
public:
    PickleMachine(PickleDocument& doc, const PicklePolicy& policy, const PickleLimits& limits,
                  const PickleProgress& progress)
        : doc_(doc),
          policy_(policy),
          limits_(limits),
          progress_(progress),
          data_(reinterpret_cast<const unsigned char*>(doc.bytes_.data())),
          size_(doc.bytes_.size()) {
        limits_.maxStringBytes = std::min<uint64_t>(limits_.maxStringBytes, UINT32_MAX);
        limits_.maxItems = std::min<size_t>(limits_.maxItems, UINT32_MAX - 1);
        limits_.maxValues = std::min<size_t>(limits_.maxValues, UINT32_MAX - 1);
        // Room for a typical pickle's values up front (one per 8 bytes or so):
        // growing by doubling costs copies and page faults on a large file.
        doc_.nodes_.reserve(std::min<uint64_t>(limits_.maxValues, size_ / 8 + 16));
        staging_.reserve(std::min<uint64_t>(limits_.maxItems, size_ / 4 + 16));
        doc_.nodes_.push_back({0, 0, PickleKind::None});
        doc_.nodes_.push_back({0, 0, PickleKind::Bool});
        doc_.nodes_.push_back({1, 0, PickleKind::Bool});
        doc_.nodes_.push_back({kNoBuilder, 0, PickleKind::Tuple});
    }

    void run() {
        while (true) {
            opStart_ = pos_;
            if (pos_ >= size_) {
                op_ = 0;
                throw PickleError(PickleError::Reason::Truncated, pos_, "end",
                                  "the pickle ends without STOP");
            }
            if (pos_ >= nextReport_) [[unlikely]] {
                report();
            }
            op_ = data_[pos_++];
            if (op_ == '.') {
                doc_.root_ = pop();
                doc_.stopOffset_ = opStart_;
                break;
            }
            step();
        }
        finalize();
        checkPersistentIds();
    }

private:
    static constexpr uint64_t kReportEvery = uint64_t{1} << 20;

    void report() {
        nextReport_ = pos_ + kReportEvery;
        if (progress_ && !progress_(pos_, size_)) {
            op_ = 0;
            throw PickleError(PickleError::Reason::Stopped, pos_, "progress",
                              "stopped by the caller");
        }
    }

    using Reason = PickleError::Reason;

    [[noreturn]] void fail(Reason reason, std::string detail, std::string asked = {}) const {
        throw PickleError(reason, opStart_, opcodeLabel(op_), std::move(detail), std::move(asked));
    }
    [[noreturn]] void failMalformed(PickleError::Fault fault, std::string detail,
                                    std::string asked = {}) const {
        PickleError error(Reason::Malformed, opStart_, opcodeLabel(op_), std::move(detail),
                          std::move(asked));
        error.fault = fault;
        throw error;
    }

    // "an int", "a list", "None": a value's type for a message.
    std::string aType(PickleRef ref) const {
        const std::string name = doc_.typeName(ref);
        if (name == "None") {
            return name;
        }
        return (std::string("aeiou").find(name[0]) != std::string::npos ? "an " : "a ") + name;
    }

    const unsigned char* take(uint64_t n) {
        if (n > size_ - pos_) {
            fail(Reason::Truncated, "needs " + std::to_string(n) + " bytes, " +
                                        std::to_string(size_ - pos_) + " left in the file");
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

    // The text up to the next newline (protocol 0's arguments).
    std::string_view line() {
        const void* end = std::memchr(data_ + pos_, '\n', size_ - pos_);
        if (!end) {
            fail(Reason::Truncated, "its text argument has no end of line");
        }
        const auto length =
            static_cast<uint64_t>(static_cast<const unsigned char*>(end) - (data_ + pos_));
        std::string_view text(reinterpret_cast<const char*>(data_ + pos_), length);
        pos_ += length + 1;
        return text;
    }
    uint64_t decimalLine(const char* what) {
        const std::string_view text = line();
        uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size()) {
            fail(Reason::Malformed,
                 std::string(what) + " '" + printable(text) + "' is not a non-negative integer");
        }
        return value;
    }

    PickleRef newNode(PickleKind kind, uint64_t value, uint32_t count = 0) {
        if (doc_.nodes_.size() >= limits_.maxValues) {
            fail(Reason::TooLarge,
                 "more than " + std::to_string(limits_.maxValues) + " values (the reader's limit)");
        }
        doc_.nodes_.push_back({value, count, kind});
        return static_cast<PickleRef>(doc_.nodes_.size() - 1);
    }
    PickleRef newContainer(PickleKind kind) { return newNode(kind, kNoBuilder); }
    PickleRef newText(PickleKind kind, uint64_t length) {
        if (length <= size_ - pos_ && length > limits_.maxStringBytes) {  // else: truncated
            fail(Reason::TooLarge, "a value of " + std::to_string(length) +
                                       " bytes (the reader's limit is " +
                                       std::to_string(limits_.maxStringBytes) + ")");
        }
        const uint64_t offset = pos_;
        take(length);
        return newNode(kind, offset, static_cast<uint32_t>(length));
    }
    PickleRef newInt(int64_t value) {
        return newNode(PickleKind::Int, static_cast<uint64_t>(value));
    }
    PickleRef newLong(uint64_t length) {
        if (length <= size_ - pos_ && length > limits_.maxStringBytes) {  // else: truncated
            fail(Reason::TooLarge, "an integer of " + std::to_string(length) + " bytes");
        }
        const uint64_t offset = pos_;
        const unsigned char* bytes = take(length);
        if (const auto value = decodeLong(bytes, length)) {
            return newInt(*value);
        }
        return newNode(PickleKind::BigInt, offset, static_cast<uint32_t>(length));
    }

    void addItems(PickleRef container, const PickleRef* items, size_t n) {
        if (n == 0) {
            return;
        }
        if (n > limits_.maxItems - staging_.size()) {
            fail(Reason::TooLarge, "containers hold more than " + std::to_string(limits_.maxItems) +
                                       " entries together (the reader's limit)");
        }
        PickleDocument::Node& target = doc_.nodes_[container];
        const auto begin = static_cast<uint32_t>(staging_.size());
        if (target.value == kNoBuilder) {
            target.value = builders_.size();
            builders_.push_back({kNoChunk, kNoChunk});
        }
        Builder& builder = builders_[target.value];
        if (builder.last != kNoChunk &&
            chunks_[builder.last].begin + chunks_[builder.last].size == begin) {
            chunks_[builder.last].size += static_cast<uint32_t>(n);  // still the newest run
        } else {
            chunks_.push_back({begin, static_cast<uint32_t>(n), kNoChunk});
            const auto chunk = static_cast<uint32_t>(chunks_.size() - 1);
            (builder.last == kNoChunk ? builder.first : chunks_[builder.last].next) = chunk;
            builder.last = chunk;
        }
        target.count += static_cast<uint32_t>(n);
        staging_.insert(staging_.end(), items, items + n);
    }

    // The stack: values above the last MARK are the ones an opcode may pop.
    size_t base() const { return marks_.empty() ? 0 : marks_.back(); }
    void checkDepth() {
        if (stack_.size() + marks_.size() >= limits_.maxStackDepth) {
            fail(Reason::TooLarge, "nests deeper than " + std::to_string(limits_.maxStackDepth) +
                                       " levels (values and marks on the stack; the "
                                       "reader's limit)");
        }
    }
    void push(PickleRef ref) {
        checkDepth();
        stack_.push_back(ref);
    }
    void needValues(size_t n) const {
        if (stack_.size() - base() < n) {
            failMalformed(
                PickleError::Fault::Underflow,
                "stack underflow: needs " + std::to_string(n) + (n == 1 ? " value" : " values") +
                    (marks_.empty() ? " and the stack holds " : " and above the last MARK are ") +
                    std::to_string(stack_.size() - base()));
        }
    }
    PickleRef pop() {
        needValues(1);
        const PickleRef ref = stack_.back();
        stack_.pop_back();
        return ref;
    }
    PickleRef top() const {
        needValues(1);
        return stack_.back();
    }
    size_t markedBegin() const {
        if (marks_.empty()) {
            failMalformed(PickleError::Fault::NoMark, "no MARK to take values from");
        }
        return marks_.back();
    }
    void dropToMark(size_t begin) {
        stack_.resize(begin);
        marks_.pop_back();
    }

    // A container made of the values since the last MARK, pushed in their place.
    void collectToMark(PickleKind kind) {
        const size_t begin = markedBegin();
        const size_t n = stack_.size() - begin;
        if (kind == PickleKind::Dict && n % 2 != 0) {
            fail(Reason::Malformed, "a key without a value (" + std::to_string(n) + " values)");
        }
        const PickleRef container = newContainer(kind);
        addItems(container, stack_.data() + begin, n);
        dropToMark(begin);
        push(container);
    }

    // The container an APPENDS / SETITEMS / ADDITEMS adds to: the value just
    // below the MARK, itself above the MARK before.
    PickleRef markTarget(size_t begin) const {
        const size_t below = marks_.size() >= 2 ? marks_[marks_.size() - 2] : 0;
        if (begin == 0 || begin - 1 < below) {
            failMalformed(PickleError::Fault::Underflow,
                          "stack underflow: no container below the MARK");
        }
        return stack_[begin - 1];
    }

    PickleRef listTarget(PickleRef ref) {
        if (doc_.nodes_[ref].kind == PickleKind::List) {
            return ref;
        }
        if (doc_.nodes_[ref].kind == PickleKind::Call) {
            PickleCall& call = doc_.calls_[doc_.nodes_[ref].value];
            if (call.listItems == kNoPickleRef) {
                call.listItems = newContainer(PickleKind::List);
            }
            return call.listItems;
        }
        fail(Reason::Malformed, "appends to " + aType(ref) + ", not a list");
    }
    PickleRef dictTarget(PickleRef ref) {
        if (doc_.nodes_[ref].kind == PickleKind::Dict) {
            return ref;
        }
        if (doc_.nodes_[ref].kind == PickleKind::Call) {
            PickleCall& call = doc_.calls_[doc_.nodes_[ref].value];
            if (call.dictItems == kNoPickleRef) {
                call.dictItems = newContainer(PickleKind::Dict);
            }
            return call.dictItems;
        }
        fail(Reason::Malformed, "sets an item of " + aType(ref) + ", not a dict");
    }

    // The memo: dense while the pickle numbers its entries in order (Python
    // and LibTorch do), a map for the rest, so an index far out costs one
    // entry and not the gap before it.
    void memoPut(uint64_t index) {
        const PickleRef value = top();
        if (index <= denseMemo_.size()) {
            if (index == denseMemo_.size()) {
                if (denseMemo_.size() + sparseMemo_.size() >= limits_.maxValues) {
                    fail(Reason::TooLarge, "more than " + std::to_string(limits_.maxValues) +
                                               " memo entries (the reader's limit)");
                }
                denseMemo_.push_back(kNoPickleRef);
            }
            memoCount_ += denseMemo_[index] == kNoPickleRef &&
                          (sparseMemo_.empty() || !sparseMemo_.count(index));
            denseMemo_[index] = value;
            return;
        }
        if (denseMemo_.size() + sparseMemo_.size() >= limits_.maxValues) {
            fail(Reason::TooLarge, "more than " + std::to_string(limits_.maxValues) +
                                       " memo entries (the reader's limit)");
        }
        memoCount_ += sparseMemo_.insert_or_assign(index, value).second;
    }
    void memoGet(uint64_t index) {
        PickleRef value = kNoPickleRef;
        if (index < denseMemo_.size()) {
            value = denseMemo_[index];
        }
        if (value == kNoPickleRef && !sparseMemo_.empty()) {
            if (const auto found = sparseMemo_.find(index); found != sparseMemo_.end()) {
                value = found->second;
            }
        }
        if (value == kNoPickleRef) {
            failMalformed(PickleError::Fault::NoMemo,
                          "memo entry " + std::to_string(index) + " was never stored",
                          std::to_string(index));
        }
        push(value);
    }

    PickleRef global(std::string_view module, std::string_view name, uint64_t moduleOffset,
                     uint64_t nameOffset) {
        if (!policy_.allowGlobal || !policy_.allowGlobal(module, name)) {
            const std::string asked = printable(module) + "." + printable(name);
            fail(Reason::Refused, "asks to call " + asked, asked);
        }
        doc_.globals_.push_back({moduleOffset, static_cast<uint32_t>(module.size()), nameOffset,
                                 static_cast<uint32_t>(name.size())});
        return newNode(PickleKind::Global, doc_.globals_.size() - 1);
    }
    uint64_t offsetIn(std::string_view text) const {
        return static_cast<uint64_t>(reinterpret_cast<const unsigned char*>(text.data()) - data_);
    }
    PickleRef call(PickleCall::How how, PickleRef callable, PickleRef args,
                   PickleRef kwargs = kNoPickleRef) {
        if (doc_.nodes_[callable].kind != PickleKind::Global) {
            const std::string asked = aType(callable);
            fail(Reason::Refused, "asks to call " + asked, asked);
        }
        if (doc_.nodes_[args].kind != PickleKind::Tuple) {
            fail(Reason::Malformed, "the arguments are " + aType(args) + ", not a tuple");
        }
        if (kwargs != kNoPickleRef && doc_.nodes_[kwargs].kind != PickleKind::Dict) {
            fail(Reason::Malformed, "the keyword arguments are " + aType(kwargs) + ", not a dict");
        }
        PickleCall record;
        record.how = how;
        record.callable = callable;
        record.args = args;
        record.kwargs = kwargs;
        doc_.calls_.push_back(record);
        return newNode(PickleKind::Call, doc_.calls_.size() - 1);
    }
    PickleRef persistent(PickleRef id) {
        if (!policy_.checkPersistentId) {
            fail(Reason::Refused,
                 "asks to load a persistent object (id: " + doc_.typeName(id) +
                     "), which only its writer's program can resolve",
                 "a persistent object");
        }
        persistentIds_.emplace_back(id, opStart_);
        return newNode(PickleKind::PersistentId, id);
    }

    // The stack itself and the framing: PROTO, FRAME, MARK, POP, POP_MARK, DUP.
    bool stepStack() {
        switch (op_) {
            case 0x80: {  // PROTO
                const auto version = little<uint8_t>();
                if (version > 5) {
                    fail(Reason::Malformed,
                         "protocol " + std::to_string(version) + " is newer than 5");
                }
                doc_.protocol_ = version;
                break;
            }
            case 0x95: {  // FRAME: a length prefix for the opcodes that follow
                const auto length = little<uint64_t>();
                if (length > size_ - pos_) {
                    fail(Reason::Truncated, "a frame of " + std::to_string(length) +
                                                " bytes runs past the end of the file (" +
                                                std::to_string(size_ - pos_) + " bytes left)");
                }
                break;
            }
            case '(':
                checkDepth();
                marks_.push_back(stack_.size());
                break;
            case '0':  // POP: with nothing above the MARK, Python drops the MARK
                if (stack_.size() > base()) {
                    stack_.pop_back();
                } else if (!marks_.empty() && policy_.popMayDropMark) {
                    marks_.pop_back();
                } else {
                    needValues(1);
                }
                break;
            case '1':  // POP_MARK
                dropToMark(markedBegin());
                break;
            case '2':  // DUP
                push(top());
                break;
            default:
                return false;
        }
        return true;
    }

    // None, bools, integers and floats.
    bool stepNumber() {
        switch (op_) {
            case 'N':
                push(kNone);
                break;
            case 0x88:
                push(kTrue);
                break;
            case 0x89:
                push(kFalse);
                break;
            case 'J':
                push(newInt(little<int32_t>()));
                break;
            case 'K':
                push(newInt(little<uint8_t>()));
                break;
            case 'M':
                push(newInt(little<uint16_t>()));
                break;
            case 0x8a:  // LONG1
                push(newLong(little<uint8_t>()));
                break;
            case 0x8b: {  // LONG4
                const auto length = little<int32_t>();
                if (length < 0) {
                    fail(Reason::Malformed, "negative length " + std::to_string(length));
                }
                push(newLong(static_cast<uint64_t>(length)));
                break;
            }
            case 'I':
            case 'L':
                push(textInteger());
                break;
            case 'F': {
                const std::string_view text = line();
                double value = 0;
                const auto [end, error] =
                    std::from_chars(text.data(), text.data() + text.size(), value);
                if (error != std::errc() || end != text.data() + text.size()) {
                    fail(Reason::Malformed, "'" + printable(text) + "' is not a float");
                }
                push(newNode(PickleKind::Float, std::bit_cast<uint64_t>(value)));
                break;
            }
            case 'G': {  // BINFLOAT, big-endian
                const unsigned char* bytes = take(8);
                uint64_t bits = 0;
                for (int i = 0; i < 8; ++i) {
                    bits = (bits << 8) | bytes[i];
                }
                push(newNode(PickleKind::Float, bits));
                break;
            }
            default:
                return false;
        }
        return true;
    }

    // Strings and bytes of every width, views into the file.
    bool stepText() {
        switch (op_) {
            case 'X':
                push(newText(PickleKind::String, little<uint32_t>()));
                break;
            case 0x8c:
                push(newText(PickleKind::String, little<uint8_t>()));
                break;
            case 0x8d:
                push(newText(PickleKind::String, little<uint64_t>()));
                break;
            case 'T': {
                const auto length = little<int32_t>();
                if (length < 0) {
                    fail(Reason::Malformed, "negative length " + std::to_string(length));
                }
                push(newText(PickleKind::String, static_cast<uint64_t>(length)));
                break;
            }
            case 'U':
                push(newText(PickleKind::String, little<uint8_t>()));
                break;
            case 'B':
                push(newText(PickleKind::Bytes, little<uint32_t>()));
                break;
            case 'C':
                push(newText(PickleKind::Bytes, little<uint8_t>()));
                break;
            case 0x8e:
                push(newText(PickleKind::Bytes, little<uint64_t>()));
                break;
            case 0x96:
                push(newText(PickleKind::ByteArray, little<uint64_t>()));
                break;
            case 'S':
            case 'V':
                fail(Reason::Malformed,
                     "protocol 0 text strings are not read; write the pickle with protocol 2 "
                     "or later");
            default:
                return false;
        }
        return true;
    }

    // Tuples, lists, dicts and sets, made new.
    bool stepContainer() {
        switch (op_) {
            case ')':
                push(kEmptyTuple);
                break;
            case 0x85:
            case 0x86:
            case 0x87: {  // TUPLE1..3
                const size_t n = op_ - 0x84u;
                needValues(n);
                const PickleRef tuple = newContainer(PickleKind::Tuple);
                addItems(tuple, stack_.data() + stack_.size() - n, n);
                stack_.resize(stack_.size() - n);
                push(tuple);
                break;
            }
            case 't':
                collectToMark(PickleKind::Tuple);
                break;
            case ']':
                push(newContainer(PickleKind::List));
                break;
            case 'l':
                collectToMark(PickleKind::List);
                break;
            case '}':
                push(newContainer(PickleKind::Dict));
                break;
            case 'd':
                collectToMark(PickleKind::Dict);
                break;
            case 0x8f:
                push(newContainer(PickleKind::Set));
                break;
            case 0x91:
                collectToMark(PickleKind::FrozenSet);
                break;
            default:
                return false;
        }
        return true;
    }

    // What adds to a list, dict or set made before: APPEND(S), SETITEM(S), ADDITEMS.
    bool stepAdd() {
        switch (op_) {
            case 'a': {
                const PickleRef value = pop();
                const PickleRef list = listTarget(top());
                addItems(list, &value, 1);
                break;
            }
            case 'e': {
                const size_t begin = markedBegin();
                const PickleRef list = listTarget(markTarget(begin));
                addItems(list, stack_.data() + begin, stack_.size() - begin);
                dropToMark(begin);
                break;
            }
            case 's': {
                needValues(3);
                const PickleRef dict = dictTarget(stack_[stack_.size() - 3]);
                addItems(dict, stack_.data() + stack_.size() - 2, 2);
                stack_.resize(stack_.size() - 2);
                break;
            }
            case 'u': {
                const size_t begin = markedBegin();
                const size_t n = stack_.size() - begin;
                if (n % 2 != 0) {
                    fail(Reason::Malformed,
                         "a key without a value (" + std::to_string(n) + " values)");
                }
                const PickleRef dict = dictTarget(markTarget(begin));
                addItems(dict, stack_.data() + begin, n);
                dropToMark(begin);
                break;
            }
            case 0x90: {  // ADDITEMS
                const size_t begin = markedBegin();
                const PickleRef set = markTarget(begin);
                if (doc_.nodes_[set].kind != PickleKind::Set) {
                    fail(Reason::Malformed, "adds items to " + aType(set) + ", not a set");
                }
                addItems(set, stack_.data() + begin, stack_.size() - begin);
                dropToMark(begin);
                break;
            }
            default:
                return false;
        }
        return true;
    }

    // The memo: PUT and GET in their widths, MEMOIZE.
    bool stepMemo() {
        switch (op_) {
            case 'p':
                memoPut(decimalLine("memo index"));
                break;
            case 'q':
                memoPut(little<uint8_t>());
                break;
            case 'r':
                memoPut(little<uint32_t>());
                break;
            case 0x94:
                memoPut(memoCount_);
                break;
            case 'g':
                memoGet(decimalLine("memo index"));
                break;
            case 'h':
                memoGet(little<uint8_t>());
                break;
            case 'j':
                memoGet(little<uint32_t>());
                break;
            default:
                return false;
        }
        return true;
    }

    // Globals: refused unless the policy allows them, then inert markers.
    bool stepGlobal() {
        switch (op_) {
            case 'c': {  // GLOBAL "module\nname\n"
                const std::string_view module = line();
                const std::string_view name = line();
                push(global(module, name, offsetIn(module), offsetIn(name)));
                break;
            }
            case 0x93: {  // STACK_GLOBAL
                needValues(2);
                const PickleRef nameRef = stack_[stack_.size() - 1];
                const PickleRef moduleRef = stack_[stack_.size() - 2];
                if (doc_.nodes_[nameRef].kind != PickleKind::String ||
                    doc_.nodes_[moduleRef].kind != PickleKind::String) {
                    fail(Reason::Malformed, "module and name are " + aType(moduleRef) + " and " +
                                                aType(nameRef) + ", not two str");
                }
                const PickleRef ref =
                    global(doc_.text(moduleRef), doc_.text(nameRef), doc_.nodes_[moduleRef].value,
                           doc_.nodes_[nameRef].value);
                stack_.resize(stack_.size() - 2);
                push(ref);
                break;
            }
            case 'i': {  // INST "module\nname\n", arguments since the MARK
                const std::string_view module = line();
                const std::string_view name = line();
                const PickleRef callable = global(module, name, offsetIn(module), offsetIn(name));
                collectToMark(PickleKind::Tuple);
                const PickleRef args = pop();
                push(call(PickleCall::How::Inst, callable, args));
                break;
            }
            case 'o': {  // OBJ: class and arguments since the MARK
                const size_t begin = markedBegin();
                if (stack_.size() == begin) {
                    failMalformed(PickleError::Fault::Underflow,
                                  "stack underflow: no class after the MARK");
                }
                const PickleRef callable = stack_[begin];
                if (doc_.nodes_[callable].kind != PickleKind::Global) {
                    const std::string asked = aType(callable);
                    fail(Reason::Refused, "asks to call " + asked, asked);
                }
                const PickleRef args = newContainer(PickleKind::Tuple);
                addItems(args, stack_.data() + begin + 1, stack_.size() - begin - 1);
                dropToMark(begin);
                push(call(PickleCall::How::Inst, callable, args));
                break;
            }
            default:
                return false;
        }
        return true;
    }

    // Calls of an allowed global, kept as records; BUILD sets their state.
    bool stepCall() {
        switch (op_) {
            case 'R': {
                needValues(2);
                const PickleRef args = stack_[stack_.size() - 1];
                const PickleRef callable = stack_[stack_.size() - 2];
                const PickleRef result = call(PickleCall::How::Reduce, callable, args);
                stack_.resize(stack_.size() - 2);
                push(result);
                break;
            }
            case 0x81: {  // NEWOBJ
                needValues(2);
                const PickleRef args = stack_[stack_.size() - 1];
                const PickleRef callable = stack_[stack_.size() - 2];
                const PickleRef result = call(PickleCall::How::NewObj, callable, args);
                stack_.resize(stack_.size() - 2);
                push(result);
                break;
            }
            case 0x92: {  // NEWOBJ_EX
                needValues(3);
                const PickleRef kwargs = stack_[stack_.size() - 1];
                const PickleRef args = stack_[stack_.size() - 2];
                const PickleRef callable = stack_[stack_.size() - 3];
                const PickleRef result = call(PickleCall::How::NewObjEx, callable, args, kwargs);
                stack_.resize(stack_.size() - 3);
                push(result);
                break;
            }
            case 'b': {  // BUILD: state for the object below it
                needValues(2);
                const PickleRef state = stack_[stack_.size() - 1];
                const PickleRef target = stack_[stack_.size() - 2];
                if (doc_.nodes_[target].kind != PickleKind::Call) {
                    const std::string asked = "set the state of " + aType(target);
                    fail(Reason::Refused, "asks to " + asked, asked);
                }
                doc_.calls_[doc_.nodes_[target].value].state = state;
                stack_.pop_back();
                break;
            }
            default:
                return false;
        }
        return true;
    }

    // What only the writer's program could resolve: persistent ids,
    // copyreg's extension codes, out-of-band buffers.
    bool stepOutside() {
        switch (op_) {
            case 'P': {
                const std::string_view id = line();
                const PickleRef text =
                    newNode(PickleKind::String, offsetIn(id), static_cast<uint32_t>(id.size()));
                push(persistent(text));
                break;
            }
            case 'Q':
                push(persistent(pop()));
                break;
            case 0x82:
            case 0x83:
            case 0x84: {
                const uint64_t code = op_ == 0x82   ? little<uint8_t>()
                                      : op_ == 0x83 ? little<uint16_t>()
                                                    : little<int32_t>();
                const std::string asked = "extension code " + std::to_string(code);
                fail(Reason::Refused, "asks for the object registered as " + asked + " (copyreg)",
                     asked);
            }
            case 0x97:
                fail(Reason::Refused, "asks for an out-of-band buffer (protocol 5)",
                     "an out-of-band buffer");
            case 0x98:  // READONLY_BUFFER: marks the buffer on top read-only
                top();
                break;
            default:
                return false;
        }
        return true;
    }
    // The groups in the order a snapshot's opcodes are most often in them
    // (memo gets are nearly half, then integers, then dicts).
    void step() {
        if (!stepMemo() && !stepNumber() && !stepContainer() && !stepAdd() && !stepText() &&
            !stepStack() && !stepGlobal() && !stepCall() && !stepOutside()) {
            fail(Reason::Malformed, "not a pickle opcode");
        }
    }

    // INT and LONG in text: "00" and "01" are protocol 0's False and True.
    PickleRef textInteger() {
        std::string_view text = line();
        if (op_ == 'I' && text == "00") {
            return kFalse;
        }
        if (op_ == 'I' && text == "01") {
            return kTrue;
        }
        if (op_ == 'L' && !text.empty() && text.back() == 'L') {
            text.remove_suffix(1);
        }
        if (!text.empty() && text.front() == '+') {
            text.remove_prefix(1);
        }
        int64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size()) {
            fail(Reason::Malformed, "'" + printable(text) + "' is not a 64-bit integer");
        }
        return newInt(value);
    }

    // Every container's entries side by side: one that got them in one run
    // (most do) keeps them where they are; the others are gathered at the end.
    void finalize() {
        std::vector<PickleRef>& items = staging_;
        size_t gathered = 0;
        for (const PickleDocument::Node& node : doc_.nodes_) {
            if (isContainer(node.kind) && node.value != kNoBuilder &&
                builders_[node.value].first != builders_[node.value].last) {
                gathered += node.count;
            }
        }
        if (gathered > limits_.maxItems - items.size()) {
            fail(Reason::TooLarge, "containers hold more than " + std::to_string(limits_.maxItems) +
                                       " entries together (the reader's limit)");
        }
        items.reserve(items.size() + gathered);
        for (PickleDocument::Node& node : doc_.nodes_) {
            if (!isContainer(node.kind)) {
                continue;
            }
            if (node.value == kNoBuilder) {
                node.value = 0;
                continue;
            }
            const Builder& builder = builders_[node.value];
            if (builder.first == builder.last) {
                node.value = chunks_[builder.first].begin;
                continue;
            }
            node.value = items.size();
            for (uint32_t chunk = builder.first; chunk != kNoChunk; chunk = chunks_[chunk].next) {
                const Chunk c = chunks_[chunk];
                for (uint32_t i = c.begin; i < c.begin + c.size; ++i) {
                    items.push_back(items[i]);  // no reallocation: reserved above
                }
            }
        }
        doc_.items_ = std::move(items);
        std::vector<Chunk>().swap(chunks_);
        std::vector<Builder>().swap(builders_);
    }

    void checkPersistentIds() {
        for (const auto& [id, offset] : persistentIds_) {
            try {
                policy_.checkPersistentId(doc_, id);
            } catch (const PickleError&) {
                throw;
            } catch (const std::exception& error) {
                throw PickleError(Reason::Refused, offset, opcodeLabel(data_[offset]), error.what(),
                                  "a persistent object");
            }
        }
    }

    struct Builder {
        uint32_t first;
        uint32_t last;
    };
    struct Chunk {
        uint32_t begin;
        uint32_t size;
        uint32_t next;
    };

    PickleDocument& doc_;
    const PicklePolicy& policy_;
    PickleLimits limits_;
    const PickleProgress& progress_;
    const unsigned char* data_;
    uint64_t size_;
    uint64_t pos_ = 0;
    uint64_t opStart_ = 0;
    uint8_t op_ = 0;
    std::vector<PickleRef> stack_;
    std::vector<size_t> marks_;
    std::vector<PickleRef> denseMemo_;
    std::unordered_map<uint64_t, PickleRef> sparseMemo_;
    uint64_t memoCount_ = 0;
    uint64_t nextReport_ = 0;
    std::vector<PickleRef> staging_;
    std::vector<Chunk> chunks_;
    std::vector<Builder> builders_;
    std::vector<std::pair<PickleRef, uint64_t>> persistentIds_;
};

void PickleDocument::noSuchValue(PickleRef ref) {
    throw std::invalid_argument("pickle value " + std::to_string(ref) + " does not exist");
}

void PickleDocument::wrongKind(PickleRef ref, const char* expected) const {
    throw std::invalid_argument(std::string("expected ") + expected + ", got " + typeName(ref));
}

const PickleDocument::Node& PickleDocument::expect(PickleRef ref, PickleKind kind,
                                                   const char* what) const {
    const Node& n = node(ref);
    if (n.kind != kind) {
        throw std::invalid_argument(std::string("expected ") + what + ", got " + typeName(ref));
    }
    return n;
}

bool PickleDocument::boolean(PickleRef ref) const {
    return expect(ref, PickleKind::Bool, "a bool").value != 0;
}

int64_t PickleDocument::integer(PickleRef ref) const {
    return static_cast<int64_t>(expect(ref, PickleKind::Int, "an int").value);
}

double PickleDocument::real(PickleRef ref) const {
    return std::bit_cast<double>(expect(ref, PickleKind::Float, "a float").value);
}

std::string_view PickleDocument::globalModule(PickleRef ref) const {
    const GlobalName& g = globals_[expect(ref, PickleKind::Global, "a global").value];
    return std::string_view(bytes_.data() + g.moduleOffset, g.moduleLength);
}

std::string_view PickleDocument::globalName(PickleRef ref) const {
    const GlobalName& g = globals_[expect(ref, PickleKind::Global, "a global").value];
    return std::string_view(bytes_.data() + g.nameOffset, g.nameLength);
}

const PickleCall& PickleDocument::call(PickleRef ref) const {
    return calls_[expect(ref, PickleKind::Call, "a call").value];
}

PickleRef PickleDocument::persistentId(PickleRef ref) const {
    return static_cast<PickleRef>(expect(ref, PickleKind::PersistentId, "a persistent id").value);
}

std::optional<uint64_t> PickleDocument::toUInt64(PickleRef ref) const {
    const Node& n = node(ref);
    if (n.kind == PickleKind::Int) {
        const auto value = static_cast<int64_t>(n.value);
        return value >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(value)) : std::nullopt;
    }
    if (n.kind != PickleKind::BigInt) {
        return std::nullopt;
    }

    // 2^63 .. 2^64-1 take nine bytes, the ninth zero (the sign).
    const auto* bytes = reinterpret_cast<const unsigned char*>(bytes_.data() + n.value);
    for (uint64_t i = 8; i < n.count; ++i) {
        if (bytes[i] != 0) {
            return std::nullopt;
        }
    }
    uint64_t value = 0;
    for (uint64_t i = std::min<uint64_t>(n.count, 8); i-- > 0;) {
        value = (value << 8) | bytes[i];
    }
    return value;
}

PickleRef PickleDocument::find(PickleRef dict, std::string_view key) const {
    const Node& n = node(dict);
    if (n.kind != PickleKind::Dict) {
        return kNoPickleRef;
    }
    const std::span<const PickleRef> entries = items(dict);
    for (size_t i = entries.size(); i >= 2; i -= 2) {
        const Node& k = nodes_[entries[i - 2]];
        if (k.kind == PickleKind::String && k.count == key.size() &&
            std::memcmp(bytes_.data() + k.value, key.data(), key.size()) == 0) {
            return entries[i - 1];
        }
    }
    return kNoPickleRef;
}

std::string PickleDocument::typeName(PickleRef ref) const {
    const Node& n = node(ref);
    switch (n.kind) {
        case PickleKind::None:
            return "None";
        case PickleKind::Bool:
            return "bool";
        case PickleKind::Int:
        case PickleKind::BigInt:
            return "int";
        case PickleKind::Float:
            return "float";
        case PickleKind::String:
            return "str";
        case PickleKind::Bytes:
            return "bytes";
        case PickleKind::ByteArray:
            return "bytearray";
        case PickleKind::Tuple:
            return "tuple";
        case PickleKind::List:
            return "list";
        case PickleKind::Dict:
            return "dict";
        case PickleKind::Set:
            return "set";
        case PickleKind::FrozenSet:
            return "frozenset";
        case PickleKind::Global:
            return "global " + printable(globalModule(ref)) + "." + printable(globalName(ref));
        case PickleKind::Call: {
            const PickleRef callable = calls_[n.value].callable;
            return printable(globalModule(callable)) + "." + printable(globalName(callable)) +
                   "(...)";
        }
        case PickleKind::PersistentId:
            return "persistent id";
    }
    return "value";
}

PickleDocument readPickle(std::string bytes, const PicklePolicy& policy, const PickleLimits& limits,
                          const PickleProgress& progress) {
    PickleDocument doc;
    doc.bytes_ = std::move(bytes);
    PickleMachine machine(doc, policy, limits, progress);
    machine.run();
    return doc;
}

}  // namespace stepscope
