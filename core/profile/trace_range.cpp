#include "profile/trace_range.h"

#ifdef STEPSCOPE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace stepscope {

namespace {
thread_local RangeListener* currentListener = nullptr;
}

const char* phaseName(int phase) {
    static const char* names[] = {"setup", "forward", "backward", "optimizer"};
    return phase >= 0 && phase < 4 ? names[phase] : names[0];
}

int phaseOfRange(const std::string& name) {
    for (int phase = 1; phase < 4; ++phase) {
        if (name == phaseName(phase)) {
            return phase;
        }
    }
    return 0;
}

std::optional<StepMark> stepMarkOf(const std::string& name) {
    if (name.rfind("step ", 0) == 0) {
        return StepMark{std::stoi(name.substr(5)), 0};
    }
    if (name == "bookkeeping") {
        return StepMark{std::nullopt, 0};
    }
    if (const int phase = phaseOfRange(name)) {
        return StepMark{std::nullopt, phase};
    }
    return std::nullopt;
}

bool isModuleRange(const std::string& name) {
    return name.rfind("layers.", 0) == 0 || name == "lm_head";
}

RangeListenerScope::RangeListenerScope(RangeListener* listener) : previous_(currentListener) {
    currentListener = listener;
}

RangeListenerScope::~RangeListenerScope() {
    currentListener = previous_;
}

RangeListener* RangeListenerScope::current() {
    return currentListener;
}

TraceRange::TraceRange(const std::string& name) {
#ifdef STEPSCOPE_HAVE_NVTX
    nvtxRangePushA(name.c_str());  // NVTX copies the message
#endif
    if (currentListener) {
        currentListener->onPush(name);
    }
}

TraceRange::~TraceRange() {
    if (currentListener) {
        currentListener->onPop();
    }
#ifdef STEPSCOPE_HAVE_NVTX
    nvtxRangePop();
#endif
}

}  // namespace stepscope
