#include "model/pretrained_folder.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

#include "config/limits.h"
#include "results/json_text.h"

namespace stepscope {

namespace {

constexpr const char* kExpected =
    "expected a file written by torch.save (a state dict or a training checkpoint), or the "
    "course's from_pretrained folder holding model_config.json and model.pt";

// One of the model's numbers, a whole number through the one checked
// conversion (1.5 and 1e300 are not), named as the course's config names it.
int64_t configField(const nlohmann::json& config, const std::string& file, const char* key) {
    const auto found = config.find(key);
    if (found == config.end()) {
        throw std::runtime_error("'" + file + "' has no whole-number \"" + key +
                                 "\" (the course's config names vocab_size, context_length, "
                                 "d_model, num_layers, num_heads and d_ff)");
    }
    std::string problem;
    const std::optional<int64_t> value = jsonInteger(*found, problem);
    if (!value) {
        throw std::runtime_error("'" + file + "': \"" + key + "\" " + problem +
                                 " (a whole number of the model's)");
    }
    return *value;
}

// A model's keyword arguments are a few hundred bytes: a bigger file is not
// read whole into memory.
constexpr std::uintmax_t kConfigBytesLimit = 1 << 20;

}  // namespace

std::optional<PretrainedFolder> readPretrainedFolder(const std::string& path) {
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) {
        return std::nullopt;
    }
    const std::filesystem::path folder(path);
    const std::string configFile = (folder / "model_config.json").string();
    PretrainedFolder pretrained;
    pretrained.weightsFile = (folder / "model.pt").string();
    std::vector<std::string> missing;
    for (const auto& file : {configFile, pretrained.weightsFile}) {
        if (!std::filesystem::is_regular_file(file, error)) {
            missing.push_back(std::filesystem::path(file).filename().string());
        }
    }
    if (!missing.empty()) {
        throw std::runtime_error("'" + path + "' is a directory without " + missing.front() +
                                 (missing.size() > 1 ? " and " + missing.back() : "") + "; " +
                                 kExpected);
    }
    std::ifstream in(configFile, std::ios::binary);
    const auto size = std::filesystem::file_size(configFile, error);
    if (!in || error) {
        throw std::runtime_error("'" + configFile + "' cannot be read");
    }
    if (size > kConfigBytesLimit) {
        throw std::runtime_error("'" + configFile + "' is " + std::to_string(size) +
                                 " bytes; a model's keyword arguments fit in " +
                                 std::to_string(kConfigBytesLimit) + " bytes");
    }
    pretrained.dims = pretrainedConfigDims(
        std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()),
        configFile);
    return pretrained;
}

ModelDims pretrainedConfigDims(const std::string& text, const std::string& configFile) {
    nlohmann::json config;
    try {
        config = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& parseError) {
        throw std::runtime_error("'" + configFile + "': " + jsonParseProblem(parseError, text));
    }
    if (!config.is_object()) {
        throw std::runtime_error("'" + configFile +
                                 "' holds no JSON object of the model's "
                                 "keyword arguments");
    }
    ModelDims dims;
    dims.vocabSize = configField(config, configFile, "vocab_size");
    dims.maxContext = configField(config, configFile, "context_length");
    dims.dModel = configField(config, configFile, "d_model");
    dims.layers = configField(config, configFile, "num_layers");
    dims.heads = configField(config, configFile, "num_heads");
    dims.dFf = configField(config, configFile, "d_ff");
    if (const auto theta = config.find("rope_theta"); theta != config.end()) {
        if (!theta->is_number()) {
            throw std::runtime_error("'" + configFile +
                                     "': \"rope_theta\" must be a number (RoPE's base; the "
                                     "course uses 10000)");
        }
        dims.ropeTheta = theta->get<double>();  // its range: the limits below
    }
    // The course's names for the fields the limits name as a run file does.
    static const std::map<std::string, std::string> courseNames{
        {"vocab", "vocab_size"}, {"max_context", "context_length"},
        {"d_model", "d_model"},  {"layers", "num_layers"},
        {"heads", "num_heads"},  {"d_ff", "d_ff"}};
    for (const auto& problem : modelLimitProblems(dims)) {
        const auto course = courseNames.find(problem.field);
        throw std::runtime_error("'" + configFile + "': \"" +
                                 (course == courseNames.end() ? problem.field : course->second) +
                                 "\" " + problem.message);
    }
    dims.name = customModelName(dims);
    return dims;
}

std::string weightsFileOf(const std::string& path) {
    const auto folder = readPretrainedFolder(path);
    return folder ? folder->weightsFile : path;
}

}  // namespace stepscope
