#include "models/memory_run_data.h"

#include <stdexcept>

namespace stepscope::ui {

SavedBlocks savedBlocks(const RunResult& run, const MemoryIndex& index) {
    SavedBlocks blocks;
    try {
        blocks.saved = savedForBackward(run, index.allocations());
    } catch (const std::invalid_argument& error) {
        blocks.error = error.what();
        return blocks;
    }
    blocks.members.resize(blocks.saved.blocks.size());
    for (size_t a = 0; a < index.size(); ++a) {
        const int block = savedBlockOf(index.allocations()[a], run.memory, blocks.saved.step);
        if (block >= 0 && size_t(block) < blocks.members.size()) {
            blocks.members[size_t(block)].push_back(uint32_t(a));
        }
    }
    return blocks;
}

// Each stage's share of the whole, as a million events take them (index and
// summary about 45 ms, sites 22, saved blocks well under 1).
constexpr double kIndexShare = 0.67;
constexpr double kSitesShare = 0.99;

MemoryRunData::MemoryRunData(const RunResult& run, const std::function<void(double)>& told)
    : index(run.memory), summary(summarizeMemory(run.memory, 0)) {
    if (told) {
        told(kIndexShare);
    }
    // The range the view's time axis holds after showing the run: its ends
    // in milliseconds, read back in microseconds.
    sitesFromUs = index.startUs() / 1e3 * 1e3;
    sitesToUs = index.endUs() / 1e3 * 1e3;
    sites = groupSites(index, index.aliveBetween(sitesFromUs, sitesToUs));
    if (told) {
        told(kSitesShare);
    }
    saved = savedBlocks(run, index);
    if (told) {
        told(1.0);
    }
}

void MemoryRunData::follow(const RunResult& run) {
    index.followMovedTrace(run.memory);
}

std::shared_ptr<MemoryRunData> prepareMemoryRunData(const RunResult& run,
                                                    const std::function<void(double)>& told) {
    return run.memory.empty() ? nullptr : std::make_shared<MemoryRunData>(run, told);
}

}  // namespace stepscope::ui
