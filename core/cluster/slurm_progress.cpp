#include "cluster/slurm_progress.h"

#include <algorithm>
#include <filesystem>

#include "util/atomic_file.h"

namespace stepscope {

namespace fs = std::filesystem;

std::vector<int> SlurmProgress::unfinishedIndices() const {
    std::vector<int> indices;
    for (const auto* list : {&missing, &failed}) {
        for (const auto& point : *list) {
            indices.push_back(point.index);
        }
    }
    std::sort(indices.begin(), indices.end());
    return indices;
}

std::optional<std::string> SlurmProgress::resultFile(const std::string& directory, int index,
                                                     const SlurmTask& task) {
    const std::string file = (fs::path(directory) / task.resultFile).string();
    std::error_code error;
    if (fs::is_symlink(fs::path(directory) / "points", error) || fs::is_symlink(file, error)) {
        // A link could lead the collector to read a file outside the folder.
        failed.push_back({index, task.name,
                          "unreadable: " + task.resultFile + " is a symbolic link (or under one)",
                          ""});
        return std::nullopt;
    }
    if (fs::exists(file, error)) {
        return file;
    }
    missing.push_back({index, task.name, "no result file yet", slurmLogTail(directory, index)});
    return std::nullopt;
}

void SlurmProgress::addFailed(const std::string& directory, int index, const SlurmTask& task,
                              const std::string& why) {
    failed.push_back({index, task.name, why, slurmLogTail(directory, index)});
}

void writeCollectedTables(const std::string& directory,
                          const std::vector<std::pair<std::string, std::string>>& tables) {
    try {
        for (const auto& [name, contents] : tables) {
            writeFileAtomically((fs::path(directory) / name).string(), contents);
        }
    } catch (const std::exception& failure) {
        throw SlurmError("--collect: cannot write the tables into '" + directory +
                         "': " + failure.what());
    }
}

}  // namespace stepscope
