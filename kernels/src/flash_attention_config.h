#pragma once

// The one dispatch table of the FlashAttention-2 kernels: tile sizes, warps
// and pipeline depth per (head dim, dtype). Plain C++ (the launchers and the
// host-side API both read it). Not tuned yet: first guesses from the
// register and shared-memory budget, to be measured on the H100.

#include <cstdint>

#include "stepscope/kernels/flash_attention.h"

#ifdef __CUDACC__
#define STEPSCOPE_HOST_DEVICE __host__ __device__
#else
#define STEPSCOPE_HOST_DEVICE
#endif

namespace stepscope::kernels::flash {

struct TileConfig {
    int blockM = 0;  // query rows per block (forward) / per inner step (backward)
    int blockN = 0;  // key rows per inner step (forward) / per block (backward)
    int warps = 0;
    int stages = 0;  // shared-memory pipeline depth of the streamed tiles (cp.async)
};

// Tensor cores (bf16 and fp16 alike). Forward: each warp owns 16 query
// rows, so blockM = 16·warps. Backward: each warp owns 16 key rows, so
// blockN = 16·warps; blockM is the query tile streamed past them.
STEPSCOPE_HOST_DEVICE constexpr TileConfig forwardConfig(int headDim) {
    switch (headDim) {
        case 16:
        case 32:
            return {64, 64, 4, 2};
        case 64:
            return {128, 64, 8, 2};
        case 128:
            return {128, 32, 8, 2};
        default:
            return {};
    }
}

STEPSCOPE_HOST_DEVICE constexpr TileConfig backwardConfig(int headDim) {
    switch (headDim) {
        case 16:
        case 32:
        case 64:
            return {64, 64, 4, 2};
        case 128:
            return {32, 64, 4, 2};  // dK and dV accumulators are 128 fp32 registers already
        default:
            return {};
    }
}

// The separate dQ pass (bf16/fp16): like the forward, each warp owns 16
// query rows and key tiles stream past; Q and dO stay in shared memory.
STEPSCOPE_HOST_DEVICE constexpr TileConfig dqConfig(int headDim) {
    return forwardConfig(headDim);
}

// dQ by atomics from the dK/dV kernel (true) or by the separate pass: not
// measured yet, atomics until the GPU says otherwise.
constexpr bool kDqAtomicsByDefault = true;

// The fp32 SIMT path: 4 warps, one query (or key) row each, 32-row chunks of
// the other side staged in shared memory.
STEPSCOPE_HOST_DEVICE constexpr TileConfig simtConfig() {
    return {4, 32, 4, 1};
}

constexpr bool supportedHeadDim(int64_t headDim) {
    return headDim == 16 || headDim == 32 || headDim == 64 || headDim == 128;
}

// Shared-memory rows are padded by 8 elements (16 bytes) so that the eight
// 16-byte rows one ldmatrix reads fall in distinct banks.
constexpr int kPad = 8;

STEPSCOPE_HOST_DEVICE constexpr int forwardSharedBytes(int headDim) {
    const TileConfig c = forwardConfig(headDim);
    const int row = (headDim + kPad) * 2;
    return c.blockM * row + 2 * c.stages * c.blockN * row;
}

STEPSCOPE_HOST_DEVICE constexpr int backwardSharedBytes(int headDim) {
    const TileConfig c = backwardConfig(headDim);
    const int row = (headDim + kPad) * 2;
    return 2 * c.blockN * row                  // K, V of the block
           + 2 * c.stages * c.blockM * row     // Q, dO streamed
           + c.blockN * (c.blockM + kPad) * 2  // dSᵀ for the dQ product
           + 2 * c.stages * c.blockM * 4;      // L and D streamed
}

STEPSCOPE_HOST_DEVICE constexpr int dqSharedBytes(int headDim) {
    const TileConfig c = dqConfig(headDim);
    const int row = (headDim + kPad) * 2;
    return 2 * c.blockM * row + 2 * c.stages * c.blockN * row;
}

}  // namespace stepscope::kernels::flash
