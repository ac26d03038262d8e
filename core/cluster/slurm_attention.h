#pragma once

#include <string>
#include <vector>

#include "cluster/slurm_array.h"
#include "cluster/slurm_progress.h"
#include "experiments/attention_benchmark.h"
#include "results/run_result.h"

namespace stepscope {

constexpr const char* kAttentionArrayKind = "attention";

// The attention grid as a Slurm job array: task i measures grid point i
// (attentionGridPoints' order, the local grid's) alone, `stepscope-cli
// attention --backends B --d D --seq S --precision P … --out-file
// points/NAME.json`, every setting on its command line. Validates the spec
// first (InvalidConfigError naming the field); CUDA need not be here, the
// nodes have what --gres asks for.
SlurmArray attentionSlurmArray(const AttentionBenchSpec& spec);

// The attention array `held`, read from `directory`, as `--resume` writes
// its script again: each task's stored arguments are read as data (the
// flags attentionSlurmArray writes, each once, values checked) into the
// one point they measure, and its command line is written again from that
// plan. Throws SlurmError naming the field where the folder was changed
// after StepScope wrote it: an unknown or repeated flag, a point other than
// the task's name, an --out-file other than its result, --python not ours
// (checkInterpreterOutside), --py-path inside the folder.
SlurmArray replannedSlurmAttention(const SlurmArray& held, const std::string& directory);

// What --collect reads of an attention array.
struct AttentionCollection : SlurmProgress {
    std::vector<AttentionPoint> points;  // every readable point, in grid order
    EnvironmentInfo environment;         // the first point's, without Slurm ids
};

// Reads every point's attention file from `directory`; throws SlurmError
// naming `flag` when it holds no attention array. A point measured as oom or
// unavailable is a result, as it is in the local grid; one that failed, or
// an unreadable file, is failed.
AttentionCollection readSlurmAttention(const std::string& directory, const std::string& flag);

// readSlurmAttention, then writes attention.json and attention.csv into
// `directory` (atomically), as `attention --out DIR` does for the local grid.
AttentionCollection collectSlurmAttention(const std::string& directory);

}  // namespace stepscope
