#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profile/memory_trace.h"

namespace stepscope::ui {

// How the memory chart stacks what is alive: by category then in the order
// allocations were made (seven areas), or each allocation its own band in
// the order it was made, as memory_viz draws them; there allocations under a
// size floor are left out of the stack and summed in one band on top.
enum class StackOrder { ByCategory, ByAllocation };

// One allocation's place in the stack over its lifetime: from each vertex's
// time on, its bottom is `bottom` bytes (until the next vertex or the end).
struct BandVertex {
    double timeUs;
    int64_t bottom;
};

// The per-allocation chart: which allocations get a band (at least the
// floor, and no more than a cap: the floor rises until they fit) and each
// band's vertices.
struct AllocationLayout {
    int64_t floorBytes = 0;  // what was asked for, raised to fit the cap
    std::vector<uint32_t> shown;
    std::vector<size_t> firstVertex;  // per shown band, into vertices
    std::vector<BandVertex> vertices;
    size_t hiddenCount = 0;
};

// The band of allocations under the floor, summed on top of the drawn ones,
// decimated for a time range (per bucket the sample with the highest total).
struct SmallerBand {
    std::vector<double> keysUs;
    std::vector<int64_t> shownBytes;  // its bottom: bytes in drawn bands
    std::vector<int64_t> totalBytes;  // its top: every allocation alive
};

// The queries the memory view answers, indexed so that a million events
// answer in well under a millisecond: which allocations are alive at a time
// (from checkpoints of the alive set, spaced so that their total size stays
// linear in the events), which one covers a height, the band one allocation
// draws, the highest total in a time range (block maxima), and sites.
class MemoryIndex {
public:
    MemoryIndex() = default;
    explicit MemoryIndex(const MemoryTrace& trace);

    const MemoryTrace* trace() const { return trace_; }
    // The trace this was built from, moved elsewhere with its run (read off
    // the UI thread, then moved into its document): the index follows it.
    void followMovedTrace(const MemoryTrace& trace) { trace_ = &trace; }
    const std::vector<MemoryAllocation>& allocations() const { return allocations_; }
    size_t size() const { return allocations_.size(); }
    double startUs() const;
    double endUs() const;
    double endOf(size_t allocation) const;  // its free, or the end of the trace
    // An allocation's module path (or autograd node) and operator, spelled.
    const std::string& path(size_t allocation) const {
        return trace_->name(allocations_[allocation].path);
    }
    const std::string& op(size_t allocation) const {
        return trace_->name(allocations_[allocation].op);
    }

    // Allocations alive at `timeUs` (every event at or before it applied),
    // in the order they were made.
    std::vector<uint32_t> aliveAt(double timeUs) const;
    // The stack at that time in `order`; with ByAllocation, only those of at
    // least `floorBytes`. Each with its bottom.
    struct Placed {
        uint32_t allocation;
        int64_t bottom;
    };
    std::vector<Placed> stackAt(double timeUs, StackOrder order, int64_t floorBytes) const;
    // The allocation covering `bytes` at `timeUs`, or -1.
    int64_t allocationAt(double timeUs, double bytes, StackOrder order, int64_t floorBytes) const;
    // The band of one allocation over its lifetime; empty when it is not in
    // the stack (under the floor).
    std::vector<BandVertex> bandOf(size_t allocation, StackOrder order, int64_t floorBytes) const;
    // The same where it shows, between two times on a chart `columns` pixels
    // wide. Where a pixel spans more than two blocks of events (a long-lived
    // allocation at a wide zoom), by category it is sampled at each block's
    // start from the blocks' sums, so the outline under the mouse costs the
    // pixels and not the allocation's lifetime; its bottom there is exact.
    std::vector<BandVertex> bandOf(size_t allocation, StackOrder order, int64_t floorBytes,
                                   double fromUs, double toUs, size_t columns) const;

    // The highest total of active bytes (the running sum of the trace, as
    // the category chart stacks it) between two times.
    int64_t maxTotal(double fromUs, double toUs) const;

    // Allocations alive at some time within [fromUs, toUs].
    std::vector<uint32_t> aliveBetween(double fromUs, double toUs) const;

    AllocationLayout layout(int64_t floorBytes, size_t maxBands, size_t maxVertices) const;
    SmallerBand smallerBand(double fromUs, double toUs, int64_t floorBytes, size_t maxPoints) const;

private:
    void addCheckpoints();                 // once the allocations are paired
    size_t position(double timeUs) const;  // events at or before the time
    std::vector<uint32_t> aliveAtPosition(size_t position) const;
    // Calls fn(allocation) for each alive at the position, in the order made.
    template <typename Fn>
    void forEachAlive(size_t position, Fn fn) const;
    bool below(uint32_t a, uint32_t b, StackOrder order) const;  // a stacks under b

    static constexpr size_t kBlock = 256;  // events per block maximum

    const MemoryTrace* trace_ = nullptr;
    std::vector<MemoryAllocation> allocations_;  // in the order they were made
    std::vector<uint32_t> startEvent_;
    std::vector<uint32_t> endEvent_;          // UINT32_MAX: alive at the end
    std::vector<int32_t> allocationOfEvent_;  // -1: a free of something made before tracing
    std::vector<int64_t> total_;              // running sum after each event
    std::vector<int64_t> blockMax_;
    // Per block, at its first event: the bytes alive by category (of the
    // allocations made in the trace), before that event.
    std::vector<CategoryBytes> blockAlive_;
    std::vector<size_t> checkpoint_;  // event positions
    std::vector<size_t> checkpointStart_;
    std::vector<uint32_t> checkpointAlive_;  // concatenated, each in allocation order
};

// Allocations that come from the same place: the same module path (or
// autograd node) and operator, of one category and phase, in any step. A
// training run makes the same logits buffer every step; that is one row.
struct AllocationSite {
    std::string path;
    std::string op;
    MemoryCategory category = MemoryCategory::Other;
    int phase = 0;
    int64_t largest = 0;
    int64_t totalBytes = 0;
    size_t sizes = 0;  // distinct sizes among them
    double meanLifetimeUs = 0;
    std::vector<int> steps;  // distinct, ascending
    std::vector<uint32_t> allocations;
};
// Sites of the given allocations, largest first (then by total bytes).
std::vector<AllocationSite> groupSites(const MemoryIndex& index,
                                       const std::vector<uint32_t>& allocations);
// "0–19", "3, 5, 7–9", "setup" for -1.
std::string formatSteps(const std::vector<int>& steps);

// A module path with layer numbers folded ("layers.3.attn.q_proj" →
// "layers.*.attn.q_proj"), so that colouring by module gives each kind of
// module one colour across layers.
std::string moduleKind(const std::string& path);

}  // namespace stepscope::ui
