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

// The backends the grid takes with `engine`: with libtorch the model's
// (attentionBackendNames()) and the Python worker's own (compiled: torch.compile
// of naive attention; flash-pytorch and flash-triton: our FlashAttention-2 in
// PyTorch ops and in Triton); with pytorch, all in the worker: naive, sdpa
// (PyTorch eager), flash-pytorch, flash-triton and compiled. The user's
// attention (the spec's pyAttention) comes on top.
std::vector<std::string> attentionGridBackendNames(Engine engine = Engine::LibTorch);
// The grid's backends when none are named: naive, tiled, sdpa (libtorch), or
// the worker's naive, sdpa, flash-pytorch, flash-triton, compiled (pytorch).
std::vector<std::string> defaultAttentionBackends(Engine engine);
// The spec's backends with the user's attention after them (once).
std::vector<std::string> attentionGridBackends(const AttentionBenchSpec& spec);
// Whether the Python worker measures `backend`'s points of this grid.
bool runsInPythonWorker(const AttentionBenchSpec& spec, const std::string& backend);

std::vector<int64_t> defaultSeqLens(DeviceKind device);

// The grid's points in the order they are measured and reported (precision,
// head dim, sequence length, then backend: attentionGridBackends), not yet measured.
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
// every point; an out-of-memory, unavailable, failed or incorrect point is a
// result and the grid goes on. On CPU, where running out of memory ends the
// process, a point whose estimate exceeds the available memory is recorded as
// oom without running. The worker's points run first, in one worker, and are
// reported in grid order; where every point is the worker's, each is
// reported as it arrives. A pyAttention the worker cannot load throws
// InvalidConfigError naming py-attention.
std::vector<AttentionPoint> runAttentionBenchmark(const AttentionBenchSpec& spec,
                                                  const AttentionBenchControl& control = {});

}  // namespace stepscope
