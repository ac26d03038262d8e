#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "results/run_result.h"

namespace stepscope {

// What this machine offers the engine, probed at run time so that a build
// with CUDA support still runs where no GPU or CUPTI is present.
struct DeviceInventory {
    std::string libtorchVersion;
    std::string libtorchCudaVersion;  // empty for a CPU-only LibTorch
    bool cudaAvailable = false;
    std::vector<std::string> cudaDevices;  // names, by index
    bool cudaKernelsBuilt = false;         // our kernels/ library was compiled in
    bool cuptiAvailable = false;
    std::string cuptiLibrary;  // the library that loaded, or why none did
    std::string cpuModel;
    int cpuThreads = 0;  // LibTorch's intra-op threads
};

DeviceInventory probeDevices();

// MemAvailable from /proc/meminfo, in bytes (0 when unreadable): what the
// CPU pre-flight compares a run's predicted peak with.
int64_t availableSystemMemory();
ValidationContext validationContext();
EnvironmentInfo captureEnvironment(const RunConfig& config);

}  // namespace stepscope
