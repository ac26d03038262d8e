#pragma once

#include <string>
#include <vector>

namespace stepscope {

// "a, b, c": how messages list the allowed values.
std::string joinNames(const std::vector<std::string>& names);

}  // namespace stepscope
