#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <vector>

#include "profile/memory_trace.h"

namespace at {
class Tensor;
}
namespace c10 {
class DebugInfoGuard;
}

namespace stepscope {

class RangeListenerScope;

// Receives every allocation and free LibTorch makes on one device while it
// lives (a c10::MemoryReportingInfoBase installed for this thread through
// DebugInfoGuard(PROFILER_STATE); autograd's threads inherit it), with the
// phase, step and module path the trace ranges say are under way (in
// backward, the autograd node being evaluated) and the operator that
// allocated (the innermost ATen op on this thread, from a thread-local
// RecordFunction callback; in backward the autograd node). It cannot run together with
// LibTorch's own profiler, which uses the same slot.
//
// Categories come from facts: the runner marks the storages that are
// parameters, inputs, gradients and optimizer state when they are; the rest
// is recomputed (made while a checkpointed forward runs again in backward,
// inside a RecomputeScope), activations (forward allocations alive when
// backward starts), temporaries (freed in the phase that made them) or other.
class MemoryTracker {
public:
    explicit MemoryTracker(const c10::Device& device);  // throws std::runtime_error
    ~MemoryTracker();
    MemoryTracker(const MemoryTracker&) = delete;
    MemoryTracker& operator=(const MemoryTracker&) = delete;

    // These tensors' storages are of `category` from now until they are freed.
    void mark(const std::vector<at::Tensor>& tensors, MemoryCategory category);
    int64_t eventCount() const;
    // Stops listening and returns the classified trace.
    MemoryTrace finish();

    struct State;

private:
    void stopOpCallback();

    c10::Device device_;
    uint64_t opCallback_ = 0;  // at::CallbackHandle
    std::shared_ptr<State> state_;
    std::unique_ptr<c10::DebugInfoGuard> guard_;
    std::unique_ptr<RangeListenerScope> listenerScope_;
};

}  // namespace stepscope
