#pragma once

#include <optional>
#include <string>

namespace stepscope {

// Marks the structure of a step (step, phase, layer, the parts of attention)
// as NVTX ranges, so a run under nsys shows it, and tells an in-process
// listener the same pushes and pops (the tests, and later tracers, use it).
// Without NVTX headers at build time only the listener sees them.
class RangeListener {
public:
    virtual ~RangeListener() = default;
    virtual void onPush(const std::string& name) = 0;
    virtual void onPop() = 0;
};

// Installs a listener for the current thread while alive.
class RangeListenerScope {
public:
    explicit RangeListenerScope(RangeListener* listener);
    static RangeListener* current();  // this thread's listener, or nullptr
    ~RangeListenerScope();
    RangeListenerScope(const RangeListenerScope&) = delete;
    RangeListenerScope& operator=(const RangeListenerScope&) = delete;

private:
    RangeListener* previous_;
};

// The tracers' phases: 0 setup (and anything outside a phase), 1 forward,
// 2 backward, 3 optimizer.
const char* phaseName(int phase);  // "setup", "forward", "backward", "optimizer"

// What a range the runner pushes says about the step under way: "step N"
// starts step N outside any phase, a phase name starts that phase,
// "bookkeeping" leaves the phases. Other ranges (layers, attention parts)
// say nothing.
struct StepMark {
    std::optional<int> step;  // set by "step N"
    int phase = 0;
};
std::optional<StepMark> stepMarkOf(const std::string& name);
int phaseOfRange(const std::string& name);  // 1..3 for a phase range, else 0
// The model's module ranges: "layers.3", "layers.3.attn", "layers.3.ffn", "lm_head".
bool isModuleRange(const std::string& name);

class TraceRange {
public:
    explicit TraceRange(const std::string& name);
    ~TraceRange();
    TraceRange(const TraceRange&) = delete;
    TraceRange& operator=(const TraceRange&) = delete;
};

}  // namespace stepscope
