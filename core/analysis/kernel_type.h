#pragma once

// HTA's kernel types, from a device event's name: what every analysis of a
// trace sorts kernels by (hta.utils.utils.get_kernel_type).

#include <cstdint>
#include <string_view>

namespace stepscope {

enum class KernelType : uint8_t { Computation, Communication, Memory, Other };
std::string_view toString(KernelType type);  // "COMPUTATION", ...
KernelType kernelTypeOf(std::string_view name);

}  // namespace stepscope
