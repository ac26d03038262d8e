#pragma once

#include <string>

#include "profile/memory_trace.h"

namespace stepscope {

// The pickle PyTorch's memory_viz (pytorch.org/memory_viz) opens, built from
// our own events, so CPU runs open there too: "device_traces" with an
// "alloc" / "free_completed" entry per event (addr, size, stream, time_us,
// frames naming phase, step and module path, and the entry's category), and
// "segments" holding what was alive at the end. Throws std::invalid_argument
// for a run without a memory trace.
std::string memvizPickle(const MemoryTrace& trace);

}  // namespace stepscope
