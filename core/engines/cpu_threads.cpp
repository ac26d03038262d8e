#include "engines/cpu_threads.h"

#include <ATen/Parallel.h>

namespace stepscope {

namespace {
// Initialised with the program's statics, after LibTorch's own (a library
// the program depends on is initialised first): nothing has set a count yet.
const int kDefaultThreads = at::get_num_threads();
}  // namespace

int libtorchDefaultThreads() {
    return kDefaultThreads;
}

int applyThreadCount(int requested) {
    const int wanted = requested > 0 ? requested : kDefaultThreads;
    if (at::get_num_threads() != wanted) {
        at::set_num_threads(wanted);
    }
    return at::get_num_threads();
}

}  // namespace stepscope
