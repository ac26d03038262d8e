#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/slurm_array.h"
#include "results/run_file.h"

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

// Reads the result file of each task of `array` in `directory` into
// `collection` (a SlurmProgress): a task without one is missing; `read(index,
// task, path)` reads one and says itself which it finds failed, and one it
// cannot read (a RunFileError) fails as unreadable. What both collectors do.
template <typename Collection, typename Read>
void readEachResult(const SlurmArray& array, const std::string& directory, Collection& collection,
                    Read read) {
    collection.total = array.tasks.size();
    for (size_t i = 0; i < array.tasks.size(); ++i) {
        const SlurmTask& task = array.tasks[i];
        const auto file = collection.resultFile(directory, int(i), task);
        if (!file) {
            continue;
        }
        try {
            read(int(i), task, *file);
        } catch (const RunFileError& unreadable) {
            collection.addFailed(directory, int(i), task,
                                 std::string("unreadable: ") + unreadable.what());
        }
    }
}

// Writes each {name, contents} into `directory`, atomically: what --collect
// makes of the points. Throws SlurmError naming --collect.
void writeCollectedTables(const std::string& directory,
                          const std::vector<std::pair<std::string, std::string>>& tables);

}  // namespace stepscope
