#include "estimate/flop_groups.h"

#include <algorithm>

namespace stepscope {

namespace {

const char* kGroupOrder[] = {
    "attention projections", "attention q·kᵀ", "attention softmax", "attention ·v",
    "attention core",        "MLP matmuls",    "LM head",           "other"};

}  // namespace

double forwardGroupFlops(const RunConfig& config, const std::string& group) {
    const ModelDims& m = config.model;
    const double tokens = double(config.batchSize) * double(config.contextLength);
    const double d = double(m.dModel);
    const double t = double(config.contextLength);
    const double layers = double(m.layers);
    if (group == "attention projections") {
        return layers * 8 * tokens * d * d;
    }
    if (group == "attention q·kᵀ" || group == "attention ·v") {
        return layers * 2 * tokens * t * d;
    }
    if (group == "attention softmax") {
        return layers * 5 * double(config.batchSize) * double(m.heads) * t * t;
    }
    if (group == "attention core") {
        return layers * 4 * tokens * t * d;
    }
    if (group == "MLP matmuls") {
        return layers * 6 * tokens * d * double(m.dFf);
    }
    if (group == "LM head") {
        return 2 * tokens * d * double(m.vocabSize);
    }
    return 0;
}

std::vector<FlopGroupRow> flopGroups(const RunConfig& config, const std::vector<GroupTime>& times) {
    std::vector<FlopGroupRow> rows;
    for (const char* group : kGroupOrder) {
        const auto time = std::find_if(times.begin(), times.end(),
                                       [group](const GroupTime& t) { return t.group == group; });
        if (time == times.end()) {
            continue;
        }
        FlopGroupRow row;
        row.group = group;
        row.flopsPerStep = forwardGroupFlops(config, group);
        row.msPerStep = time->msPerStep;
        if (row.msPerStep > 0 && row.flopsPerStep > 0) {
            row.achievedFlopsPerSecond = row.flopsPerStep / (row.msPerStep / 1e3);
        }
        rows.push_back(row);
    }
    return rows;
}

}  // namespace stepscope
