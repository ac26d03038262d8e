#pragma once

#include <atomic>
#include <string>

#include "cli/config_flags.h"

namespace stepscope::cli {

// Exit codes of stepscope-cli.
constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;
constexpr int kExitRunFailed = 3;

// Set by SIGINT: a run stops between steps and keeps what it measured.
std::atomic<bool>& cancelRequested();

int commandInfo(bool json);
int commandParams(const ConfigFlags& flags, bool all, bool json);
int commandRun(const ConfigFlags& flags, const std::string& outFile, bool json);
int commandEstimate(const ConfigFlags& flags, bool json);
int commandSweep(const ConfigFlags& flags, const std::string& outDir, bool resume);
int commandEval(const ConfigFlags& flags, const std::string& weights, const std::string& tokens,
                bool json);
int commandShow(const std::string& file, bool json);

struct AttentionFlags {
    std::vector<std::string> backends{"naive", "tiled", "sdpa"};
    std::vector<int64_t> headDims{16, 32, 64, 128};
    std::vector<int64_t> seqLens;  // empty: the device's default grid
    std::vector<std::string> precisions{"fp32"};
    int64_t batch = 8;
    int64_t heads = 1;
    bool causal = true;
    std::string device = "cpu";
    int warmup = 1;
    int repeats = 5;
    int64_t queryTile = 128;
    int64_t keyTile = 128;
    std::string python;
    std::string outDir;
};
int commandAttention(const AttentionFlags& flags, bool json);
int commandBreakdown(const std::string& file, const std::string& phase, const std::string& by,
                     bool flops, bool json);
// export FILE --chrome-trace OUT.json --memviz OUT.pickle
int commandExport(const std::string& file, const std::string& chromeTrace,
                  const std::string& memviz);
// memory FILE [--json]: peaks, categories at peak, top allocations
int commandMemory(const std::string& file, size_t top, bool json);
int commandDtypes(const ConfigFlags& flags, bool json);
int commandAccumulate(int64_t count, bool json);

}  // namespace stepscope::cli
