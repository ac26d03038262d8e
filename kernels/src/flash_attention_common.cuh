#pragma once

// Device building blocks shared by the FlashAttention-2 forward and backward
// kernels: element traits, cp.async, ldmatrix and mma.sync m16n8k16
// fragments. Written from the PTX ISA; no third-party source.
//
// Fragment layouts of mma.m16n8k16 (g = lane / 4, t = lane % 4):
//   A (16×16, row):  a0 = A[g][2t..2t+1]     a1 = A[g+8][2t..2t+1]
//                    a2 = A[g][2t+8..2t+9]   a3 = A[g+8][2t+8..2t+9]
//   B (16×8, col):   b0 = B[2t..2t+1][g]     b1 = B[2t+8..2t+9][g]
//   C (16×8, f32):   c0,c1 = C[g][2t..2t+1]  c2,c3 = C[g+8][2t..2t+1]
// Two neighbouring C tiles (16 columns) are exactly one A fragment once
// packed to 16 bits, which is how P (or dSᵀ) feeds the next product without
// a trip through shared memory.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "flash_attention_config.h"
#include "stepscope/kernels/flash_attention.h"

namespace stepscope::kernels::flash {

constexpr float kLog2e = 1.4426950408889634f;

// Calls launch(std::integral_constant<int, D>{}) for the head dims the
// kernels are built for (the one list of them); any other is refused.
template <typename Launch>
FlashResult dispatchHeadDim(int64_t headDim, const char* pass, Launch&& launch) {
    switch (headDim) {
        case 16:
            return launch(std::integral_constant<int, 16>{});
        case 32:
            return launch(std::integral_constant<int, 32>{});
        case 64:
            return launch(std::integral_constant<int, 64>{});
        case 128:
            return launch(std::integral_constant<int, 128>{});
        default:
            return {FlashStatus::UnsupportedHeadDim, std::string(pass) + ": unsupported head dim"};
    }
}

constexpr float kLn2 = 0.6931471805599453f;

template <typename T>
struct Elem;

template <>
struct Elem<__nv_bfloat16> {
    static __device__ __forceinline__ float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
    static __device__ __forceinline__ __nv_bfloat16 fromFloat(float x) {
        return __float2bfloat16_rn(x);
    }
    static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
        const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<const uint32_t*>(&v);
    }
};

template <>
struct Elem<__half> {
    static __device__ __forceinline__ float toFloat(__half x) { return __half2float(x); }
    static __device__ __forceinline__ __half fromFloat(float x) { return __float2half_rn(x); }
    static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
        const __half2 v = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<const uint32_t*>(&v);
    }
};

template <>
struct Elem<float> {
    static __device__ __forceinline__ float toFloat(float x) { return x; }
    static __device__ __forceinline__ float fromFloat(float x) { return x; }
};

// D (16×8 f32) += A (16×16) · B (16×8), 16-bit operands.
template <typename T>
__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1);

template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float (&c)[4], const uint32_t (&a)[4],
                                                        uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <>
__device__ __forceinline__ void mma16816<__half>(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                                 uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t sharedAddress(const void* pointer) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

__device__ __forceinline__ void ldmatrixX4(uint32_t (&r)[4], const void* smem) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(sharedAddress(smem)));
}

__device__ __forceinline__ void ldmatrixX4Trans(uint32_t (&r)[4], const void* smem) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(sharedAddress(smem)));
}

// 16 bytes global → shared, asynchronously; valid == false writes zeros
// (src-size 0: nothing is read, but src must still be a legal address).
__device__ __forceinline__ void cpAsync16(void* smem, const void* global, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sharedAddress(smem)),
                 "l"(global), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void cpAsync4(void* smem, const void* global, bool valid) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(sharedAddress(smem)),
                 "l"(global), "r"(valid ? 4 : 0));
}

