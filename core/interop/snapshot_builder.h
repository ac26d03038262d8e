#pragma once

// What the readers of a memory snapshot share as they fill MemorySnapshot:
// the spellings of actions and block states, text made valid UTF-8, and the
// interning of strings, frames and stacks. Internal to interop/.

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "interop/memory_snapshot_types.h"

namespace stepscope {

// "alloc" → Alloc; an action this reader does not know → Other.
SnapshotAction actionOf(std::string_view text);
SnapshotBlockState blockStateOf(std::string_view text);

// An event's action needs an address and a size, unless it is an oom (a
// size), a snapshot or one this reader does not know.
bool eventNeedsAddress(SnapshotAction action);
bool eventNeedsSize(SnapshotAction action);

// One event onto its device's columns. Without a time it takes the one
// before it (memory_viz does) and counts as missing; `category` is 0 for none.
void appendEvent(SnapshotDeviceTrace& trace, SnapshotAction action, uint64_t address, int64_t bytes,
                 int64_t stream, std::optional<double> timeUs, uint32_t stack, uint16_t category);

// An event category's id (1 + its index), added when new; nullopt when that
// would make more than kMaxEventCategories.
inline constexpr size_t kMaxEventCategories = 1000;
std::optional<uint16_t> eventCategoryId(std::vector<std::string>& categories,
                                        std::string_view name);

// Text as valid UTF-8: a pickle's str may hold what no UTF-8 reader takes
// (Python writes lone surrogates with "surrogatepass"); each bad byte becomes
// U+FFFD, so every view and JSON writer downstream can take any name.
std::string utf8(std::string_view text);

// Interned strings, frames and stacks while reading.
class Interner {
public:
    explicit Interner(MemorySnapshot& out);
    Interner(const Interner&) = delete;  // its sets hold `this`
    Interner& operator=(const Interner&) = delete;

    uint32_t string(std::string_view text);
    uint32_t frame(uint32_t filename, uint32_t name, int64_t line);
    // The stack in `candidate`, as an id shared with every equal stack.
    uint32_t stack(const std::vector<uint32_t>& candidate);
    // Moves the strings into the snapshot; the interner is done.
    void finish();

private:
    static constexpr uint32_t kCandidate = UINT32_MAX;
    std::span<const uint32_t> frames(uint32_t id) const;
    struct StackHash {
        const Interner* self;
        size_t operator()(uint32_t id) const;
    };
    struct StackEq {
        const Interner* self;
        bool operator()(uint32_t a, uint32_t b) const;
    };
    struct FrameKey {
        uint32_t filename;
        uint32_t name;
        int64_t line;
        bool operator==(const FrameKey&) const = default;
    };
    struct FrameHash {
        size_t operator()(const FrameKey& k) const {
            return std::hash<uint64_t>()((uint64_t(k.filename) << 32 | k.name) ^
                                         (uint64_t(k.line) * 0x9e3779b97f4a7c15ull));
        }
    };

    MemorySnapshot& out_;
    std::deque<std::string> storage_;  // as valid UTF-8
    std::deque<std::string> keys_;     // as in the file; stable, so the map's views stay valid
    std::unordered_map<std::string_view, uint32_t> strings_;
    std::unordered_map<FrameKey, uint32_t, FrameHash> frames_;
    std::unordered_set<uint32_t, StackHash, StackEq> stacks_;
    const std::vector<uint32_t>* candidate_ = nullptr;
};

}  // namespace stepscope
