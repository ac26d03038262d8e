#pragma once

#include <string>
#include <vector>

#include "bench/slurm_array.h"
#include "bench/sweep.h"
#include "results/run_result.h"

namespace stepscope {

// A sweep as a Slurm job array: task i runs point i in its own process,
// `stepscope-cli run --config inputs/NAME.json --out points/NAME.json`, NAME
// as sweepPointFileName names it. Validates every point first, as runSweep
// does (InvalidConfigError naming the point). spec.outDir is not used.
SlurmArray sweepSlurmArray(const SweepSpec& spec);

// A point of the array that has not given a run file saying ok.
struct UnfinishedPoint {
    int index = 0;
    std::string name;
    std::string why;      // "no run file yet", "failed: …", "unreadable: …"
    std::string logTail;  // the end of its newest Slurm log, if it has one
};

struct SweepCollection {
    std::vector<RunResult> results;          // every readable run file, in the sweep's order
    std::vector<std::string> files;          // their paths
    std::vector<UnfinishedPoint> missing;    // no run file (yet)
    std::vector<UnfinishedPoint> failed;     // a run file that is not ok, or unreadable
    std::vector<std::string> varyingFields;  // the sweep's table columns beyond the four
    size_t total = 0;

    bool complete() const { return missing.empty() && failed.empty(); }
};

// Reads every point's run file from `directory` (made by sweepSlurmArray and
// writeSlurmArray); throws SlurmError naming `flag` when it holds no sweep.
SweepCollection readSlurmSweep(const std::string& directory, const std::string& flag);

// readSlurmSweep, then writes sweep.csv and sweep.md into `directory` from
// the points read (atomically; the same tables a local sweep writes).
SweepCollection collectSlurmSweep(const std::string& directory);

// The indices of the points of `collection` that are missing or failed, ascending.
std::vector<int> unfinishedPointIndices(const SweepCollection& collection);

}  // namespace stepscope
