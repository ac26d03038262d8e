#pragma once

#include <cstdint>
#include <string>

namespace stepscope {

// One operator or CUDA kernel as aggregated over the measured steps of a phase.
struct TimeRow {
    std::string name;      // "aten::linear", "MmBackward0", a kernel's demangled name
    std::string category;  // matmul, attention core, softmax, normalisation, elementwise,
                           // reduction, copy/cast, optimizer, other
    std::string phase;     // forward, backward, optimizer
    int64_t calls = 0;
    double totalMs = 0;  // host time for operators, device time for kernels
};

}  // namespace stepscope
