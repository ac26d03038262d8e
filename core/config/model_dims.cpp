#include "config/model_dims.h"

namespace stepscope {

namespace {
ModelDims preset(const char* name, int64_t dModel, int64_t dFf, int64_t layers, int64_t heads,
                 int64_t vocabSize = 10000, int64_t maxContext = 2048) {
    ModelDims dims;
    dims.name = name;
    dims.dModel = dModel;
    dims.dFf = dFf;
    dims.layers = layers;
    dims.heads = heads;
    dims.vocabSize = vocabSize;
    dims.maxContext = maxContext;
    return dims;
}
}  // namespace

const std::vector<ModelDims>& modelPresets() {
    static const std::vector<ModelDims> presets = {
        preset("nano", 64, 256, 2, 4),
        preset("tiny", 128, 512, 4, 4),
        preset("small", 768, 3072, 12, 12),
        preset("medium", 1024, 4096, 24, 16),
        preset("large", 1280, 5120, 36, 20),
        preset("xl", 1600, 6400, 48, 25),
        preset("2.7B", 2560, 10240, 32, 32),
        preset("10b", 4608, 12288, 50, 36),
        preset("leaderboard", 4096, 11008, 34, 32, 151936, 32768),
    };
    return presets;
}

std::optional<ModelDims> findPreset(const std::string& name) {
    for (const auto& dims : modelPresets()) {
        if (dims.name == name) {
            return dims;
        }
    }
    return std::nullopt;
}

std::vector<std::string> presetNames() {
    std::vector<std::string> names;
    for (const auto& dims : modelPresets()) {
        names.push_back(dims.name);
    }
    return names;
}

std::string customModelName(const ModelDims& dims) {
    return "custom-d" + std::to_string(dims.dModel) + "-ff" + std::to_string(dims.dFf) + "-l" +
           std::to_string(dims.layers) + "-h" + std::to_string(dims.heads);
}

int64_t parameterCount(const ModelDims& dims) {
    const int64_t d = dims.dModel;
    const int64_t perLayer = 4 * d * d + 3 * d * dims.dFf + 2 * d;
    return 2 * dims.vocabSize * d + dims.layers * perLayer + d;
}

}  // namespace stepscope
