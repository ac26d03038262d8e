#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/slurm_array.h"

namespace stepscope {

// A point of a Slurm array that has not given a result file saying ok.
struct UnfinishedPoint {
    int index = 0;
    std::string name;
    std::string why;      // "no result file yet", "failed: …", "unreadable: …"
    std::string logTail;  // the end of its newest Slurm log, if it has one
};

// Which points of an array have finished, as its collector reads them.
struct SlurmProgress {
    std::vector<UnfinishedPoint> missing;  // no result file (yet)
    std::vector<UnfinishedPoint> failed;   // a result that is not ok, or unreadable
    size_t total = 0;

    bool complete() const { return missing.empty() && failed.empty(); }
    size_t finished() const { return total - missing.size() - failed.size(); }
    // The missing and failed points' indices, ascending: what --resume submits.
    std::vector<int> unfinishedIndices() const;
    // The path of task `index`'s result file in `directory`; nullopt, and
    // the task recorded as missing, while it has none.
    std::optional<std::string> resultFile(const std::string& directory, int index,
                                          const SlurmTask& task);
    // Task `index` of the array in `directory`, with the end of its Slurm log.
    void addFailed(const std::string& directory, int index, const SlurmTask& task,
                   const std::string& why);
};

// Writes each {name, contents} into `directory`, atomically: what --collect
// makes of the points. Throws SlurmError naming --collect.
void writeCollectedTables(const std::string& directory,
                          const std::vector<std::pair<std::string, std::string>>& tables);

}  // namespace stepscope
