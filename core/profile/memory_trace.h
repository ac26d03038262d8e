#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profile/trace_range.h"  // phaseName

namespace stepscope {

// What each byte is, decided from facts the run records (see MemoryTracker).
enum class MemoryCategory : uint8_t {
    Parameters,
    Gradients,
    OptimizerState,
    Activations,  // forward allocations still alive when backward starts
    Temporaries,  // freed within the phase that allocated them
    Inputs,
    Other,
    Recomputed  // made while a checkpointed forward runs again in backward
};
constexpr size_t kMemoryCategories = 8;
const char* toString(MemoryCategory category);  // "parameters", "optimizer_state", …
using CategoryBytes = std::array<int64_t, kMemoryCategories>;

// Every allocation and free of a run on one device, in order, as columns
// (a million events stay compact). Phases: 0 setup, 1 forward, 2 backward,
// 3 optimizer.
struct MemoryTrace {
    std::string device;              // "cpu", "cuda:0"
    double clockOriginUs = 0;        // time zero on the tracers' clock
    std::vector<std::string> paths;  // module paths and autograd nodes, by index
    std::vector<double> timeUs;      // from the tracker's start
    std::vector<uint64_t> address;
    std::vector<int64_t> bytes;  // + allocation, − free
    std::vector<uint8_t> category;
    std::vector<uint8_t> phase;
    std::vector<int32_t> step;  // -1 before the first step
    std::vector<int32_t> path;  // index into paths, -1 when none
    // The operator that allocated: the innermost ATen op in forward and the
    // optimizer, the autograd node in backward. Index into paths, -1 when
    // none; empty in files written before it was recorded.
    std::vector<int32_t> op;
    // The allocator's totals after the event: bytes allocated (our running
    // sum where the allocator reports none, as on the CPU) and reserved
    // (CUDA's caching allocator; 0 elsewhere).
    std::vector<int64_t> allocated;
    std::vector<int64_t> reserved;
    // The phase ranges, so views can band the time axis: (phase, step, start, end).
    struct PhaseRange {
        uint8_t phase;
        int32_t step;
        double startUs;
        double endUs;
    };
    std::vector<PhaseRange> phases;
    // On CUDA, the caching allocator's own view of the run.
    std::optional<int64_t> devicePeakAllocated;
    std::optional<int64_t> devicePeakReserved;

    size_t size() const { return timeUs.size(); }
    bool empty() const { return timeUs.empty(); }
    // A module path, autograd node or operator by its id (path[i], op[i]);
    // empty for -1 or an id past the names.
    const std::string& name(int32_t id) const;
    // Room for `events` in every per-event column: a trace built event by
    // event otherwise copies and faults in each column twice over.
    void reserve(size_t events);
};

// An allocation paired with its free. Its module path (or autograd node)
// and operator are ids into its trace's names, as the trace keeps them
// (MemoryTrace::name spells them): the memory view holds millions of these,
// and a copy of each name made them 112 bytes, not 48.
struct MemoryAllocation {
    uint64_t address = 0;
    int64_t bytes = 0;
    double startUs = 0;
    double endUs = -1;  // -1: still alive when the trace ended
    int32_t path = -1;  // -1: none
    int32_t op = -1;    // -1: unknown
    int32_t step = -1;
    uint8_t phase = 0;
    MemoryCategory category = MemoryCategory::Other;
};

struct MemorySummary {
    int64_t peakBytes = 0;
    double peakTimeUs = 0;
    int peakPhase = 0;
    int peakStep = -1;
    CategoryBytes atPeak{};                // what was alive at the peak
    CategoryBytes maxByCategory{};         // each category's own maximum over the run
    std::array<int64_t, 4> peakByPhase{};  // setup, forward, backward, optimizer
    std::vector<MemoryAllocation> top;     // largest allocations, largest first
};

// Pairs each allocation with its free.
std::vector<MemoryAllocation> memoryAllocations(const MemoryTrace& trace);
MemorySummary summarizeMemory(const MemoryTrace& trace, size_t topCount = 20);
// Active bytes per category after each event.
std::vector<CategoryBytes> activeBytesByCategory(const MemoryTrace& trace);

}  // namespace stepscope
