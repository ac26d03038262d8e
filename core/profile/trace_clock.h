#pragma once

#include <chrono>
#include <cstdint>

namespace stepscope {

// The one clock every tracer stamps with (CUPTI is handed it too), in ns.
inline int64_t traceClockNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace stepscope
