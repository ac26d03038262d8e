#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/attention_grid.h"
#include "results/attention_file.h"

namespace stepscope {

// The backends the grid takes: the model's (attentionBackendNames()) and
// "compiled", torch.compile of naive attention in the Python worker.
std::vector<std::string> attentionGridBackendNames();

std::vector<int64_t> defaultSeqLens(DeviceKind device);

// The grid's points in the order they are measured and reported (precision,
// head dim, sequence length, then backend), not yet measured.
std::vector<AttentionPoint> attentionGridPoints(const AttentionBenchSpec& spec);

struct AttentionBenchControl {
    std::function<void(const AttentionPoint&, int index, int total)> onPoint;
    const std::atomic<bool>* cancel = nullptr;
    std::optional<int64_t> availableMemoryBytes;  // CPU pre-flight; nullopt reads MemAvailable
};

// Precisions from their names; throws InvalidConfigError naming "precision".
std::vector<Precision> parsePrecisionNames(const std::vector<std::string>& names);

// Throws InvalidConfigError naming each bad field of the spec.
void validateAttentionSpec(const AttentionBenchSpec& spec);

// Validates the spec (InvalidConfigError naming the field), then measures
// every point; an out-of-memory or unavailable point is a result and the grid
// goes on. On CPU, where running out of memory ends the process, a point whose
// estimate exceeds the available memory is recorded as oom without running.
std::vector<AttentionPoint> runAttentionBenchmark(const AttentionBenchSpec& spec,
                                                  const AttentionBenchControl& control = {});

}  // namespace stepscope
