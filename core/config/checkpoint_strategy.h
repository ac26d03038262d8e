#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace stepscope {

// Which blocks' activations are dropped after the forward and recomputed in
// backward (activation checkpointing). Plain data, no torch: the run config,
// the cost model and the memory estimate read it as the model does.
struct CheckpointStrategy {
    enum class Kind { Off, Groups, Nested };
    Kind kind = Kind::Off;
    int64_t groupSize = 0;  // Groups: blocks per checkpointed group

    bool operator==(const CheckpointStrategy&) const = default;
};

// "off", "K" (a whole number ≥ 1: blocks per group) or "nested".
std::optional<CheckpointStrategy> parseCheckpointStrategy(const std::string& text);
std::string toString(const CheckpointStrategy& strategy);
// What parseCheckpointStrategy allows, in words for messages and help.
constexpr const char* kCheckpointStrategyChoices = "off, K (blocks per group, 1 or more), nested";

// Nested checkpointing splits the blocks [first, end) here: the left half is
// [first, split), the right half [split, end). The model and the cost model
// both use it so that the FLOPs counted are the FLOPs run.
int64_t nestedSplit(int64_t first, int64_t end);

// How many block forwards one step runs beyond the plain forward's one per
// block: each checkpointed group recomputes its blocks once in backward;
// nested recomputes a block once for every checkpointed half it sits in.
int64_t recomputedBlockForwards(const CheckpointStrategy& strategy, int64_t layers);

}  // namespace stepscope
