// FlashAttention-2 forward (Dao, 2023): one block per (query tile, batch·head);
// K/V tiles stream through shared memory (cp.async, double-buffered) while
// each warp keeps its 16 query rows, the running row max m and row sum l and
// the output accumulator in registers (online softmax, fp32, exp2 with
// log2(e) folded into the scale). L = (m + log2 l)·ln 2 is saved in fp32,
// natural-log units, for the backward pass.
//
// Run on an H200 (docs/perf/2026-11-26-h200-gpu-check.md): correct against
// float64 at every head dim (tst_flash_attention), memcheck clean at d 64;
// at the leaderboard shape the forward is 0.80x sdpa-flash and the backward
// 0.47x (dQ by atomics; the separate pass never timed). Not yet run:
// racecheck, initcheck, synccheck, ncu.

#include <cmath>

#include "flash_attention_common.cuh"

namespace stepscope::kernels::flash {

namespace {

constexpr float kNegInf = -INFINITY;

// ---- bf16 / fp16 on tensor cores -------------------------------------------

template <typename T, int D>
__global__ void __launch_bounds__(forwardConfig(D).warps * 32)
    forwardTensorCoreKernel(const FlashForwardParams p) {
    constexpr TileConfig C = forwardConfig(D);
    constexpr int BM = C.blockM, BN = C.blockN, S = C.stages, kThreads = C.warps * 32;
    constexpr int RS = D + kPad;  // shared-memory row stride, elements
    static_assert(BM == 16 * C.warps && BN % 16 == 0 && S >= 2, "forward tile table");

    extern __shared__ __align__(16) unsigned char sharedRaw[];
    T* qs = reinterpret_cast<T*>(sharedRaw);
    T* ks = qs + BM * RS;
    T* vs = ks + S * BN * RS;

    const int64_t sq = p.shape.queryLength, sk = p.shape.keyLength;
    const int64_t diagonal = sk - sq;  // causal: row r sees keys <= r + diagonal
    const bool causal = p.shape.causal;
    // Causal tiles near the end do the most work: start them first.
    const int tile =
        causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
    const int h = blockIdx.y, b = blockIdx.z;
    const int64_t q0 = static_cast<int64_t>(tile) * BM;
    const int qRows = static_cast<int>(sq - q0 < BM ? sq - q0 : BM);
    const int64_t keyEnd = causal && q0 + qRows + diagonal < sk ? q0 + qRows + diagonal : sk;
    const int tiles = static_cast<int>((keyEnd + BN - 1) / BN);

    const T* qg = static_cast<const T*>(p.q) + offsetOf(p.qStrides, b, h, q0);
    const T* kg = static_cast<const T*>(p.k) + offsetOf(p.kStrides, b, h, 0);
    const T* vg = static_cast<const T*>(p.v) + offsetOf(p.vStrides, b, h, 0);

    auto loadKeyTile = [=](int j) {
        if (j < tiles) {
            const int64_t k0 = static_cast<int64_t>(j) * BN;
            const int rows = static_cast<int>(sk - k0 < BN ? sk - k0 : BN);
            T* kd = ks + (j % S) * BN * RS;
            T* vd = vs + (j % S) * BN * RS;
            loadTileAsync<T, D, kThreads>(kd, RS, kg + k0 * p.kStrides.row, p.kStrides.row, BN,
                                          rows);
            loadTileAsync<T, D, kThreads>(vd, RS, vg + k0 * p.vStrides.row, p.vStrides.row, BN,
                                          rows);
        }
        cpAsyncCommit();  // always, so that the group count stays uniform
    };

    loadTileAsync<T, D, kThreads>(qs, RS, qg, p.qStrides.row, BM, qRows);
    cpAsyncCommit();
    for (int j = 0; j < S - 1; ++j) {
        loadKeyTile(j);
    }
    cpAsyncWait<S - 1>();  // the Q group
    __syncthreads();

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    uint32_t qf[D / 16][4];
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        loadA(qf[kk], qs, RS, warp * 16, kk * 16);
    }

