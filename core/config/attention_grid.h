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
    std::string python;        // the worker's interpreter (empty: default)
    // What runs naive and sdpa: LibTorch in this process, or PyTorch eager in
    // the Python worker (Engine::PyTorch), which also runs every other point.
    // The worker's own backends (compiled, flash-pytorch, flash-triton, the
    // user's) run there with either.
    Engine engine = Engine::LibTorch;
    // The user's attention (MODULE:NAME, imported from pyPath), a backend of
    // the grid named pyAttentionName, or else NAME; run in the worker with
    // either engine.
    std::string pyAttention;
    std::string pyPath;
    std::string pyAttentionName;
};

// torch.compile of naive attention in the Python worker: a grid backend
// that the model itself does not have.
constexpr const char* kCompiledAttention = "compiled";

// The grid's name for the user's attention: pyAttentionName, else the NAME of
// MODULE:NAME; empty without one.
inline std::string userAttentionName(const AttentionBenchSpec& spec) {
    if (spec.pyAttention.empty()) {
        return {};
    }
    if (!spec.pyAttentionName.empty()) {
        return spec.pyAttentionName;
    }
    return pythonTargetName(spec.pyAttention);
}

}  // namespace stepscope
