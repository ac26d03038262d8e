#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stepscope {

// Sums `addend` `count` times with LibTorch scalars, as the course's
// mixed-precision exercise does, for each pairing of accumulator and addend
// dtype. Shows why accumulations must be fp32: an fp16 sum stops growing once
// its spacing exceeds twice the addend.
struct AccumulationRow {
    std::string accumulator;  // "fp32", "fp16", "bf16"
    std::string addend;       // the addend's dtype before it is added
    double result = 0;
    double exact = 0;
    double absoluteError = 0;
};

std::vector<AccumulationRow> runAccumulationLab(double addend = 0.01, int64_t count = 1000);

}  // namespace stepscope
