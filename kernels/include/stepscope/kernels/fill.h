#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace stepscope::kernels {

// Fills `count` 32-bit words at `device_pointer` with `pattern` on `stream`
// (a cudaStream_t, or nullptr for the default stream). Kernel tests poison
// output buffers with it (0x7FC00000 is a float NaN) to prove every element
// is overwritten. Returns an empty string on success, else the CUDA error.
std::string fillWords(void* device_pointer, std::size_t count, std::uint32_t pattern, void* stream);

}  // namespace stepscope::kernels
