#pragma once

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

class TraceRange {
public:
    explicit TraceRange(const std::string& name);
    ~TraceRange();
    TraceRange(const TraceRange&) = delete;
    TraceRange& operator=(const TraceRange&) = delete;
};

}  // namespace stepscope
