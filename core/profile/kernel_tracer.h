#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "profile/step_timeline.h"

namespace stepscope {

// One kernel, memcpy or memset as the GPU ran it, on the host's steady clock.
struct KernelActivity {
    SpanKind kind = SpanKind::Kernel;
    std::string name;  // demangled kernel name; "memcpy HtoD", "memset"
    uint32_t stream = 0;
    int64_t startNs = 0;
    int64_t endNs = 0;
    int64_t operatorId = -1;  // the operator tracer's id of the launching operator
    int64_t phaseTag = -1;    // what pushPhase() was given on the launching thread
    uint64_t graphNode = 0;   // CUPTI's id of the CUDA-graph node that ran it; 0 outside graphs
};

// Records every CUDA kernel, memcpy and memset through CUPTI's Activity API.
// CUPTI is loaded at run time (libcupti.so.13), so a machine without it, or
// without a GPU, still runs everything else. CUPTI's API callback notes, at
// each launch, the operator and phase under way on the launching thread, so
// each activity is tied to the operator and phase that launched it. A replayed
// CUDA graph's kernels are tied to the operator and phase that created their
// node during capture, and to the step of the replay. One tracer at a time,
// never together with LibTorch's own (Kineto) profiler: both use CUPTI.
class KernelTracer {
public:
    // Why tracing cannot start here, or nullopt when it can.
    static std::optional<std::string> unavailableReason();

    KernelTracer();  // throws std::runtime_error with unavailableReason()
    ~KernelTracer();
    KernelTracer(const KernelTracer&) = delete;
    KernelTracer& operator=(const KernelTracer&) = delete;

    // Correlation scopes of the calling thread (the launching thread). Phases
    // nest (a step's tag, then a phase's inside it): a pop restores the outer.
    void pushOperator(int64_t id);
    void popOperator();
    void pushPhase(int64_t tag);
    void popPhase();

    // Flushes CUPTI's buffers (the device must be synchronised first) and
    // returns what was recorded since the last call.
    std::vector<KernelActivity> collect();

    struct State;

private:
    std::unique_ptr<State> state_;
};

}  // namespace stepscope
