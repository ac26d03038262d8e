#pragma once

// The collective benchmark's rows (`stepscope-cli collective`): what the ranks
// measured, the figures worked out from it (nccl-tests' algbw and busbw), and
// the file `--out` writes and the app opens (`--json` prints the same).

#include <cstdint>
#include <string>
#include <vector>

namespace stepscope {

inline constexpr const char* kCollectiveOps[] = {"all_reduce", "all_gather", "reduce_scatter",
                                                 "broadcast"};

// One collective at one size on one rank count, as measured, and its figures.
struct CollectiveRow {
    std::string op;
    int64_t sizeBytes = 0;       // nccl-tests' size: all_gather's output, reduce_scatter's input
    int64_t requestedBytes = 0;  // as asked; sizeBytes is it rounded to whole elements
    int ranks = 0;
    std::string backend;
    std::string dtype;
    std::string device;
    std::string status;  // ok, oom, failed
    std::string message;
    // Every rank's time of every timed call (µs), by rank; empty unless ok.
    std::vector<std::vector<double>> timesUs;
    std::string
        emulated;  // "all_reduce" where the backend ran the op as one (gloo's reduce_scatter)
    bool oversubscribed = false;  // more ranks than the machine's cores (gloo on the CPU)

    // From timesUs (collectiveFigures): a call's time is its slowest rank's
    // (the others wait for it); the median of those, their least and most.
    double timeUs = 0;
    double minUs = 0;
    double maxUs = 0;
    double algbwGbps = 0;  // sizeBytes / timeUs, in GB/s (1e9 bytes)
    double busbwGbps = 0;  // algbw × busBandwidthFactor
};

// nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md): all_reduce
// 2(n−1)/n, all_gather and reduce_scatter (n−1)/n, broadcast 1.
double busBandwidthFactor(const std::string& op, int ranks);

// Fills a row's time, spread, algbw and busbw from its times (ok rows).
void collectiveFigures(CollectiveRow& row);

struct CollectiveFile {
    std::string torchVersion;
    int cores = 0;  // the machine's usable cores where it ran
    std::vector<CollectiveRow> rows;
};

std::string collectiveFileToJson(const CollectiveFile& file);
// Throws std::runtime_error naming the field on a malformed file; the
// figures are worked out again from the times.
CollectiveFile collectiveFileFromJson(const std::string& text);
CollectiveFile readCollectiveFile(const std::string& path);
// Whether `text` (a file's first bytes) is a collective file.
bool looksLikeCollectiveFile(const std::string& text);

}  // namespace stepscope
