#pragma once

#include <string>

namespace stepscope {

// Writes to a temporary file beside `path`, then renames it over `path`, so a
// reader never sees a half-written file. Throws std::runtime_error on failure.
void writeFileAtomically(const std::string& path, const std::string& contents);

std::string readFile(const std::string& path);  // throws std::runtime_error

}  // namespace stepscope
