#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "config/limits.h"
#include "config/run_config.h"
#include "experiments/sweep.h"

namespace stepscope::cli {

// A whole number in min..max, read without CLI11's clamping of what
// overflows int64; the message names the range.
CLI::Validator integerIn(int64_t min, int64_t max);
CLI::Validator integerIn(const IntegerLimit& limit);

// Groups of config flags, so a command lists only the flags it reads.
enum FlagGroups : unsigned {
    kModelFlags = 1u << 0,  // --model, --d-model, --d-ff, --layers, --heads, --vocab
    // --max-ctx, --ctx, --batch, --mode, --precision, --tf32, --attention,
    // --activation-checkpoint, --loss, --loss-chunk, --optimizer
    kWorkloadFlags = 1u << 1,
    kStepFlags = 1u << 2,    // --warmup, --steps, --device, --seed, --threads, --force
    kTraceFlags = 1u << 3,   // --ops, --kernels, --memory, --cuda-snapshot
    kEngineFlags = 1u << 4,  // --engine, --compile-mode, --py-*, --python, --cuda-graph
    kAllFlags = kModelFlags | kWorkloadFlags | kStepFlags | kTraceFlags | kEngineFlags,
    kDataFlags = 1u << 5,  // --weights, --tokens (run only: the tokens fix batch and ctx)
};

// The config flags every command that takes a config shares. In a sweep every
// flag that takes one value in `run` takes a comma list (--batch 4,8
// --attention naive,sdpa; --tf32 off,on, or --tf32 alone for on); each list
// with more than one value is an axis of the sweep. Single-run commands take
// one value each. Flags a command does not add keep their defaults.
struct ConfigFlags {
    std::vector<std::string> models;  // empty: nano, or with --weights the weights' shape
    int64_t dModel = 0, dFf = 0, layers = 0, heads = 0;
    // 0: the preset's own (10000 and 2048 but for the leaderboard model; those for custom dims).
    int64_t vocab = 0;
    int64_t maxContext = 0;
    std::vector<int64_t> contexts{128};
    std::vector<int64_t> batches{4};
    std::vector<std::string> modes{"train-step"};
    std::vector<std::string> precisions{"fp32"};
    bool tf32 = false;                    // run: the --tf32 flag
    std::vector<std::string> tf32Values;  // lists: --tf32 on,off (alone: on); empty: off
    std::vector<std::string> attentions;  // empty: naive, or with --py-attention its NAME
    std::vector<std::string> activationCheckpoints{"off"};
    std::vector<std::string> losses{"full"};
    std::vector<int64_t> lossChunks{1024};
    std::vector<std::string> optimizers{"adamw"};
    std::vector<int> warmups{2};
    std::vector<int> steps{5};
    std::vector<std::string> devices{"cpu"};
    std::vector<uint64_t> seeds{0};
    std::vector<int> threads{0};
    bool force = false;
    bool traceOps = false;
    bool traceKernels = false;
    bool traceMemory = false;
    std::string cudaSnapshot;
    std::vector<std::string> engines{"libtorch"};
    std::vector<std::string> compileModes{"default"};
    bool cudaGraph = false;                    // run: the --cuda-graph flag
    std::vector<std::string> cudaGraphValues;  // lists: --cuda-graph off,on (alone: on)
    std::string pyModel, pyPath, pyAttention, python;
    std::string weights, tokens;

    // `listFlags` take comma lists even where `lists` is false (a study that
    // varies one field of an otherwise single config).
    void addTo(CLI::App& command, bool lists, unsigned groups = kAllFlags,
               const std::vector<std::string>& listFlags = {});
    // Throws InvalidConfigError (field-named) for a value no config can hold.
    RunConfig toRunConfig() const;
    SweepSpec toSweepSpec(const std::string& outDir) const;
};

}  // namespace stepscope::cli
