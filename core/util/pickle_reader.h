#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope {

// A reader of Python pickles (protocols 2 to 5, and the protocol 0/1 opcodes
// they may still hold) that runs nothing. Python's pickle.load imports and
// calls whatever a file names; this reader refuses every opcode that would
// (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, PERSID,
// BINPERSID, EXT1/2/4) with a message naming what the file asked for, unless
// the caller's PicklePolicy allows that global. Even then nothing is called:
// the call becomes an inert record (PickleKind::Call) that the caller
// interprets. It is the one pickle machine of StepScope: the memory-snapshot
// reader runs it with no policy (a snapshot is plain data), the torch.save
// reader with a policy that names every global inert and checks that each
// persistent id is a storage, then rebuilds tensors from the records.
//
// Values live in one arena and refer to each other by index (PickleRef), so
// a value nested 200,000 deep, or one that holds itself through the memo,
// is freed in one go and read without recursion. A caller that walks values
// should do so by schema (a known depth) or with its own stack: values form
// a graph, and a cycle is legal pickle.
using PickleRef = uint32_t;
inline constexpr PickleRef kNoPickleRef = UINT32_MAX;

enum class PickleKind : uint8_t {
    None,
    Bool,
    Int,     // fits int64
    BigInt,  // wider: text() is its little-endian two's complement bytes
    Float,
    String,  // str (UTF-8 as in the file, not checked) and protocol 2's BINSTRING
    Bytes,
    ByteArray,
    Tuple,
    List,
    Dict,  // items(): key, value, key, value, ... in insertion order
    Set,
    FrozenSet,
    Global,        // a (module, name) the policy allowed; never imported
    Call,          // an allowed global applied to arguments; never called
    PersistentId,  // BINPERSID / PERSID that the policy's hook accepted
};

class PickleDocument;

// Told, about every MiB of a pickle read, the bytes read so far and in all;
// returns false to stop the read (a user's cancel).
using PickleProgress = std::function<bool(uint64_t read, uint64_t total)>;

// What a pickle may name. Without a policy every global and persistent id
// is refused.
struct PicklePolicy {
    // True for a (module, name) the caller will interpret itself.
    std::function<bool(std::string_view module, std::string_view name)> allowGlobal;
    // Called once parsing is done with each persistent id (the value
    // BINPERSID popped, or PERSID's text as a String); it throws to refuse
    // one, and its message becomes the detail of a Refused PickleError at
    // that BINPERSID or PERSID. Without it, PERSID and BINPERSID are refused.
    std::function<void(const PickleDocument&, PickleRef id)> checkPersistentId;
    // Python's POP with nothing above the last MARK drops that MARK (protocol
    // 0 pops a recursive tuple's items and MARK so). False makes it a stack
    // underflow, for formats whose writers use POP_MARK (protocol 1 and later).
    bool popMayDropMark = true;

    // A policy that allows exactly these (module, name) pairs.
    static PicklePolicy allowing(std::vector<std::pair<std::string, std::string>> globals);
};

// Bounds on what one pickle may make, so a small hostile file cannot ask
// for gigabytes. Each has its own message.
struct PickleLimits {
    size_t maxStackDepth = size_t{1} << 20;       // values and marks on the stack at once
    size_t maxValues = size_t{128} << 20;         // values in the arena (16 bytes each)
    size_t maxItems = size_t{512} << 20;          // entries of all containers together
    uint64_t maxStringBytes = uint64_t{1} << 30;  // one str, bytes or int
};

class PickleError : public std::runtime_error {
public:
    enum class Reason : uint8_t {
        Malformed,  // not a pickle this reader can follow (underflow, no MARK, ...)
        Truncated,  // ends before an opcode's bytes, a frame or STOP
        Refused,    // asks for code to run, or for something outside the data
        TooLarge,   // beyond a PickleLimits bound
        Stopped,    // the caller's progress callback asked to stop
    };
    // Which of Malformed's classic faults, for a reader that words its own
    // messages (Python says "unpickling stack underflow", "could not find
    // MARK", "Memo value not found"); Other for the rest and other reasons.
    enum class Fault : uint8_t {
        Other,
        Underflow,  // an opcode needs more values than the stack (above the last MARK) holds
        NoMark,     // an opcode takes the values since the last MARK, and there is none
        NoMemo,     // GET of a memo entry never stored; asked is its index
    };
    PickleError(Reason reason, uint64_t offset, std::string opcode, std::string detail,
                std::string asked = {});

    Reason reason;
    uint64_t offset;     // of the opcode's first byte
    std::string opcode;  // "GLOBAL", "BINUNICODE", or "0x.." for an unknown byte
    std::string detail;  // what is wrong, without the offset
    std::string asked;   // Refused: what the file asked for ("os.system"); NoMemo: the index
    Fault fault = Fault::Other;
};

