#include "profile/trace_range.h"

#ifdef STEPSCOPE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace stepscope {

namespace {
thread_local RangeListener* currentListener = nullptr;
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
