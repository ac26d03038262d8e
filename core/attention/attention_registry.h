#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/attention_options.h"

namespace stepscope {

class AttentionBackend;

// Names of the attention backends this build knows, for validation and
// the user interface.
std::vector<std::string> attentionBackendNames();

// The backend of that name. Throws std::invalid_argument naming the allowed
// backends for an unknown name, or the option that is out of range.
std::unique_ptr<AttentionBackend> makeAttentionBackend(const std::string& name,
                                                       const AttentionOptions& options = {});

}  // namespace stepscope