    float o[D / 8][4];
#pragma unroll
    for (int i = 0; i < D / 8; ++i) {
        o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
    }
    float rowMax[2] = {kNegInf, kNegInf};  // in log2 units of the scaled score
    float rowSum[2] = {0.f, 0.f};          // this lane's share; summed over the 4 lanes at the end
    const float scaleLog2 = p.shape.softmaxScale * kLog2e;
    const int64_t row0 = q0 + warp * 16 + g;  // this lane's rows: row0 and row0 + 8

    for (int j = 0; j < tiles; ++j) {
        cpAsyncWait<S - 2>();
        __syncthreads();  // tile j landed for everyone; tile j - 1's buffer is free
        loadKeyTile(j + S - 1);
        const T* kt = ks + (j % S) * BN * RS;
        const T* vt = vs + (j % S) * BN * RS;

        // S = Q Kᵀ (16 rows × BN keys per warp)
        float s[BN / 8][4];
#pragma unroll
        for (int i = 0; i < BN / 8; ++i) {
            s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
        }
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
            for (int nn = 0; nn < BN / 16; ++nn) {
                uint32_t bf[4];
                loadBPairFromNK(bf, kt, RS, nn * 16, kk * 16);
                mma16816<T>(s[2 * nn], qf[kk], bf[0], bf[1]);
                mma16816<T>(s[2 * nn + 1], qf[kk], bf[2], bf[3]);
            }
        }

        // Mask the ragged last tile and the diagonal tile.
        const int64_t k0 = static_cast<int64_t>(j) * BN;
        if (k0 + BN > sk || (causal && k0 + BN - 1 > q0 + diagonal)) {
#pragma unroll
            for (int nt = 0; nt < BN / 8; ++nt) {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int64_t col = k0 + nt * 8 + 2 * t + (e & 1);
                    const int64_t row = row0 + (e >= 2 ? 8 : 0);
                    if (col >= sk || (causal && col > row + diagonal)) {
                        s[nt][e] = kNegInf;
                    }
                }
            }
        }

        // Online softmax, one row half (row0, row0 + 8) at a time.
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            float mx = kNegInf;
#pragma unroll
            for (int nt = 0; nt < BN / 8; ++nt) {
                mx = fmaxf(mx, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
            }
            mx = warpMax4(mx) * scaleLog2;
            const float newMax = fmaxf(rowMax[r], mx);
            // A row with every key so far masked keeps -inf; exp2(-inf - -inf) would be NaN.
            const float shift = newMax == kNegInf ? 0.f : newMax;
            const float correction = exp2f(rowMax[r] - shift);
            float sum = 0.f;
#pragma unroll
            for (int nt = 0; nt < BN / 8; ++nt) {
#pragma unroll
                for (int e = 2 * r; e < 2 * r + 2; ++e) {
                    s[nt][e] = exp2f(fmaf(s[nt][e], scaleLog2, -shift));
                    sum += s[nt][e];
                }
            }
            rowSum[r] = rowSum[r] * correction + sum;
            rowMax[r] = newMax;
#pragma unroll
            for (int dt = 0; dt < D / 8; ++dt) {
                o[dt][2 * r] *= correction;
                o[dt][2 * r + 1] *= correction;
            }
        }

        // O += P V: P straight from the accumulators, V through ldmatrix.trans.
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) {
            const uint32_t a[4] = {Elem<T>::pack(s[2 * kk][0], s[2 * kk][1]),
                                   Elem<T>::pack(s[2 * kk][2], s[2 * kk][3]),
                                   Elem<T>::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                   Elem<T>::pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
            for (int dd = 0; dd < D / 16; ++dd) {
                uint32_t bf[4];
                loadBPairFromKN(bf, vt, RS, kk * 16, dd * 16);
                mma16816<T>(o[2 * dd], a, bf[0], bf[1]);
                mma16816<T>(o[2 * dd + 1], a, bf[2], bf[3]);
            }
        }
    }
    cpAsyncWait<0>();  // no copy may still be landing when the block exits

