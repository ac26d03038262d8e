#pragma once

// How much more memory this process may take, for readers that size a
// buffer from what a file declares (a zip entry's size, a gzip stream):
// they refuse before allocating rather than fail after (docs/limits.md).

#include <cstdint>

namespace stepscope {

// The least of: MemAvailable (/proc/meminfo), the room left under this
// process's memory cgroup (v2 memory.max − memory.current, or v1's
// limit_in_bytes − usage_in_bytes), and the room left under its address-space
// limit (RLIMIT_AS, `ulimit -v`, less VmSize). INT64_MAX when none can be read.
int64_t memoryRoomBytes();

}  // namespace stepscope
