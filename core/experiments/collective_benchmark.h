#pragma once

// The collective benchmark (`stepscope-cli collective`): one torch.distributed
// collective at a time over sizes and rank counts, on ranks torchrun starts
// (python/stepscope/distributed/collective_bench.py, one torchrun per rank
// count; docs/collective-benchmark.md is the contract). The ranks time each
// call; the figures (results/collective_file.h) are worked out here.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "results/collective_file.h"

namespace stepscope {

struct CollectiveSpec {
    std::vector<std::string> ops;     // of kCollectiveOps
    std::vector<int64_t> sizesBytes;  // nccl-tests' sizes
    std::vector<int> ranks;           // a torchrun per count
    int nodes = 1;  // > 1: each count over this many nodes of a Slurm allocation, by srun
    std::string backend = "gloo";  // gloo, nccl
    std::string dtype = "fp32";    // fp32, bf16, fp16
    std::string device = "cpu";    // cpu, cuda
    int warmup = 5;
    int repeats = 20;
    std::string python;  // the interpreter; empty: the worker's candidates
};

// Why a spec cannot run, naming the flag and what it allows; nullopt when it can.
std::optional<std::string> collectiveSpecProblem(const CollectiveSpec& spec);

// "1MB", "64K", "512KiB", "4096", "1G": bytes, K/M/G (with or without B or
// iB) as powers of 1024, as nccl-tests reads them. nullopt for anything else,
// zero, or more than 1 TiB.
std::optional<int64_t> parseByteSize(const std::string& text);

struct CollectiveProgress {
    int ranks = 0;  // the rank count under way
    int done = 0;   // its rows done
    int total = 0;  // its rows in all
};

struct CollectiveObserver {
    std::function<void(const CollectiveRow&)> onRow;
    std::function<void(const CollectiveProgress&)> onProgress;
};

// Runs every rank count in turn. A size that does not fit is an `oom` row,
// a call that fails a `failed` one. Throws std::runtime_error when the ranks
// cannot start or end without finishing (the Python side's message and its
// stderr), with the rows so far in `file`. `cancel` stops after the call
// under way.
void runCollectiveBenchmark(const CollectiveSpec& spec, CollectiveFile& file,
                            const std::atomic<bool>* cancel = nullptr,
                            const CollectiveObserver& observer = {});

}  // namespace stepscope
