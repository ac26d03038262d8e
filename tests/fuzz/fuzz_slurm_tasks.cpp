// Fuzz target for a Slurm folder's task lists (issue 45): any bytes as
// slurm-array.json, read, then planned again as `--resume` plans it
// (replannedSlurmSweep, replannedSlurmAttention, replannedSlurmCollective).
// Either one SlurmError (any other exception is a finding), or an array whose
// every task runs only what StepScope writes: a sweep point `run --config
// inputs/N --out points/N`, an attention point with its result as
// --out-file, a collective rank count with its result as --out and the
// array's nodes, no interpreter or code folder relative to or inside the
// folder.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cluster/slurm_array.h"
#include "cluster/slurm_attention.h"
#include "cluster/slurm_collective.h"
#include "cluster/slurm_sweep.h"

using namespace stepscope;

namespace {

const std::string& folder() {
    static const std::string path = [] {
        const auto dir = std::filesystem::temp_directory_path() /
                         ("stepscope-fuzz-slurm-tasks-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir);
        return dir.string();
    }();
    return path;
}

// The value after `flag` in `arguments`, or "" without one.
std::string valueOf(const std::vector<std::string>& arguments, const std::string& flag) {
    for (size_t i = 0; i + 1 < arguments.size(); ++i) {
        if (arguments[i] == flag) {
            return arguments[i + 1];
        }
    }
    return {};
}

// An absolute path outside the fuzzed folder (no links there to follow).
bool absoluteOutside(const std::string& path) {
    if (path.empty() || path.front() != '/') {
        return false;
    }
    const std::string normal = std::filesystem::path(path).lexically_normal().string();
    return normal != folder() && normal != folder() + "/" && normal.rfind(folder() + "/", 0) != 0;
}

// An interpreter a task may name: none, a bare name found on PATH, or an
// absolute path outside the folder.
bool ourInterpreter(const std::string& program) {
    return program.find('/') == std::string::npos || absoluteOutside(program);
}

void checkPlanned(const SlurmArray& array) {
    for (const auto& task : array.tasks) {
        if (array.kind == kSweepArrayKind) {
            std::vector<std::string> planned = {"--config", task.inputFile, "--out",
                                                task.resultFile};
            if (array.runner == SlurmRunner::Cli) {
                planned.insert(planned.begin(), "run");
            }
            if (task.arguments != planned) {
                std::abort();
            }
            continue;
        }
        if (array.kind == kCollectiveArrayKind) {
            if (task.arguments.front() != "collective" ||
                valueOf(task.arguments, "--out") != task.resultFile ||
                valueOf(task.arguments, "--nodes") != std::to_string(array.nodes) ||
                !ourInterpreter(valueOf(task.arguments, "--python"))) {
                std::abort();
            }
            continue;
        }
        if (valueOf(task.arguments, "--out-file") != task.resultFile ||
            !ourInterpreter(valueOf(task.arguments, "--python")) ||
            (!valueOf(task.arguments, "--py-path").empty() &&
             !absoluteOutside(valueOf(task.arguments, "--py-path")))) {
            std::abort();
        }
    }
    for (const auto& variable : array.environment) {
        if (!ourInterpreter(variable.substr(variable.find('=') + 1))) {
            std::abort();
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::ofstream(folder() + "/" + kSlurmArrayFile, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), std::streamsize(size));
    try {
        const auto held = readSlurmArray(folder());
        if (!held) {
            return 0;
        }
        SlurmArray planned;
        if (held->kind == kSweepArrayKind) {
            planned = replannedSlurmSweep(*held, folder());
        } else if (held->kind == kAttentionArrayKind) {
            planned = replannedSlurmAttention(*held, folder());
        } else if (held->kind == kCollectiveArrayKind) {
            planned = replannedSlurmCollective(*held, folder());
        } else {
            return 0;
        }
        checkPlanned(planned);
        slurmJobScript(planned, folder(), "/usr/bin/stepscope-cli", {}, {0});
    } catch (const SlurmError&) {  // anything else escaping is a finding
    }
    return 0;
}
