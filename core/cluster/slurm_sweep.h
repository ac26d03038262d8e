#pragma once

#include <string>
#include <vector>

#include "cluster/slurm_array.h"
#include "cluster/slurm_progress.h"
#include "experiments/sweep.h"
#include "results/run_result.h"

namespace stepscope {

constexpr const char* kSweepArrayKind = "sweep";

// A sweep as a Slurm job array: task i runs point i in its own process,
// `stepscope-cli run --config inputs/NAME.json --out points/NAME.json`, or
// with SlurmRunner::Recorder `stepscope-record --config inputs/NAME.json
// --out points/NAME.json`, NAME as sweepPointFileName names it. Validates
// every point first, as runSweep does, and for the recorder that each point
// runs a PyTorch engine and no --python is set (InvalidConfigError naming
// the field and the point). spec.outDir is not used.
SlurmArray sweepSlurmArray(const SweepSpec& spec, SlurmRunner runner = SlurmRunner::Cli);

// The sweep array `held`, read from `directory`, as `--resume` writes its
// script again: built from the folder's own plan (each point's config in
// inputs/ and our own flags), never from the argument lists the folder
// stores. Throws SlurmError naming the field where the folder was changed
// after StepScope wrote it: a task's arguments other than `run --config
// inputs/NAME.json --out points/NAME.json` (a tampered --out writes
// elsewhere, an added --python runs what the folder brings), an input that
// is no config, or STEPSCOPE_PYTHON not ours (checkInterpreterOutside).
SlurmArray replannedSlurmSweep(const SlurmArray& held, const std::string& directory);

// What --collect reads of a sweep array.
struct SweepCollection : SlurmProgress {
    std::vector<RunResult> results;          // every readable run file, in the sweep's order
    std::vector<std::string> files;          // their paths
    std::vector<std::string> varyingFields;  // the sweep's table columns beyond the four
};

// Reads every point's run file from `directory` (made by sweepSlurmArray and
// writeSlurmArray); throws SlurmError naming `flag` when it holds no sweep.
SweepCollection readSlurmSweep(const std::string& directory, const std::string& flag);

// readSlurmSweep, then writes sweep.csv and sweep.md into `directory` from
// the points read (atomically; the same tables a local sweep writes).
SweepCollection collectSlurmSweep(const std::string& directory);

}  // namespace stepscope
