#pragma once

#include <optional>
#include <string>

namespace stepscope {

// Writes to a temporary file beside `path`, then renames it over `path`, so a
// reader never sees a half-written file. Throws std::runtime_error on failure.
void writeFileAtomically(const std::string& path, const std::string& contents);

// Why writeFileAtomically(path, …) would fail, asked before long work makes
// what goes there: `path` is a folder, or the nearest folder above it that
// exists takes no new file (a probe file is made there and removed).
// nullopt where it can be written.
std::optional<std::string> whyCannotWriteFile(const std::string& path);

std::string readFile(const std::string& path);  // throws std::runtime_error

}  // namespace stepscope
