#pragma once

#include <string>

namespace stepscope {

// The CUDA caching allocator's own record of a run, as
// torch.cuda.memory._record_memory_history() keeps it: recording while alive,
// write() saves the snapshot that torch.cuda.memory._dump_snapshot would
// (memory_viz opens it). Throws std::runtime_error where LibTorch was built
// without the history.
class CudaHistory {
public:
    CudaHistory();
    ~CudaHistory();
    CudaHistory(const CudaHistory&) = delete;
    CudaHistory& operator=(const CudaHistory&) = delete;
    void write(const std::string& path) const;
};

}  // namespace stepscope
