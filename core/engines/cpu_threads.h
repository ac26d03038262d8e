#pragma once

namespace stepscope {

// LibTorch's intra-op thread count is one setting for the whole process
// (at::set_num_threads), and each new thread starts from the last count
// set. A run that asks for the default (threads 0) must not inherit the
// count of the run before it, so the default is kept from process start.

// The count LibTorch picks in a fresh process (OMP_NUM_THREADS, else the
// cores), read when the program loaded, before any run could set another.
int libtorchDefaultThreads();

// Sets the count a run asks for: `requested` when above 0, else the default.
// Returns the count now in effect on the calling thread.
int applyThreadCount(int requested);

}  // namespace stepscope
