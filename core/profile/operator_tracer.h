#pragma once

// core/profile: instruments and the raw records they produce. The operator
// tracer (here), the kernel and memory tracers, trace ranges, the memory
// trace and the step timeline, the CUDA allocator's history. Includes only
// util/ (and LibTorch).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "profile/step_timeline.h"
#include "profile/time_row.h"

namespace stepscope {

class KernelTracer;

std::string operatorCategory(const std::string& name, const std::string& phase);
// A kernel's category from its name, falling back to its launching operator's.
std::string kernelCategory(const std::string& kernel, const std::string& operatorCategory,
                           const std::string& phase);

// Measured forward time of one FLOP group (see flop_groups.h), per step.
struct GroupTime {
    std::string group;
    double msPerStep = 0;
};

// Records every top-level operator LibTorch dispatches (nested calls are part
// of their caller's time) through RecordFunction callbacks, with the phase,
// step and module path the trace ranges say are under way, its thread and
// host duration. With a kernel tracer it pushes each operator's id as CUPTI
// external correlation, so kernels are attributed to the operator that
// launched them. One tracer at a time. Recording costs no heap allocation per
// operator: names are interned and events are plain records.
class OperatorTracer {
public:
    explicit OperatorTracer(KernelTracer* kernels = nullptr);
    ~OperatorTracer();
    OperatorTracer(const OperatorTracer&) = delete;
    OperatorTracer& operator=(const OperatorTracer&) = delete;

    // Rows for steps >= firstMeasuredStep, sorted by total time, largest first.
    std::vector<TimeRow> aggregate(int firstMeasuredStep) const;
    int64_t eventCount() const;

    // Collects the kernel tracer's activities (synchronise the device first).
    void collectKernels();
    std::vector<TimeRow> aggregateKernels(int firstMeasuredStep) const;

    // Forward time per FLOP group over the measured steps: kernel time where
    // kernels were traced, host time otherwise.
    std::vector<GroupTime> forwardGroupTimes(int firstMeasuredStep) const;

    // Ranges, operators and kernels of one step, relative to its start.
    StepTimeline timeline(int step) const;

    struct State;

private:
    std::unique_ptr<State> state_;
};

// The group of a forward operator, from its category and the module path the
// trace ranges gave it ("layers.3.attn", "layers.3.attn/attention softmax").
std::string flopGroupOf(const std::string& category, const std::string& modulePath);

}  // namespace stepscope
