#include "config/checkpoint_strategy.h"

#include <charconv>

namespace stepscope {

namespace {

// Extra block forwards of a segment of `blocks` blocks run with nested
// checkpointing, the segment itself not checkpointed: each half is
// checkpointed (recomputed once in backward) and nested inside.
int64_t nestedRecomputations(int64_t blocks) {
    if (blocks <= 1) {
        return 0;
    }
    const int64_t left = nestedSplit(0, blocks);
    const int64_t right = blocks - left;
    return left + nestedRecomputations(left) + right + nestedRecomputations(right);
}

}  // namespace

std::optional<CheckpointStrategy> parseCheckpointStrategy(const std::string& text) {
    if (text == "off") {
        return CheckpointStrategy{};
    }
    if (text == "nested") {
        return CheckpointStrategy{CheckpointStrategy::Kind::Nested, 0};
    }
    int64_t groupSize = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), groupSize);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || groupSize < 1) {
        return std::nullopt;
    }
    return CheckpointStrategy{CheckpointStrategy::Kind::Groups, groupSize};
}

std::string toString(const CheckpointStrategy& strategy) {
    switch (strategy.kind) {
        case CheckpointStrategy::Kind::Off:
            return "off";
        case CheckpointStrategy::Kind::Groups:
            return std::to_string(strategy.groupSize);
        case CheckpointStrategy::Kind::Nested:
            return "nested";
    }
    return "off";
}

int64_t nestedSplit(int64_t first, int64_t end) {
    return first + (end - first) / 2;
}

int64_t recomputedBlockForwards(const CheckpointStrategy& strategy, int64_t layers) {
    switch (strategy.kind) {
        case CheckpointStrategy::Kind::Off:
            return 0;
        case CheckpointStrategy::Kind::Groups:
            return layers;
        case CheckpointStrategy::Kind::Nested:
            return nestedRecomputations(layers);
    }
    return 0;
}

}  // namespace stepscope
