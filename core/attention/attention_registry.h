#pragma once

#include <string>
#include <vector>

namespace stepscope {

// Names of the attention backends this build knows, for validation and
// the user interface; the torch-side factory lives in attention_backend.h.
std::vector<std::string> attentionBackendNames();

}  // namespace stepscope
