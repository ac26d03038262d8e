#pragma once

#include <cstddef>
#include <string>

namespace stepscope::kernels {

// Properties of a CUDA device through the CUDA runtime, for the run's
// environment record and the peak-FLOP/s lookup. Plain C++, no CUDA headers.
struct DeviceProperties {
    bool ok = false;    // false: no such device, or no driver (error says why)
    std::string error;  // the CUDA runtime's message when !ok
    std::string name;
    int computeMajor = 0;
    int computeMinor = 0;
    int multiprocessors = 0;
    std::size_t totalMemoryBytes = 0;
};

int deviceCount();  // 0 where there is no driver or no device
DeviceProperties queryDevice(int index);

}  // namespace stepscope::kernels
