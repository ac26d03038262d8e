#include "results/saved_for_backward.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

#include "estimate/cost_model.h"
#include "util/strings.h"

namespace stepscope {

namespace {

// "layers.3.attn" → 3; -1 for a path outside the blocks.
int blockIndexOf(const std::string& path) {
    const std::string prefix = "layers.";
    if (path.rfind(prefix, 0) != 0) {
        return -1;
    }
    const size_t end = path.find('.', prefix.size());
    try {
        return std::stoi(path.substr(prefix.size(), end - prefix.size()));
    } catch (const std::exception&) {
        return -1;
    }
}

int64_t blockParameterBytes(const ModelDims& dims) {
    const int64_t d = dims.dModel;
    return (4 * d * d + 3 * d * dims.dFf + 2 * d) * 4;
}

}  // namespace

// Made by a block's forward in `step` and kept for that step's backward.
int savedBlockOf(const MemoryAllocation& allocation, const MemoryTrace& trace, int step) {
    const bool saved =
        allocation.category == MemoryCategory::Activations && allocation.step == step;
    return saved ? blockIndexOf(trace.name(allocation.path)) : -1;
}

SavedForBackward savedForBackward(const RunResult& run, size_t topCount) {
    return savedForBackward(run, memoryAllocations(run.memory), topCount);
}

SavedForBackward savedForBackward(const RunResult& run,
                                  std::span<const MemoryAllocation> allocations, size_t topCount) {
    if (run.memory.empty()) {
        throw std::invalid_argument(
            "the run has no memory trace; record one with `stepscope-cli run --memory`");
    }
    // A snapshot's paths are Python frames and its run carries no model:
    // there are no blocks to count in, and "no block kept tensors" would
    // read as a finding about the recording.
    if (run.origin == kOriginMemorySnapshot) {
        throw std::invalid_argument(
            "a PyTorch memory snapshot names no Transformer blocks; record the run with "
            "`stepscope-cli run --memory` to see what each block keeps");
    }
    if (!hasBackward(run.config.mode)) {
        throw std::invalid_argument("a " + toString(run.config.mode) +
                                    " run has no backward, so nothing is saved for it; record "
                                    "a train-step or forward-backward run");
    }
    SavedForBackward saved;
    saved.step = run.steps.empty() ? 0 : run.steps.back().index;
    std::map<int, std::map<std::string, int64_t>> bytesByOp;  // block → op → bytes
    std::map<int, int64_t> tensors;
    for (const MemoryAllocation& allocation : allocations) {
        const int block = savedBlockOf(allocation, run.memory, saved.step);
        if (block < 0) {
            continue;
        }
        const std::string& op = run.memory.name(allocation.op);
        bytesByOp[block][op.empty() ? "(unknown)" : op] += allocation.bytes;
        ++tensors[block];
    }
    for (int64_t index = 0; index < run.config.model.layers; ++index) {
        BlockSaved block;
        block.module = "layers." + std::to_string(index);
        block.tensors = tensors[int(index)];
        block.gradientBytes = blockParameterBytes(run.config.model);
        for (const auto& [op, bytes] : bytesByOp[int(index)]) {
            block.bytes += bytes;
            block.top.push_back({op, bytes, 0});
        }
        std::sort(block.top.begin(), block.top.end(), [](const SavedByOp& a, const SavedByOp& b) {
            return a.bytes != b.bytes ? a.bytes > b.bytes : a.op < b.op;
        });
        if (block.top.size() > topCount) {
            block.top.resize(topCount);
        }
        for (auto& op : block.top) {
            op.share = block.bytes > 0 ? double(op.bytes) / double(block.bytes) : 0;
        }
        saved.blocks.push_back(std::move(block));
    }
    return saved;
}

std::vector<MemoryAllocation> savedAllocations(const RunResult& run, int step,
                                               const std::string& module) {
    const int block = blockIndexOf(module);
    std::vector<MemoryAllocation> out;
    for (MemoryAllocation& allocation : memoryAllocations(run.memory)) {
        if (block >= 0 && savedBlockOf(allocation, run.memory, step) == block) {
            out.push_back(std::move(allocation));
        }
    }
    return out;
}

nlohmann::json savedForBackwardJson(const SavedForBackward& saved) {
    nlohmann::json blocks = nlohmann::json::array();
    for (const auto& block : saved.blocks) {
        nlohmann::json top = nlohmann::json::array();
        for (const auto& op : block.top) {
            top.push_back({{"op", op.op}, {"bytes", op.bytes}, {"share", op.share}});
        }
        blocks.push_back({{"module", block.module},
                          {"bytes", block.bytes},
                          {"tensors", block.tensors},
                          {"top", top},
                          {"gradients", block.gradientBytes}});
    }
    return {{"step", saved.step}, {"saved_for_backward", blocks}};
}

std::string formatSavedForBackward(const SavedForBackward& saved) {
    std::ostringstream out;
    out << "Saved for backward per block (step " << saved.step
        << "; distinct storages the forward made that backward keeps):\n\n"
        << "| block | saved | tensors | largest producers | gradients |\n"
        << "|---|---|---|---|---|\n";
    for (const auto& block : saved.blocks) {
        out << "| " << block.module << " | " << formatBytes(double(block.bytes)) << " | "
            << block.tensors << " | ";
        for (size_t i = 0; i < block.top.size(); ++i) {
            char share[16];
            std::snprintf(share, sizeof share, "%.0f%%", block.top[i].share * 100);
            out << (i ? ", " : "") << block.top[i].op << " " << share;
        }
        out << " | " << formatBytes(double(block.gradientBytes)) << " |\n";
    }
    return out.str();
}

}  // namespace stepscope
