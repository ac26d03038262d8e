#include "engines/cpu_allocator.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace stepscope {

void keepFreedMemoryForSteadySteps() {
#if defined(__GLIBC__)
    static const bool applied = [] {
        // Blocks up to 32 MiB (glibc's largest allowed threshold) come from the
        // heap, and the heap is trimmed only past 1 GiB of free space at its top.
        mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
        mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
        return true;
    }();
    (void)applied;
#endif
}

}  // namespace stepscope
