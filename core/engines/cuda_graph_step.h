#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace stepscope {

// A CUDA step captured as one graph (--cuda-graph) and replayed once per
// measured step, so the host launches one graph instead of every kernel.
// Capture follows PyTorch's recipe for a whole network: it happens on a side
// stream (never the default one) after eager warm-up steps on that same
// stream, with static inputs and targets and the optimizer's step counters on
// the device (adamw-fused). The phases are timed by events recorded inside
// the graph (external event nodes), so a replay is timed as the GPU ran it.
class CudaGraphStep {
public:
    // The phases of one step, calling endOfPhase after each phase that runs;
    // returns the loss.
    using Phases = std::function<at::Tensor(const std::function<void()>& endOfPhase)>;

    // Captures `phases` on the current stream, which must not be the default
    // one (CudaSideStream). Throws std::runtime_error saying why where it
    // cannot: a LibTorch without CUDA, or an operation capture refuses.
    explicit CudaGraphStep(const Phases& phases);
    ~CudaGraphStep();
    CudaGraphStep(const CudaGraphStep&) = delete;
    CudaGraphStep& operator=(const CudaGraphStep&) = delete;

    // Replays the step and waits for it: each phase's milliseconds, in
    // order, then the total (as StepTimer::finish gives them).
    std::vector<double> replay();
    // The loss the graph writes on every replay.
    const at::Tensor& loss() const;
    // Kernel nodes in the captured graph: what each replay launches.
    int64_t kernelNodes() const;

private:
    struct Captured;
    std::unique_ptr<Captured> captured_;
};

// While alive, the current stream of `device` is one from the pool: the
// stream the warm-up, the capture and the replays share.
class CudaSideStream {
public:
    explicit CudaSideStream(const c10::Device& device);
    ~CudaSideStream();
    CudaSideStream(const CudaSideStream&) = delete;
    CudaSideStream& operator=(const CudaSideStream&) = delete;

private:
    struct Guard;
    std::unique_ptr<Guard> guard_;
};

}  // namespace stepscope
