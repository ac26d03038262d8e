#pragma once

// core/estimate: what a config will cost before it runs. FLOPs and device
// peaks (here), the memory estimate and the CPU pre-flight
// (memory_estimate.h), the forward FLOP groups (flop_groups.h). Includes
// config/, profile/ and util/; no LibTorch.

#include <cstdint>
#include <optional>
#include <string>

#include "config/run_config.h"

namespace stepscope {

// Model FLOPs of one step: 2·tokens·(matmul parameters) for the projections,
// MLP and LM head, plus 4·B·T²·d per layer for the two attention matmuls
// (the full T×T product naive attention computes). Backward costs twice the
// forward; the optimizer's element-wise work is not counted.
double forwardFlops(const RunConfig& config);
double modelFlopsPerStep(const RunConfig& config);

// FlashAttention's convention: forward 4·B·H·S²·d, halved when causal; backward 2.5× forward.
double attentionForwardFlops(int64_t batch, int64_t heads, int64_t seq, int64_t d, bool causal);

// The predicted memory of a run by category, from predictMemory
// (estimate/memory_estimate.h): each category's own maximum; total() sums them,
// an upper bound on the peak. Pre-flight checks use preflightBytes.
struct MemoryEstimate {
    int64_t parameters = 0;
    int64_t gradients = 0;
    int64_t optimizerState = 0;
    int64_t activations = 0;
    int64_t total() const { return parameters + gradients + optimizerState + activations; }
};
MemoryEstimate estimateMemory(const RunConfig& config);

// The config with the largest batch, and failing that the longest context at
// batch 1, not above its own whose preflightBytes fits in `available` bytes;
// nullopt when even batch 1 at context 1 does not fit (the parameters,
// gradients and optimizer state alone are too large).
std::optional<RunConfig> shrinkToFit(const RunConfig& config, int64_t available);

// Dense tensor-core (or fp32) peak of known GPUs, for MFU; nullopt where the
// device or precision is not in the table (CPUs among them).
std::optional<double> devicePeakFlopsPerSecond(const std::string& deviceName, Precision precision,
                                               bool tf32);

}  // namespace stepscope
