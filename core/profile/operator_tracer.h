#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stepscope {

// One operator (or autograd node) as aggregated over the measured steps.
struct OperatorRow {
    std::string name;      // "aten::linear", "MmBackward0", …
    std::string category;  // matmul, attention core, softmax, normalisation, elementwise,
                           // reduction, copy/cast, optimizer, other
    std::string phase;     // forward, backward, optimizer
    int64_t calls = 0;
    double totalMs = 0;  // host time, summed over the measured steps
};

std::string operatorCategory(const std::string& name, const std::string& phase);

// Records every top-level operator LibTorch dispatches (nested calls are part
// of their caller's time) through RecordFunction callbacks, attributed to the
// phase and step the trace ranges say are under way. One tracer at a time.
class OperatorTracer {
public:
    OperatorTracer();
    ~OperatorTracer();
    OperatorTracer(const OperatorTracer&) = delete;
    OperatorTracer& operator=(const OperatorTracer&) = delete;

    // Rows for steps >= firstMeasuredStep, sorted by total time, largest first.
    std::vector<OperatorRow> aggregate(int firstMeasuredStep) const;
    int64_t eventCount() const;

    struct State;

private:
    std::unique_ptr<State> state_;
};

}  // namespace stepscope
