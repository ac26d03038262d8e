#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/attention_grid.h"

namespace stepscope {

// The backends the grid takes: the model's (attentionBackendNames()) and
// "compiled", torch.compile of naive attention in the Python worker.
std::vector<std::string> attentionGridBackendNames();

std::vector<int64_t> defaultSeqLens(DeviceKind device);

struct AttentionPoint {
    std::string backend;
    std::string kernel;  // what actually ran (sdpa's choice), else the backend
    int64_t d = 0;
    int64_t seq = 0;
    int64_t batch = 0;
    int64_t heads = 0;
    Precision precision = Precision::Fp32;
    bool causal = true;
    std::string status;  // ok, oom, unavailable, failed
    std::string message;
    std::optional<double> forwardMs;
    std::optional<double> backwardMs;
    std::optional<int64_t>
        memBeforeBackwardBytes;  // allocated after forward: inputs, saved, output
    std::optional<int64_t> peakBytes;
    std::optional<double> forwardTflops;
    std::optional<double> backwardTflops;
    int64_t scoreMatrixBytes = 0;  // one seq × seq score matrix of the batch (naive keeps ~3)
};

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
