#include "model/checkpoint.h"

#include <ATen/core/Dict.h>
#include <ATen/core/ivalue.h>
#include <c10/core/GradMode.h>
#include <torch/serialize.h>

#include <sstream>
#include <stdexcept>

#include "model/transformer.h"
#include "util/atomic_file.h"

namespace stepscope {

namespace {

c10::IValue unpickle(const std::string& path) {
    const std::string contents = readFile(path);
    const std::vector<char> bytes(contents.begin(), contents.end());
    try {
        return torch::pickle_load(bytes);
    } catch (const std::exception& error) {
        throw std::runtime_error("'" + path + "' is not a file written by torch.save: " +
                                 std::string(error.what()).substr(0, 300));
    }
}

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

}  // namespace

StateDict readStateDict(const std::string& path) {
    c10::IValue root = unpickle(path);
    if (!root.isGenericDict()) {
        throw std::runtime_error("'" + path + "' holds a " + root.tagKind() +
                                 ", not a state dict (a dict of tensors)");
    }
    c10::impl::GenericDict dict = root.toGenericDict();
    for (const auto& entry : dict) {
        if (entry.key().isString() && entry.key().toStringRef() == "model" &&
            entry.value().isGenericDict()) {
            dict = entry.value().toGenericDict();  // a training checkpoint
            break;
        }
    }
    StateDict state;
    for (const auto& entry : dict) {
        if (!entry.key().isString()) {
            throw std::runtime_error("'" + path + "': a state dict key is not a string");
        }
        const std::string name = stripCompilePrefix(entry.key().toStringRef());
        if (!entry.value().isTensor()) {
            throw std::runtime_error("'" + path + "': entry '" + name + "' is a " +
                                     entry.value().tagKind() + ", not a tensor");
        }
        state[name] = entry.value().toTensor();
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
        for (const auto& problem : problems) {
            message += "\n  " + problem;
        }
        throw std::runtime_error(message);
    }
    c10::NoGradGuard noGrad;
    for (const auto& item : parameters) {
        item.value().copy_(state.at(item.key()));
    }
}

void saveStateDict(const TransformerLMImpl& model, const std::string& path) {
    c10::impl::GenericDict dict(c10::StringType::get(), c10::TensorType::get());
    for (const auto& item : model.named_parameters(/*recurse=*/true)) {
        dict.insert(item.key(), item.value().detach().cpu());
    }
    const std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
    writeFileAtomically(path, std::string(bytes.begin(), bytes.end()));
}

at::Tensor readTensor(const std::string& path) {
    c10::IValue value = unpickle(path);
    if (!value.isTensor()) {
        throw std::runtime_error("'" + path + "' holds a " + value.tagKind() + ", not a tensor");
    }
    return value.toTensor();
}

}  // namespace stepscope
