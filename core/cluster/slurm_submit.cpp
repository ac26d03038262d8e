#include "cluster/slurm_submit.h"

#include <chrono>
#include <memory>

#include "cluster/slurm_array.h"
#include "util/child_process.h"

namespace stepscope {

std::string submitSlurmJob(const std::string& script) {
    std::unique_ptr<ChildProcess> sbatch;
    try {
        sbatch = std::make_unique<ChildProcess>(
            std::vector<std::string>{"sbatch", "--parsable", script});
    } catch (const std::exception& error) {
        throw SlurmError("--submit: sbatch cannot be run (" + std::string(error.what()) +
                         "); is this a Slurm login node? The job script is written: submit it "
                         "there with sbatch " +
                         script);
    }
    std::string output;
    while (!sbatch->atEnd()) {
        if (const auto line = sbatch->readLine(std::chrono::milliseconds(200))) {
            output += *line + "\n";
        }
    }
    while (!sbatch->wait(std::chrono::milliseconds(200))) {
    }
    const std::string said = sbatch->stderrTail(20);
    if (sbatch->exitStatus() != 0) {
        throw SlurmError("--submit: sbatch refused the job (" + sbatch->exitDescription() + ")" +
                         (said.empty() ? std::string() : ":\n" + said));
    }
    // --parsable prints "JOBID" or "JOBID;CLUSTER".
    const std::string jobId = output.substr(0, output.find_first_of(";\n"));
    if (jobId.empty() || jobId.find_first_not_of("0123456789") != std::string::npos) {
        throw SlurmError("--submit: sbatch did not print a job id; it printed '" + output + "'" +
                         (said.empty() ? std::string() : " and said:\n" + said));
    }
    return jobId;
}

}  // namespace stepscope
