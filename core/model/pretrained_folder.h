#pragma once

#include <optional>
#include <string>

#include "config/model_dims.h"

namespace stepscope {

// The course's from_pretrained folder: model_config.json (the model's keyword
// arguments: vocab_size, context_length, d_model, num_layers, num_heads, d_ff,
// rope_theta) beside model.pt (its state dict).
struct PretrainedFolder {
    std::string weightsFile;  // <folder>/model.pt
    ModelDims dims;
};

// The folder at `path`, or nullopt when `path` is not a directory. Throws
// std::runtime_error saying what was expected when it is a directory without
// those files or the config lacks a field.
std::optional<PretrainedFolder> readPretrainedFolder(const std::string& path);

// The model's dimensions from the text of a model_config.json (`configFile`
// names it in messages). Throws std::runtime_error naming the field and what
// it allows when the text is not JSON, not an object, lacks a field or is
// past the limits.
ModelDims pretrainedConfigDims(const std::string& text, const std::string& configFile);

// The file that holds the weights `path` names: a from_pretrained folder's
// model.pt, else `path` itself.
std::string weightsFileOf(const std::string& path);

}  // namespace stepscope
