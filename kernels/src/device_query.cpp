#include "stepscope/kernels/device_query.h"

#include <cuda_runtime_api.h>

namespace stepscope::kernels {

int deviceCount() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky "no driver" error
        return 0;
    }
    return count;
}

DeviceProperties queryDevice(int index) {
    DeviceProperties properties;
    cudaDeviceProp raw{};
    const cudaError_t status = cudaGetDeviceProperties(&raw, index);
    if (status != cudaSuccess) {
        cudaGetLastError();
        properties.error = cudaGetErrorString(status);
        properties.name = "CUDA device " + std::to_string(index);
        return properties;
    }
    properties.ok = true;
    properties.name = raw.name;
    properties.computeMajor = raw.major;
    properties.computeMinor = raw.minor;
    properties.multiprocessors = raw.multiProcessorCount;
    properties.totalMemoryBytes = raw.totalGlobalMem;
    return properties;
}

}  // namespace stepscope::kernels