__device__ __forceinline__ void cpAsyncCommit() {
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
__device__ __forceinline__ void cpAsyncWait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// All threads of the block copy `rows` × headDim elements of a row-major
// global tile (row stride `stride` elements) into shared memory (row stride
// `smemStride`), 16 bytes per cp.async; rows at or past `validRows` become zeros.
template <typename T, int HeadDim, int Threads>
__device__ __forceinline__ void loadTileAsync(T* smem, int smemStride, const T* global,
                                              int64_t stride, int rows, int validRows) {
    constexpr int kChunks = HeadDim * static_cast<int>(sizeof(T)) / 16;  // 16-byte chunks per row
    constexpr int kPerChunk = 16 / static_cast<int>(sizeof(T));
    for (int i = threadIdx.x; i < rows * kChunks; i += Threads) {
        const int row = i / kChunks;
        const int col = (i % kChunks) * kPerChunk;
        const bool valid = row < validRows;
        const T* source = valid ? global + row * stride + col : global;
        cpAsync16(smem + row * smemStride + col, source, valid);
    }
}

// ---- Fragment loads from padded row-major shared memory --------------------

// A fragment (16×16) of a row-major [m][k] tile at (m0, k0).
template <typename T>
__device__ __forceinline__ void loadA(uint32_t (&a)[4], const T* smem, int stride, int m0, int k0) {
    const int lane = threadIdx.x % 32;
    ldmatrixX4(a, smem + (m0 + lane % 16) * stride + k0 + (lane / 16) * 8);
}

// A fragment (16×16) of A = Xᵀ where X is stored row-major [k][m], at (m0, k0).
template <typename T>
__device__ __forceinline__ void loadATransposed(uint32_t (&a)[4], const T* smem, int stride, int m0,
                                                int k0) {
    const int lane = threadIdx.x % 32;
    const int matrix = lane / 8;
    ldmatrixX4Trans(a, smem + (k0 + (matrix / 2) * 8 + lane % 8) * stride + m0 + (matrix % 2) * 8);
}

// B fragments of two n-tiles (n0, n0+8) at k-step k0, B stored as rows
// [n][k] (B = Xᵀ for a row-major X, e.g. K in Q·Kᵀ). b[0..1]: n0, b[2..3]: n0+8.
template <typename T>
__device__ __forceinline__ void loadBPairFromNK(uint32_t (&b)[4], const T* smem, int stride, int n0,
                                                int k0) {
    const int lane = threadIdx.x % 32;
    ldmatrixX4(b, smem + (n0 + (lane / 16) * 8 + lane % 8) * stride + k0 + ((lane / 8) % 2) * 8);
}

// B fragments of two n-tiles (n0, n0+8) at k-step k0, B stored row-major
// [k][n] (e.g. V in P·V). b[0..1]: n0, b[2..3]: n0+8.
template <typename T>
__device__ __forceinline__ void loadBPairFromKN(uint32_t (&b)[4], const T* smem, int stride, int k0,
                                                int n0) {
    const int lane = threadIdx.x % 32;
    ldmatrixX4Trans(b,
                    smem + (k0 + ((lane / 8) % 2) * 8 + lane % 8) * stride + n0 + (lane / 16) * 8);
}

__device__ __forceinline__ float warpMax4(float x) {  // over the 4 lanes of one row
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}

__device__ __forceinline__ float warpSum4(float x) {
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

__device__ __forceinline__ float warpMax(float x) {
    for (int offset = 16; offset > 0; offset /= 2) {
        x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
    }
    return x;
}

__device__ __forceinline__ float warpSum(float x) {
    for (int offset = 16; offset > 0; offset /= 2) {
        x += __shfl_xor_sync(0xffffffffu, x, offset);
    }
    return x;
}

__host__ __device__ __forceinline__ int64_t offsetOf(const Strides& s, int64_t b, int64_t h,
                                                     int64_t row) {
    return b * s.batch + h * s.head + row * s.row;
}

// Internal launchers (validated arguments only), one per file.
FlashResult launchForward(const FlashForwardParams& params);
FlashResult launchBackward(const FlashBackwardParams& params);

}  // namespace stepscope::kernels::flash
