#pragma once

#include <c10/core/ScalarType.h>

#include <string>

namespace stepscope {

// The legacy typed-storage names torch.save writes ("FloatStorage", ...).
// Throws std::runtime_error for a dtype or name torch.save files do not use.
at::ScalarType storageDtype(const std::string& storageType);
std::string storageTypeName(at::ScalarType dtype);

}  // namespace stepscope
