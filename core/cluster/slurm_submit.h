#pragma once

#include <string>
#include <vector>

namespace stepscope {

// Submits a job script with `sbatch --parsable` (found on PATH) and returns
// the job id it prints. Throws SlurmError: sbatch not found (so not a Slurm
// login node), or sbatch refusing the job, with what it said.
std::string submitSlurmJob(const std::string& script);

}  // namespace stepscope
