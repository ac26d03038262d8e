#pragma once

// A PyTorch memory snapshot in typed values, and what bounds and reports its
// reading; memory_snapshot.h reads one.

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/pickle_reader.h"

namespace stepscope {

// A PyTorch CUDA memory snapshot, as torch.cuda.memory._dump_snapshot()
// pickles it (or the same structure as JSON), read into typed values:
// the allocator's segments and blocks at the end, a trace per device of what
// the allocator did (when recording was on), record_function annotations
// and the allocator's settings. Strings, frames and stacks are interned, so
// a million events that share a thousand stacks hold a thousand stacks.

enum class SnapshotAction : uint8_t {
    Alloc,
    FreeRequested,  // free() was called; the block may wait for other streams
    FreeCompleted,  // the block is free for reuse
    Free,           // older snapshots: both at once
    SegmentAlloc,   // cudaMalloc
    SegmentFree,    // cudaFree
    SegmentMap,     // expandable segments: pages mapped in
    SegmentUnmap,
    Oom,
    Snapshot,  // a snapshot was taken here
    Other,     // an action this reader does not know; ignored, as memory_viz does
};
const char* toString(SnapshotAction action);  // the file's spelling: "free_completed"

enum class SnapshotBlockState : uint8_t { ActiveAllocated, ActivePendingFree, Inactive, Other };

inline constexpr uint32_t kNoStack = UINT32_MAX;  // no frames were recorded

struct SnapshotFrame {
    uint32_t filename;  // indices into MemorySnapshot::strings
    uint32_t name;
    int64_t line;
};

// One device's events as columns.
struct SnapshotDeviceTrace {
    std::vector<SnapshotAction> action;
    std::vector<uint64_t> address;  // "addr"; for an oom, "device_free"
    std::vector<int64_t> bytes;     // "size"
    std::vector<int64_t> stream;
    std::vector<double> timeUs;  // the file's time_us; a missing one repeats the one before
    std::vector<uint32_t> stack;
    // The event's own "category" (memory_viz colours by it; StepScope's own
    // exports write one): 1 + index into MemorySnapshot::eventCategories, 0
    // for none. Empty when no event of this device has one.
    std::vector<uint16_t> category;
    size_t missingTimes = 0;  // events without time_us

    size_t size() const { return action.size(); }
    // Room for `events` in every column an event always fills (category is
    // filled only once an event has one).
    void reserve(size_t events);
};

struct SnapshotBlock {
    uint64_t address;  // the segment's address plus the sizes of the blocks before it
    int64_t size;
    int64_t requestedSize;  // "requested_size", else the size
    SnapshotBlockState state;
    uint32_t stack;
};

struct SnapshotSegment {
    int device;
    uint64_t address;
    int64_t totalSize;
    int64_t stream;
    bool large;  // segment_type "large"
    bool expandable;
    uint32_t stack;
    uint32_t firstBlock;  // index into MemorySnapshot::blocks
    uint32_t blockCount;
};

// record_function ranges: a START and an END per range.
struct SnapshotAnnotation {
    int device;  // -1 when the entry names none
    double timeUs;
    bool start;  // stage "START"; false for "END"
    uint32_t name;
};

struct MemorySnapshot {
    std::string source;  // the file it came from, for messages
    std::vector<std::string> strings;
    std::vector<SnapshotFrame> frames;
    std::vector<uint32_t> stackStart;   // stack s is stackFrames[stackStart[s], stackStart[s+1])
    std::vector<uint32_t> stackFrames;  // indices into frames, innermost call first
    std::vector<SnapshotSegment> segments;
    std::vector<SnapshotBlock> blocks;
    std::vector<SnapshotDeviceTrace> deviceTraces;  // by device index
    std::vector<SnapshotAnnotation> annotations;
    // "allocator_settings", each value as text ("max_split_size" → "-1").
    std::vector<std::pair<std::string, std::string>> allocatorSettings;
    std::vector<std::string> eventCategories;

    std::string_view string(uint32_t id) const { return strings[id]; }
    size_t stackCount() const { return stackStart.empty() ? 0 : stackStart.size() - 1; }
    std::span<const uint32_t> stack(uint32_t id) const {
        if (id == kNoStack) {
            return {};
        }
        return std::span<const uint32_t>(stackFrames)
            .subspan(stackStart[id], stackStart[id + 1] - stackStart[id]);
    }
};

// Bounds that come from the world: PyTorch keeps at most max_entries events
// per device (100,000 by default), a host has a few dozen devices, a Python
// stack a few hundred frames (C++ stacks a few thousand).
struct SnapshotLimits {
    size_t maxDevices = 1024;
    size_t maxEvents = 50'000'000;  // all devices together
    size_t maxSegments = 10'000'000;
    size_t maxBlocks = 50'000'000;
    size_t maxStackFrames = 100'000;
    size_t maxAnnotations = 10'000'000;
    uint64_t maxFileBytes = uint64_t{16} << 30;
    PickleLimits pickle;
};

// One message naming the file and, where it applies, the field:
// "x.pickle: device_traces[0][12].size: expected an integer, got a string".
class SnapshotError : public std::runtime_error {
public:
    enum class Kind : uint8_t {
        Unreadable,    // cannot be opened or read
        Refused,       // the pickle asks for code to run
        NotASnapshot,  // a pickle or JSON of something else
        Malformed,     // broken pickle or JSON, or a field of the wrong type
        TooLarge,      // beyond a SnapshotLimits bound
        Stopped,       // the caller's progress callback asked to stop
    };
    SnapshotError(Kind kind, const std::string& message)
        : std::runtime_error(message), kind(kind) {}
    Kind kind;
};

// Told how much of a snapshot is read (0 to 1) as a large one is; returns
// false to stop reading it (SnapshotError, Kind::Stopped).
using SnapshotProgress = std::function<bool(double fraction)>;

}  // namespace stepscope
