#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/attention_options.h"
#include "config/run_config.h"

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

// torch.compile of naive attention in the Python worker: a grid backend
// that the model itself does not have.
constexpr const char* kCompiledAttention = "compiled";

}  // namespace stepscope
