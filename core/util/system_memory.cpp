#include "util/system_memory.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <optional>
#include <string>

namespace stepscope {

namespace {

constexpr int64_t kUnknown = std::numeric_limits<int64_t>::max();

// The number a one-number file holds ("max" and unreadable: nullopt).
std::optional<int64_t> numberIn(const char* path) {
    std::ifstream in(path);
    int64_t value = 0;
    if (in >> value && value >= 0) {
        return value;
    }
    return std::nullopt;
}

// "Key:   123 kB" of a /proc file, in bytes.
std::optional<int64_t> kibibytesOf(const char* path, const std::string& wanted) {
    std::ifstream in(path);
    std::string key;
    while (in >> key) {
        int64_t kibibytes = 0;
        if (key == wanted && in >> kibibytes && kibibytes >= 0 && kibibytes < (int64_t(1) << 53)) {
            return kibibytes * 1024;
        }
        in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
    return std::nullopt;
}

// What is left of `limit` after `used`; kUnknown without both.
int64_t roomUnder(std::optional<int64_t> limit, std::optional<int64_t> used) {
    if (!limit || !used) {
        return kUnknown;
    }
    return std::max<int64_t>(0, *limit - *used);
}

}  // namespace

int64_t memoryRoomBytes() {
    int64_t room = kibibytesOf("/proc/meminfo", "MemAvailable:").value_or(kUnknown);
    room = std::min(room, roomUnder(numberIn("/sys/fs/cgroup/memory.max"),
                                    numberIn("/sys/fs/cgroup/memory.current")));
    room = std::min(room, roomUnder(numberIn("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
                                    numberIn("/sys/fs/cgroup/memory/memory.usage_in_bytes")));
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        limit.rlim_cur < rlim_t(kUnknown)) {
        room = std::min(
            room, roomUnder(int64_t(limit.rlim_cur), kibibytesOf("/proc/self/status", "VmSize:")));
    }
    return room;
}

}  // namespace stepscope
