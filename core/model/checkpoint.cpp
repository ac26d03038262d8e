#include "model/checkpoint.h"

#include <c10/core/GradMode.h>

#include <sstream>
#include <stdexcept>

#include "interop/torch_save_reader.h"
#include "interop/torch_save_writer.h"
#include "model/pretrained_folder.h"
#include "model/transformer.h"

namespace stepscope {

namespace {

std::string stripCompilePrefix(std::string name) {
    const std::string prefix = "_orig_mod.";
    while (name.rfind(prefix, 0) == 0) {
        name.erase(0, prefix.size());
    }
    return name;
}

std::string shapeText(at::IntArrayRef sizes) {
    std::ostringstream out;
    out << sizes;
    return out.str();
}

const at::Tensor& tensorNamed(const StateDict& state, const std::string& name,
                              const std::string& path) {
    const auto found = state.find(name);
    if (found == state.end() || found->second.dim() < 1) {
        throw std::runtime_error("'" + path + "' has no tensor '" + name +
                                 "', so the model's shape cannot be read from it; give the shape "
                                 "with --model or --d-model, --d-ff, --layers and --heads");
    }
    return found->second;
}

}  // namespace

StateDict readStateDict(const std::string& path) {
    const PyValue root = readTorchSave(weightsFileOf(path));
    const PyDict* dict = root.asDict();
    if (!dict) {
        throw std::runtime_error("'" + path + "' holds a " + root.typeName() +
                                 ", not a state dict (a dict of tensors)");
    }
    for (const auto& [key, value] : dict->items) {
        const std::string* name = key.asString();
        // A training checkpoint: the state dict under "model" (the course's
        // save_checkpoint) or "model_state_dict" (a common convention).
        if (name && (*name == "model" || *name == "model_state_dict") && value.asDict()) {
            dict = value.asDict();
            break;
        }
    }
    StateDict state;
    for (const auto& [key, value] : dict->items) {
        const std::string* rawName = key.asString();
        if (!rawName) {
            throw std::runtime_error("'" + path + "': a state dict key is a " + key.typeName() +
                                     ", not a string");
        }
        const std::string name = stripCompilePrefix(*rawName);
        const at::Tensor* tensor = value.asTensor();
        if (!tensor) {
            throw std::runtime_error("'" + path + "': entry '" + name + "' is a " +
                                     value.typeName() + ", not a tensor");
        }
        state[name] = *tensor;
    }
    return state;
}

void loadStateDict(TransformerLMImpl& model, const StateDict& state) {
    const auto parameters = model.named_parameters(/*recurse=*/true);
    // Check everything first so that a bad file leaves the model as it was.
    std::vector<std::string> problems;
    for (const auto& item : parameters) {
        const auto found = state.find(item.key());
        if (found == state.end()) {
            problems.push_back("missing tensor '" + item.key() + "' (expected shape " +
                               shapeText(item.value().sizes()) + ")");
        } else if (found->second.sizes() != item.value().sizes()) {
            problems.push_back("tensor '" + item.key() + "' has shape " +
                               shapeText(found->second.sizes()) + ", the model expects " +
                               shapeText(item.value().sizes()));
        } else if (!found->second.is_floating_point()) {
            problems.push_back("tensor '" + item.key() + "' is not floating point");
        }
    }
    for (const auto& [name, tensor] : state) {
        if (!parameters.contains(name)) {
            problems.push_back("unexpected tensor '" + name + "' (shape " +
                               shapeText(tensor.sizes()) + ") that the model does not have");
        }
    }
    if (!problems.empty()) {
        std::string message = "the checkpoint does not match the model:";
        constexpr size_t kShown = 12;
        for (size_t i = 0; i < problems.size() && i < kShown; ++i) {
            message += "\n  " + problems[i];
        }
        if (problems.size() > kShown) {
            message += "\n  … and " + std::to_string(problems.size() - kShown) + " more";
        }
        throw std::runtime_error(message);
    }
    c10::NoGradGuard noGrad;
    for (const auto& item : parameters) {
        item.value().copy_(state.at(item.key()));
    }
}

void saveStateDict(const TransformerLMImpl& model, const std::string& path) {
    std::vector<std::pair<std::string, at::Tensor>> tensors;
    for (const auto& item : model.named_parameters(/*recurse=*/true)) {
        tensors.emplace_back(item.key(), item.value());
    }
    writeTorchSaveStateDict(path, tensors);
}

at::Tensor readTensor(const std::string& path) {
    const PyValue value = readTorchSave(path);
    const at::Tensor* tensor = value.asTensor();
    if (!tensor) {
        throw std::runtime_error("'" + path + "' holds a " + value.typeName() + ", not a tensor");
    }
    return *tensor;
}

ModelDims weightsShape(const std::string& path, int64_t heads) {
    if (auto folder = readPretrainedFolder(path)) {
        if (heads > 0) {
            folder->dims.heads = heads;
        }
        return folder->dims;
    }
    const StateDict state = readStateDict(path);
    ModelDims dims;
    const at::Tensor& embedding = tensorNamed(state, "token_embeddings.weight", path);
    dims.vocabSize = embedding.size(0);
    dims.dModel = embedding.dim() > 1 ? embedding.size(1) : 0;
    dims.dFf = tensorNamed(state, "layers.0.ffn.w1.weight", path).size(0);
    while (state.count("layers." + std::to_string(dims.layers) + ".ln1.weight")) {
        ++dims.layers;
    }
    dims.heads = heads;
    for (const auto& preset : modelPresets()) {
        if (preset.dModel == dims.dModel && preset.dFf == dims.dFf &&
            preset.layers == dims.layers && (heads <= 0 || heads == preset.heads)) {
            dims.heads = preset.heads;
            dims.name = preset.name;
        }
    }
    if (dims.heads <= 0) {
        throw std::runtime_error(
            "'" + path + "' gives d_model " + std::to_string(dims.dModel) + ", d_ff " +
            std::to_string(dims.dFf) + ", " + std::to_string(dims.layers) + " layers and vocab " +
            std::to_string(dims.vocabSize) +
            ", but a state dict does not say the number of heads; give --heads");
    }
    if (dims.name == ModelDims{}.name) {
        dims.name = customModelName(dims);
    }
    return dims;
}

}  // namespace stepscope
