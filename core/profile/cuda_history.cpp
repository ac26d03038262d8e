#include "profile/cuda_history.h"

#if __has_include(<torch/csrc/cuda/memory_snapshot.h>)
#include <torch/csrc/cuda/memory_snapshot.h>
#define STEPSCOPE_HAS_CUDA_SNAPSHOT 1
#else
#define STEPSCOPE_HAS_CUDA_SNAPSHOT 0
#endif

#include <optional>
#include <stdexcept>

#include "util/atomic_file.h"

namespace stepscope {

CudaHistory::CudaHistory() {
#if STEPSCOPE_HAS_CUDA_SNAPSHOT
    // std::optional<std::string>, not a string literal: a const char* picks the bool overload.
    torch::cuda::_record_memory_history(std::optional<std::string>("all"),
                                        std::optional<std::string>("all"), "python");
#else
    throw std::runtime_error("cuda-snapshot: this LibTorch has no CUDA memory history");
#endif
}

CudaHistory::~CudaHistory() {
#if STEPSCOPE_HAS_CUDA_SNAPSHOT
    torch::cuda::_record_memory_history(std::optional<std::string>());
#endif
}

void CudaHistory::write(const std::string& path) const {
#if STEPSCOPE_HAS_CUDA_SNAPSHOT
    writeFileAtomically(path, torch::cuda::_memory_snapshot_pickled());
#else
    (void)path;
#endif
}

}  // namespace stepscope
