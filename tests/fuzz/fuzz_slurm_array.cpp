// libFuzzer target for a Slurm folder's slurm-array.json (issue 33): any
// bytes give an array or one SlurmError; an array read back always makes a
// job script in which every name is plain and every path stays in DIR.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cluster/slurm_array.h"
#include "util/strings.h"

using namespace stepscope;

namespace {

const std::string& folder() {
    static const std::string path = [] {
        const auto dir = std::filesystem::temp_directory_path() /
                         ("stepscope-fuzz-slurm-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir);
        return dir.string();
    }();
    return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::ofstream(folder() + "/" + kSlurmArrayFile, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), std::streamsize(size));
    try {
        const auto array = readSlurmArray(folder());
        if (!array) {
            return 0;
        }
        const std::string script =
            slurmJobScript(*array, "/tmp/dir", "/usr/bin/stepscope-cli", {}, {0});
        for (const auto& task : array->tasks) {
            // What the reader let through is what the script may hold as it is.
            if (!isPlainName(task.name) || task.resultFile.find("..") != std::string::npos ||
                task.resultFile.rfind("points/", 0) != 0) {
                std::abort();
            }
        }
        if (!isPlainName(array->jobName) ||
            script.find("\n#SBATCH --job-name=" + array->jobName + "\n") == std::string::npos) {
            std::abort();
        }
    } catch (const SlurmError&) {
    }
    return 0;
}
