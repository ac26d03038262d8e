#include "engines/build_info.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <torch/cuda.h>
#include <torch/version.h>

namespace stepscope {

std::string loadedLibtorchPath() {
    // at::get_num_threads lives in libtorch_cpu: the dynamic loader's name
    // for the object holding it is the path it loaded.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&at::get_num_threads), &info) != 0 && info.dli_fname) {
        return info.dli_fname;
    }
    return {};
}

std::string versionText(const std::string& program) {
    std::string text = program + " (StepScope) " + STEPSCOPE_VERSION + "\n";
    text += "LibTorch " TORCH_VERSION;
    const std::string cudaVersion = STEPSCOPE_TORCH_CUDA_VERSION;
    text += cudaVersion.empty() ? " (CPU only)" : " (with CUDA " + cudaVersion + ")";
    const std::string path = loadedLibtorchPath();
    text += ", loaded from " + (path.empty() ? std::string("an unknown place") : path) + "\n";
    if (cudaVersion.empty()) {
        text += "CUDA: no (this LibTorch has no CUDA)";
    } else if (torch::cuda::is_available()) {
        const auto devices = torch::cuda::device_count();
        text += "CUDA: yes, " + std::to_string(devices) + (devices == 1 ? " device" : " devices");
    } else {
        text += "CUDA: no device on this machine (the CPU runs)";
    }
    return text;
}

}  // namespace stepscope
