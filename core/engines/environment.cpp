#include "engines/environment.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <torch/cuda.h>
#include <torch/version.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>

#include "attention/attention_registry.h"

#ifdef STEPSCOPE_HAVE_CUDA_KERNELS
#include "stepscope/kernels/device_query.h"
#endif

namespace stepscope {

namespace {

std::string readCpuModel() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) {
                return line.substr(line.find_first_not_of(' ', colon + 1));
            }
        }
    }
    return "unknown CPU";
}

std::string cudaDeviceName(int index) {
#ifdef STEPSCOPE_HAVE_CUDA_KERNELS
    return kernels::queryDevice(index).name;
#else
    return "CUDA device " + std::to_string(index);
#endif
}

std::string utcNow() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

}  // namespace

int64_t availableSystemMemory() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    int64_t kibibytes = 0;
    std::string unit;
    while (meminfo >> key >> kibibytes >> unit) {
        if (key == "MemAvailable:") {
            return kibibytes * 1024;
        }
    }
    return 0;
}

DeviceInventory probeDevices() {
    DeviceInventory inventory;
    inventory.libtorchVersion = TORCH_VERSION;
#ifdef STEPSCOPE_TORCH_CUDA_VERSION
    inventory.libtorchCudaVersion = STEPSCOPE_TORCH_CUDA_VERSION;
#endif
    inventory.cudaAvailable = torch::cuda::is_available();
    if (inventory.cudaAvailable) {
        for (int i = 0; i < static_cast<int>(torch::cuda::device_count()); ++i) {
            inventory.cudaDevices.push_back(cudaDeviceName(i));
        }
    }
#ifdef STEPSCOPE_HAVE_CUDA_KERNELS
    inventory.cudaKernelsBuilt = true;
#endif
    // CUPTI is loaded at run time by the kernel tracer; probe the same way.
    for (const char* library : {"libcupti.so.13", "libcupti.so"}) {
        if (void* handle = dlopen(library, RTLD_LAZY | RTLD_LOCAL)) {
            dlclose(handle);
            inventory.cuptiAvailable = true;
            inventory.cuptiLibrary = library;
            break;
        }
    }
    if (!inventory.cuptiAvailable) {
        const char* error = dlerror();
        inventory.cuptiLibrary = error ? error : "libcupti not found";
    }
    inventory.cpuModel = readCpuModel();
    inventory.cpuThreads = at::get_num_threads();
    return inventory;
}

ValidationContext validationContext() {
    ValidationContext context;
    context.cudaAvailable = torch::cuda::is_available();
    context.attentionBackends = attentionBackendNames();
    return context;
}

EnvironmentInfo captureEnvironment(const RunConfig& config) {
    EnvironmentInfo env;
    env.stepscopeVersion = STEPSCOPE_VERSION;
    env.libtorchVersion = TORCH_VERSION;
#ifdef STEPSCOPE_TORCH_CUDA_VERSION
    env.cudaVersion = STEPSCOPE_TORCH_CUDA_VERSION;
#endif
    env.cpuModel = readCpuModel();
    env.cpuThreads = at::get_num_threads();
    env.deviceName = config.device == DeviceKind::Cuda ? cudaDeviceName(0) : env.cpuModel;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    env.hostname = host;
    env.startedAt = utcNow();
    env.processId = static_cast<int>(getpid());
    const auto variable = [](const char* name) {
        const char* value = std::getenv(name);
        return std::string(value ? value : "");
    };
    env.slurmJobId = variable("SLURM_JOB_ID");
    env.slurmArrayJobId = variable("SLURM_ARRAY_JOB_ID");
    env.slurmArrayTaskId = variable("SLURM_ARRAY_TASK_ID");
    env.slurmNode = variable("SLURMD_NODENAME");
    return env;
}

}  // namespace stepscope
