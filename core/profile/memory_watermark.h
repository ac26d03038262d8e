#pragma once

#include <c10/core/Device.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <cstdint>
#include <memory>

namespace stepscope {

// Bytes LibTorch allocates on one device while this object lives: current
// (net since construction) and peak. On CPU it listens to the allocator's
// reports (installed for this thread, inherited by autograd's threads) and
// must not overlap LibTorch's own profiler, which uses the same slot; on CUDA
// it reads the caching allocator's statistics.
class MemoryWatermark {
public:
    explicit MemoryWatermark(const c10::Device& device);
    ~MemoryWatermark();
    MemoryWatermark(const MemoryWatermark&) = delete;
    MemoryWatermark& operator=(const MemoryWatermark&) = delete;

    int64_t currentBytes() const;
    int64_t peakBytes() const;

private:
    struct Listener;
    c10::Device device_;
    std::shared_ptr<Listener> listener_;
    std::unique_ptr<c10::DebugInfoGuard> guard_;
    int64_t baseline_ = 0;
};

}  // namespace stepscope
