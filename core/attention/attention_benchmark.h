#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attention/attention_options.h"
#include "bench/run_config.h"

namespace stepscope {

// The attention grid: backends × head dims × sequence lengths × precisions.
struct AttentionBenchSpec {
    std::vector<std::string> backends{"naive", "tiled", "sdpa"};
    std::vector<int64_t> headDims{16, 32, 64, 128};
    std::vector<int64_t> seqLens;  // empty: the device's default grid
    std::vector<Precision> precisions{Precision::Fp32};
    int64_t batch = 8;
    int64_t heads = 1;
    bool causal = true;
    DeviceKind device = DeviceKind::Cpu;
    int warmup = 1;
    int repeats = 5;  // times are medians over these
    uint64_t seed = 0;
    AttentionOptions options;  // tile sizes for tiled
    std::string python;        // "compiled" points: the worker's interpreter (empty: default)
};

// The backends the grid takes: the model's (attentionBackendNames()) and
// "compiled", torch.compile of naive attention in the Python worker.
std::vector<std::string> attentionGridBackendNames();
constexpr const char* kCompiledAttention = "compiled";

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

// FlashAttention's convention: forward 4·B·H·S²·d, halved when causal; backward 2.5× forward.
double attentionForwardFlops(int64_t batch, int64_t heads, int64_t seq, int64_t d, bool causal);

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
