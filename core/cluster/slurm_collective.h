#pragma once

#include <string>

#include "cluster/slurm_array.h"
#include "cluster/slurm_progress.h"
#include "experiments/collective_benchmark.h"
#include "results/collective_file.h"

namespace stepscope {

constexpr const char* kCollectiveArrayKind = "collective";

// The collective benchmark as a Slurm job array: task i runs rank count i
// of the spec alone, `stepscope-cli collective --op … --sizes BYTES,… --ranks
// R --nodes N … --out points/ranksR.json`, every setting on its command line
// (its ranks over N nodes of the task's allocation where N > 1). Throws
// SlurmError naming the flag where the spec cannot run.
SlurmArray collectiveSlurmArray(const CollectiveSpec& spec);

// The collective array `held`, read from `directory`, as `--resume` writes
// its script again: each task's stored arguments are read as data (the flags
// collectiveSlurmArray writes, each once, values checked) into the one rank
// count they run, and its command line is written again from that plan.
// Throws SlurmError naming the field where the folder was changed after
// StepScope wrote it.
SlurmArray replannedSlurmCollective(const SlurmArray& held, const std::string& directory);

// What --collect reads of a collective array: every finished rank count's
// rows, in the array's order.
struct CollectiveCollection : SlurmProgress {
    CollectiveFile file;
};

// Reads every task's collective file from `directory`; throws SlurmError
// naming `flag` when it holds no collective array. A task whose ranks ended
// without finishing every row (a failed row) is failed; an oom row is a result.
CollectiveCollection readSlurmCollective(const std::string& directory, const std::string& flag);

// readSlurmCollective, then writes collective.json into `directory`
// (atomically): the file `collective --out` writes, which the app opens.
CollectiveCollection collectSlurmCollective(const std::string& directory);

}  // namespace stepscope