#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int64_t row = row0 + 8 * r;
        const float sum = warpSum4(rowSum[r]);
        if (row >= sq) {
            continue;
        }
        const float inverse = sum > 0.f ? 1.f / sum : 0.f;
        T* og = static_cast<T*>(p.o) + offsetOf(p.oStrides, b, h, row);
#pragma unroll
        for (int dt = 0; dt < D / 8; ++dt) {
            *reinterpret_cast<uint32_t*>(og + dt * 8 + 2 * t) =
                Elem<T>::pack(o[dt][2 * r] * inverse, o[dt][2 * r + 1] * inverse);
        }
        if (t == 0) {
            p.logsumexp[offsetOf(p.lseStrides, b, h, row)] = (rowMax[r] + log2f(sum)) * kLn2;
        }
    }
}

// ---- fp32, SIMT ------------------------------------------------------------
// One warp per query row, 4 rows per block; 32-key chunks of K and V staged
// in shared memory (rows padded by one word: lane j reads row j conflict-free).
// Lane j scores key j of the chunk; lane i accumulates output columns i, i+32, ...

template <int D>
__global__ void __launch_bounds__(simtConfig().warps * 32)
    forwardSimtKernel(const FlashForwardParams p) {
    constexpr int W = simtConfig().warps, CH = simtConfig().blockN, kThreads = W * 32;
    constexpr int PS = D + 1;
    constexpr int PER = (D + 31) / 32;
    __shared__ float kc[CH * PS];
    __shared__ float vc[CH * PS];
    __shared__ float qr[W * D];

    const int64_t sq = p.shape.queryLength, sk = p.shape.keyLength;
    const int64_t diagonal = sk - sq;
    const bool causal = p.shape.causal;
    const int h = blockIdx.y, b = blockIdx.z;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t firstRow = static_cast<int64_t>(blockIdx.x) * W;
    const int64_t row = firstRow + warp;
    const bool rowValid = row < sq;
    const int64_t lastRow = firstRow + W - 1 < sq ? firstRow + W - 1 : sq - 1;
    const int64_t keyEnd = causal && lastRow + diagonal + 1 < sk ? lastRow + diagonal + 1 : sk;

    const float* qg = static_cast<const float*>(p.q) + offsetOf(p.qStrides, b, h, row);
    const float* kg = static_cast<const float*>(p.k) + offsetOf(p.kStrides, b, h, 0);
    const float* vg = static_cast<const float*>(p.v) + offsetOf(p.vStrides, b, h, 0);
    for (int d = lane; d < D; d += 32) {
        qr[warp * D + d] = rowValid ? qg[d] : 0.f;
    }

    const float scaleLog2 = p.shape.softmaxScale * kLog2e;
    float o[PER];
#pragma unroll
    for (int i = 0; i < PER; ++i) {
        o[i] = 0.f;
    }
    float rowMax = kNegInf, rowSum = 0.f;
    for (int64_t k0 = 0; k0 < keyEnd; k0 += CH) {
        __syncthreads();  // the previous chunk is consumed (and qr written, the first time)
        for (int i = threadIdx.x; i < CH * D; i += kThreads) {
            const int r = i / D, d = i % D;
            const bool valid = k0 + r < sk;
            kc[r * PS + d] = valid ? kg[(k0 + r) * p.kStrides.row + d] : 0.f;
            vc[r * PS + d] = valid ? vg[(k0 + r) * p.vStrides.row + d] : 0.f;
        }
        __syncthreads();
        const int64_t key = k0 + lane;
        float score = 0.f;
#pragma unroll 16
        for (int d = 0; d < D; ++d) {
            score = fmaf(qr[warp * D + d], kc[lane * PS + d], score);
        }
        const bool valid = rowValid && key < sk && (!causal || key <= row + diagonal);
        score = valid ? score * scaleLog2 : kNegInf;
        const float newMax = fmaxf(rowMax, warpMax(score));
        const float shift = newMax == kNegInf ? 0.f : newMax;
        const float correction = exp2f(rowMax - shift);
        const float prob = exp2f(score - shift);
        rowSum = rowSum * correction + warpSum(prob);
        rowMax = newMax;
#pragma unroll
        for (int i = 0; i < PER; ++i) {
            o[i] *= correction;
        }
        for (int j = 0; j < CH; ++j) {
            const float pj = __shfl_sync(0xffffffffu, prob, j);
#pragma unroll
            for (int i = 0; i < PER; ++i) {
                const int d = lane + 32 * i;
                if (d < D) {
                    o[i] = fmaf(pj, vc[j * PS + d], o[i]);
                }
            }
        }
    }
    if (!rowValid) {
        return;
    }
    const float inverse = rowSum > 0.f ? 1.f / rowSum : 0.f;
    float* og = static_cast<float*>(p.o) + offsetOf(p.oStrides, b, h, row);
#pragma unroll
    for (int i = 0; i < PER; ++i) {
        const int d = lane + 32 * i;
        if (d < D) {
            og[d] = o[i] * inverse;
        }
    }
    if (lane == 0) {
        p.logsumexp[offsetOf(p.lseStrides, b, h, row)] = (rowMax + log2f(rowSum)) * kLn2;
    }
}

