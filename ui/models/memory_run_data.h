#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/memory_index.h"
#include "profile/memory_trace.h"
#include "results/run_result.h"
#include "results/saved_for_backward.h"

namespace stepscope::ui {

// What each block keeps for backward, and the allocations behind each bar.
struct SavedBlocks {
    SavedForBackward saved;
    std::vector<std::vector<uint32_t>> members;  // per block, into the memory index
    std::string error;  // why there is nothing to show (savedForBackward's words)
};
// `run`'s, with `index` built on its memory trace.
SavedBlocks savedBlocks(const RunResult& run, const MemoryIndex& index);

// What the memory view and the saved-for-backward view draw from a run's
// memory trace at first, worked out without widgets: where a run file is
// read off the UI thread this is prepared there too, for a million events
// take a quarter second to index, group into sites and attribute to blocks.
struct MemoryRunData {
    // `told` hears how far it is (0 to 1) after each stage: the index and
    // summary, the sites, the saved blocks.
    explicit MemoryRunData(const RunResult& run, const std::function<void(double)>& told = {});

    // The run this was made from has moved (into its document): follow it.
    void follow(const RunResult& run);
    bool isFor(const RunResult& run) const { return index.trace() == &run.memory; }

    MemoryIndex index;
    MemorySummary summary;  // summarizeMemory(trace, 0)
    // The sites of the allocations alive between these two times: the whole
    // run, as the memory view's axis first shows it (in its milliseconds).
    double sitesFromUs = 0;
    double sitesToUs = 0;
    std::vector<AllocationSite> sites;
    SavedBlocks saved;
};

// Null for a run without a memory trace.
std::shared_ptr<MemoryRunData> prepareMemoryRunData(const RunResult& run,
                                                    const std::function<void(double)>& told = {});

}  // namespace stepscope::ui
