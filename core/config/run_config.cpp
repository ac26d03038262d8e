#include "config/run_config.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string_view>

#include "util/strings.h"

namespace stepscope {

InvalidConfigError::InvalidConfigError(std::vector<ConfigError> errors)
    : std::invalid_argument(describe(errors)), errors_(std::move(errors)) {}

namespace {

template <typename Enum>
struct EnumName {
    Enum value;
    const char* name;
};

constexpr EnumName<RunMode> kModes[] = {{RunMode::Inference, "inference"},
                                        {RunMode::Forward, "forward"},
                                        {RunMode::ForwardBackward, "forward-backward"},
                                        {RunMode::TrainStep, "train-step"}};
constexpr EnumName<Precision> kPrecisions[] = {
    {Precision::Fp32, "fp32"}, {Precision::Bf16, "bf16"}, {Precision::Fp16, "fp16"}};
constexpr EnumName<DeviceKind> kDevices[] = {{DeviceKind::Cpu, "cpu"}, {DeviceKind::Cuda, "cuda"}};
constexpr EnumName<Engine> kEngines[] = {{Engine::LibTorch, "libtorch"},
                                         {Engine::PyTorch, "pytorch"},
                                         {Engine::PyTorchCompile, "pytorch-compile"}};
constexpr EnumName<LossKind> kLosses[] = {{LossKind::Full, "full"}, {LossKind::Chunked, "chunked"}};
constexpr EnumName<OptimizerKind> kOptimizers[] = {{OptimizerKind::AdamW, "adamw"},
                                                   {OptimizerKind::AdamWForeach, "adamw-foreach"},
                                                   {OptimizerKind::AdamWFused, "adamw-fused"}};

template <typename Enum, size_t N>
std::string nameOf(const EnumName<Enum> (&table)[N], Enum value) {
    for (const auto& entry : table) {
        if (entry.value == value) {
            return entry.name;
        }
    }
    return "?";
}

template <typename Enum, size_t N>
std::optional<Enum> parseName(const EnumName<Enum> (&table)[N], const std::string& text) {
    for (const auto& entry : table) {
        if (text == entry.name) {
            return entry.value;
        }
    }
    return std::nullopt;
}

template <typename Enum, size_t N>
std::vector<std::string> namesOf(const EnumName<Enum> (&table)[N]) {
    std::vector<std::string> names;
    for (const auto& entry : table) {
        names.emplace_back(entry.name);
    }
    return names;
}

bool isPythonName(std::string_view text) {
    if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front()))) {
        return false;
    }
    return std::all_of(text.begin(), text.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

}  // namespace

bool isPythonTarget(const std::string& target) {
    const size_t colon = target.find(':');
    if (colon == std::string::npos || !isPythonName(std::string_view(target).substr(colon + 1))) {
        return false;
    }
    const std::string_view module = std::string_view(target).substr(0, colon);
    size_t start = 0;
    while (true) {
        const size_t dot = module.find('.', start);
        if (!isPythonName(
                module.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
            return false;
        }
        if (dot == std::string_view::npos) {
            return true;
        }
        start = dot + 1;
    }
}

std::string pythonTargetName(const std::string& target) {
    const size_t colon = target.find(':');
    return colon == std::string::npos ? std::string() : target.substr(colon + 1);
}

std::string toString(RunMode mode) {
    return nameOf(kModes, mode);
}
std::string toString(Precision precision) {
    return nameOf(kPrecisions, precision);
}
std::string toString(DeviceKind device) {
    return nameOf(kDevices, device);
}
std::string toString(Engine engine) {
    return nameOf(kEngines, engine);
}
std::optional<Engine> parseEngine(const std::string& text) {
    return parseName(kEngines, text);
}
std::string toString(LossKind loss) {
    return nameOf(kLosses, loss);
}
std::optional<LossKind> parseLossKind(const std::string& text) {
    return parseName(kLosses, text);
}
const std::vector<std::string>& lossNames() {
    static const auto names = namesOf(kLosses);
    return names;
}
std::string toString(OptimizerKind optimizer) {
    return nameOf(kOptimizers, optimizer);
}
std::optional<OptimizerKind> parseOptimizerKind(const std::string& text) {
    return parseName(kOptimizers, text);
}
const std::vector<std::string>& optimizerNames() {
    static const auto names = namesOf(kOptimizers);
    return names;
}
const std::vector<std::string>& engineNames() {
    static const auto names = namesOf(kEngines);
    return names;
}
const std::vector<std::string>& compileModeNames() {
    static const std::vector<std::string> names{"default", "reduce-overhead", "max-autotune"};
    return names;
}
const std::vector<std::string>& workerAttentionBackends() {
    static const std::vector<std::string> names{"naive", "sdpa", "flash-pytorch", "flash-triton"};
    return names;
}
const std::vector<std::string>& pythonAttentionBackends() {
    static const std::vector<std::string> names{"flash-pytorch", "flash-triton"};
    return names;
}
std::optional<RunMode> parseRunMode(const std::string& text) {
    return parseName(kModes, text);
}
std::optional<Precision> parsePrecision(const std::string& text) {
    return parseName(kPrecisions, text);
}
std::optional<DeviceKind> parseDeviceKind(const std::string& text) {
    return parseName(kDevices, text);
}
const std::vector<std::string>& runModeNames() {
    static const auto names = namesOf(kModes);
    return names;
}
const std::vector<std::string>& precisionNames() {
    static const auto names = namesOf(kPrecisions);
    return names;
}
const std::vector<std::string>& deviceNames() {
    static const auto names = namesOf(kDevices);
    return names;
}

bool hasBackward(RunMode mode) {
    return mode == RunMode::ForwardBackward || mode == RunMode::TrainStep;
}
bool hasOptimizer(RunMode mode) {
    return mode == RunMode::TrainStep;
}

std::string describe(const std::vector<ConfigError>& errors) {
    std::ostringstream out;
    for (const auto& error : errors) {
        out << error.field << ": " << error.message << "\n";
    }
    return out.str();
}

}  // namespace stepscope