FlashResult launchError(cudaError_t status, const char* what) {
    return {FlashStatus::LaunchError, std::string(what) + ": " + cudaGetErrorString(status)};
}

template <typename T, int D>
FlashResult launchTensorCore(const FlashForwardParams& p) {
    constexpr TileConfig C = forwardConfig(D);
    constexpr int bytes = forwardSharedBytes(D);
    const auto kernel = forwardTensorCoreKernel<T, D>;
    cudaError_t status =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (status != cudaSuccess) {
        return launchError(status, "flash forward: shared-memory limit");
    }
    const dim3 grid(static_cast<unsigned>((p.shape.queryLength + C.blockM - 1) / C.blockM),
                    static_cast<unsigned>(p.shape.heads), static_cast<unsigned>(p.shape.batch));
    kernel<<<grid, C.warps * 32, bytes, p.stream>>>(p);
    status = cudaGetLastError();
    return status == cudaSuccess ? FlashResult{} : launchError(status, "flash forward launch");
}

template <int D>
FlashResult launchSimt(const FlashForwardParams& p) {
    constexpr TileConfig C = simtConfig();
    const dim3 grid(static_cast<unsigned>((p.shape.queryLength + C.warps - 1) / C.warps),
                    static_cast<unsigned>(p.shape.heads), static_cast<unsigned>(p.shape.batch));
    forwardSimtKernel<D><<<grid, C.warps * 32, 0, p.stream>>>(p);
    const cudaError_t status = cudaGetLastError();
    return status == cudaSuccess ? FlashResult{}
                                 : launchError(status, "flash forward (fp32) launch");
}

template <int D>
FlashResult launchForHeadDim(const FlashForwardParams& p) {
    switch (p.shape.dtype) {
        case AttentionDtype::BFloat16:
            return launchTensorCore<__nv_bfloat16, D>(p);
        case AttentionDtype::Float16:
            return launchTensorCore<__half, D>(p);
        case AttentionDtype::Float32:
            return launchSimt<D>(p);
    }
    return {FlashStatus::UnsupportedDtype, "flash forward: unknown dtype"};
}

}  // namespace

FlashResult launchForward(const FlashForwardParams& p) {
    return dispatchHeadDim(p.shape.headDim, "flash forward",
                           [&](auto d) { return launchForHeadDim<decltype(d)::value>(p); });
}

}  // namespace stepscope::kernels::flash
