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
    // Adding the addend once more leaves the sum as it is: it stopped growing.
    bool stalled = false;
};

std::vector<AccumulationRow> runAccumulationLab(double addend = 0.01, int64_t count = 1000);

// What the rows show, from the rows alone: which sums stopped growing and
// where, which drifted and by how much, which stayed within 0.1% of the
// exact sum, and the advice that follows ("accumulate in fp32" where the
// fp32 accumulators are the ones within). The app's note under the table
// and the CLI's line under its own.
std::string accumulationNote(const std::vector<AccumulationRow>& rows);

}  // namespace stepscope
