#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "results/run_result.h"

namespace stepscope {

// What one operation made that a block keeps for backward.
struct SavedByOp {
    std::string op;  // the ATen operator that allocated it ("aten::mm")
    int64_t bytes = 0;
    double share = 0;  // of the block's saved bytes
};

// What one Transformer block keeps for backward, measured by the memory
// tracker: the allocations the block's forward made in one step that were
// still alive when that step's backward began (the tracker's activations),
// each a distinct storage. A block's input is counted with the block that
// made it (the previous block, or none for the first), its output with itself.
struct BlockSaved {
    std::string module;  // "layers.3"
    int64_t bytes = 0;
    int64_t tensors = 0;
    std::vector<SavedByOp> top;  // the largest producing operations, largest first
    // The gradients backward makes for the block's parameters (fp32, as the
    // parameters), from their shapes.
    int64_t gradientBytes = 0;
};

struct SavedForBackward {
    int step = -1;                   // the step measured: the run's last
    std::vector<BlockSaved> blocks;  // in block order
};

// From a run made with --memory and a backward (train-step or
// forward-backward). Throws std::invalid_argument saying what is missing.
SavedForBackward savedForBackward(const RunResult& run, size_t topCount = 5);
// The same from the run's allocations already paired (memoryAllocations of
// its trace, as the memory index holds them): a million events pair in a
// tenth of a second, so a caller that has them does not pair them again.
SavedForBackward savedForBackward(const RunResult& run,
                                  std::span<const MemoryAllocation> allocations,
                                  size_t topCount = 5);

// The block (3 for "layers.3") whose saved figure for `step` counts this
// allocation of `trace`, or -1 when it counts in none.
int savedBlockOf(const MemoryAllocation& allocation, const MemoryTrace& trace, int step);

// The allocations behind one block's figure (`module` as "layers.3"), in
// the order they were made: what a view lists when a block is picked.
std::vector<MemoryAllocation> savedAllocations(const RunResult& run, int step,
                                               const std::string& module);

// {"step": N, "saved_for_backward": [{"module", "bytes", "tensors", "top":
// [{"op", "bytes", "share"}], "gradients"}]}
nlohmann::json savedForBackwardJson(const SavedForBackward& saved);
std::string formatSavedForBackward(const SavedForBackward& saved);

}  // namespace stepscope
