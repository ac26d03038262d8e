#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <memory>
#include <vector>

namespace stepscope {

// Times the phases of one step. On CPU a steady clock; on CUDA events
// recorded on the current stream, read after one synchronisation at the end
// of the step so that the phases do not stall the GPU.
class StepTimer {
public:
    virtual ~StepTimer() = default;
    virtual void start() = 0;
    virtual void mark() = 0;  // end of the current phase
    // Milliseconds of each phase marked since start(), in order, plus the total last.
    virtual std::vector<double> finish() = 0;
};

std::unique_ptr<StepTimer> makeStepTimer(const at::Device& device);

}  // namespace stepscope