struct PickleCall {
    enum class How : uint8_t { Reduce, NewObj, NewObjEx, Inst };
    How how = How::Reduce;
    PickleRef callable = kNoPickleRef;   // a Global
    PickleRef args = kNoPickleRef;       // a Tuple
    PickleRef kwargs = kNoPickleRef;     // NEWOBJ_EX's Dict
    PickleRef state = kNoPickleRef;      // BUILD's argument (the last one)
    PickleRef listItems = kNoPickleRef;  // a List of what APPEND(S) added
    PickleRef dictItems = kNoPickleRef;  // a Dict of what SETITEM(S) added
};

class PickleDocument {
public:
    PickleRef root() const { return root_; }
    int protocol() const { return protocol_; }           // 0 when the pickle has no PROTO
    uint64_t stopOffset() const { return stopOffset_; }  // bytes after it are ignored
    size_t valueCount() const { return nodes_.size(); }

    PickleKind kind(PickleRef ref) const { return node(ref).kind; }
    // The accessors below throw std::invalid_argument for a value of another kind.
    bool boolean(PickleRef ref) const;
    int64_t integer(PickleRef ref) const;
    double real(PickleRef ref) const;
    std::string_view text(PickleRef ref) const;             // String, Bytes, ByteArray, BigInt
    std::span<const PickleRef> items(PickleRef ref) const;  // containers
    std::string_view globalModule(PickleRef ref) const;
    std::string_view globalName(PickleRef ref) const;
    const PickleCall& call(PickleRef ref) const;
    PickleRef persistentId(PickleRef ref) const;

    // An Int, or a BigInt whose value fits; nullopt otherwise (any kind).
    std::optional<int64_t> toInt64(PickleRef ref) const {
        const Node& n = node(ref);  // a BigInt never fits: the reader keeps those that do as Int
        return n.kind == PickleKind::Int ? std::optional(static_cast<int64_t>(n.value))
                                         : std::nullopt;
    }
    std::optional<uint64_t> toUInt64(PickleRef ref) const;
    // The value of the last String key equal to `key` in a Dict, else kNoPickleRef.
    PickleRef find(PickleRef dict, std::string_view key) const;
    // "int", "str", "list", "global os.system", "collections.OrderedDict(...)".
    std::string typeName(PickleRef ref) const;

private:
    friend class PickleMachine;
    friend PickleDocument readPickle(std::string, const PicklePolicy&, const PickleLimits&,
                                     const PickleProgress&);
    struct Node {
        uint64_t value = 0;  // int bits, double bits, byte offset, or a side-table index
        uint32_t count = 0;  // length of a string, entries of a container
        PickleKind kind = PickleKind::None;
    };
    struct GlobalName {
        uint64_t moduleOffset;
        uint32_t moduleLength;
        uint64_t nameOffset;
        uint32_t nameLength;
    };
    // Inline, with what throws kept out of line: a snapshot's reader asks
    // for tens of millions of values.
    const Node& node(PickleRef ref) const {
        if (ref >= nodes_.size()) [[unlikely]] {
            noSuchValue(ref);
        }
        return nodes_[ref];
    }
    [[noreturn]] static void noSuchValue(PickleRef ref);
    [[noreturn]] void wrongKind(PickleRef ref, const char* expected) const;
    const Node& expect(PickleRef ref, PickleKind kind, const char* what) const;

    std::string bytes_;  // the pickle itself; strings are views into it
    std::vector<Node> nodes_;
    std::vector<PickleRef> items_;
    std::vector<GlobalName> globals_;
    std::vector<PickleCall> calls_;
    PickleRef root_ = kNoPickleRef;
    int protocol_ = 0;
    uint64_t stopOffset_ = 0;
};

inline std::string_view PickleDocument::text(PickleRef ref) const {
    const Node& n = node(ref);
    if (n.kind != PickleKind::String && n.kind != PickleKind::Bytes &&
        n.kind != PickleKind::ByteArray && n.kind != PickleKind::BigInt) [[unlikely]] {
        wrongKind(ref, "a str or bytes");
    }
    return std::string_view(bytes_.data() + n.value, n.count);
}

inline std::span<const PickleRef> PickleDocument::items(PickleRef ref) const {
    const Node& n = node(ref);
    if (n.kind != PickleKind::Tuple && n.kind != PickleKind::List && n.kind != PickleKind::Dict &&
        n.kind != PickleKind::Set && n.kind != PickleKind::FrozenSet) [[unlikely]] {
        wrongKind(ref, "a container");
    }
    if (n.count == 0) {
        return {};
    }
    return std::span<const PickleRef>(items_.data() + n.value, n.count);
}

// Reads one pickle from `bytes` (which the document keeps). Throws
// PickleError naming the byte offset and opcode of what went wrong.
PickleDocument readPickle(std::string bytes, const PicklePolicy& policy = {},
                          const PickleLimits& limits = {}, const PickleProgress& progress = {});

}  // namespace stepscope
