#include <cstdint>

#include "stepscope/kernels/fill.h"

namespace stepscope::kernels {

namespace {
__global__ void fillWordsKernel(std::uint32_t* words, std::size_t count, std::uint32_t pattern) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += stride) {
        words[i] = pattern;
    }
}
}  // namespace

std::string fillWords(void* device_pointer, std::size_t count, std::uint32_t pattern,
                      void* stream) {
    if (count == 0) {
        return {};
    }
    constexpr int kThreads = 256;
    const std::size_t wanted = (count + kThreads - 1) / kThreads;
    const unsigned blocks = static_cast<unsigned>(wanted < 65535 ? wanted : 65535);
    fillWordsKernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<std::uint32_t*>(device_pointer), count, pattern);
    const cudaError_t status = cudaGetLastError();
    return status == cudaSuccess ? std::string() : std::string(cudaGetErrorString(status));
}

}  // namespace stepscope::kernels
