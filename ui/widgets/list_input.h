#pragma once

#include <QString>

#include <cstdint>
#include <string>
#include <vector>

#include "config/run_config.h"

namespace stepscope::ui {

// Comma lists typed into the sweep and attention forms.
std::vector<std::string> splitList(const QString& text);
// Positive integers; a bad entry adds an error naming `field`.
std::vector<int64_t> positiveList(const QString& text, const std::string& field,
                                  std::vector<ConfigError>& errors);

}  // namespace stepscope::ui
