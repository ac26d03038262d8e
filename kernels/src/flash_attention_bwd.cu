// FlashAttention-2 backward (Dao, 2023). Three launches for bf16/fp16:
//   1. D = rowsum(dO ∘ O), fp32, one warp per query row;
//   2. one block per key tile: K, V of the tile stay in shared memory while
//      the query tiles stream past (Q, dO, L, D; cp.async, double-buffered).
//      Each warp owns 16 keys and works in the transposed frame, so that Pᵀ
//      and dSᵀ come out of the accumulators already in the A-operand layout:
//        Sᵀ = K Qᵀ,  Pᵀ = exp(scale·Sᵀ − L),  dV += Pᵀ dO,
//        dPᵀ = V dOᵀ, dSᵀ = Pᵀ ∘ (dPᵀ − D),   dK += dSᵀ Q,
//      and dQ += dS K goes through shared memory (dSᵀ) and fp32 atomics into
//      an fp32 accumulator in the workspace;
//   3. dQ = accumulator converted to the dtype.
// The alternative to the dQ atomics, a separate pass over query tiles that
// recomputes P (2b below, DqStrategy::SeparatePass), is to be measured
// against them on the GPU; the faster becomes the default
// (kDqAtomicsByDefault in flash_attention_config.h).
//
// fp32 takes a plain SIMT path: a dK/dV kernel (one warp per key row) and a
// dQ kernel (one warp per query row), both recomputing P from L.
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

// ---- 1. D = rowsum(dO ∘ O) --------------------------------------------------

template <typename T, int D>
__global__ void __launch_bounds__(128) rowDotKernel(const FlashBackwardParams p, float* delta) {
    const int64_t sq = p.shape.queryLength;
    const int h = blockIdx.y, b = blockIdx.z;
    const int64_t row = static_cast<int64_t>(blockIdx.x) * 4 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= sq) {
        return;
    }
    const T* og = static_cast<const T*>(p.o) + offsetOf(p.oStrides, b, h, row);
    const T* dog = static_cast<const T*>(p.dO) + offsetOf(p.dOStrides, b, h, row);
    float sum = 0.f;
    for (int d = lane; d < D; d += 32) {
        sum = fmaf(Elem<T>::toFloat(og[d]), Elem<T>::toFloat(dog[d]), sum);
    }
    sum = warpSum(sum);
    if (lane == 0) {
        delta[(static_cast<int64_t>(b) * p.shape.heads + h) * sq + row] = sum;
    }
}

// ---- 2. dK, dV (and dQ by atomics) on tensor cores ----------------------------

// kDqAtomics: also dQ += dS K by fp32 atomics (else the separate dQ pass does it).
template <typename T, int D, bool kDqAtomics>
__global__ void __launch_bounds__(backwardConfig(D).warps * 32)
    backwardTensorCoreKernel(const FlashBackwardParams p, const float* delta, float* dqAccum) {
    constexpr TileConfig C = backwardConfig(D);
    constexpr int BM = C.blockM, BN = C.blockN, W = C.warps, S = C.stages, kThreads = W * 32;
    constexpr int RS = D + kPad;   // row stride of K, V, Q, dO in shared memory
    constexpr int SS = BM + kPad;  // row stride of dSᵀ
    static_assert(BN == 16 * W && BM % 16 == 0 && S >= 2, "backward tile table");

    extern __shared__ __align__(16) unsigned char sharedRaw[];
    T* ks = reinterpret_cast<T*>(sharedRaw);
    T* vs = ks + BN * RS;
    T* qs = vs + BN * RS;       // S stages
    T* dos = qs + S * BM * RS;  // S stages
    T* dss = dos + S * BM * RS;
    float* ls = reinterpret_cast<float*>(dss + BN * SS);  // S stages
    float* dls = ls + S * BM;                             // S stages

    const int64_t sq = p.shape.queryLength, sk = p.shape.keyLength;
    const int64_t diagonal = sk - sq;
    const bool causal = p.shape.causal;
    const int h = blockIdx.y, b = blockIdx.z;
    const int64_t bh = static_cast<int64_t>(b) * p.shape.heads + h;
    const int64_t k0 = static_cast<int64_t>(blockIdx.x) * BN;
    const int kRows = static_cast<int>(sk - k0 < BN ? sk - k0 : BN);
    // Causal: the first query that sees key k0 is k0 - diagonal.
    const int64_t firstQuery = causal && k0 - diagonal > 0 ? k0 - diagonal : 0;
    const int firstTile = static_cast<int>(firstQuery / BM);
    const int endTile = static_cast<int>((sq + BM - 1) / BM);

    const T* qg = static_cast<const T*>(p.q) + offsetOf(p.qStrides, b, h, 0);
    const T* dog = static_cast<const T*>(p.dO) + offsetOf(p.dOStrides, b, h, 0);
    const float* lg = p.logsumexp + offsetOf(p.lseStrides, b, h, 0);
    const float* dg = delta + bh * sq;

    loadTileAsync<T, D, kThreads>(ks, RS,
                                  static_cast<const T*>(p.k) + offsetOf(p.kStrides, b, h, k0),
                                  p.kStrides.row, BN, kRows);
    loadTileAsync<T, D, kThreads>(vs, RS,
                                  static_cast<const T*>(p.v) + offsetOf(p.vStrides, b, h, k0),
                                  p.vStrides.row, BN, kRows);
    auto loadQueryTile = [&](int i) {
        if (i < endTile) {
            const int buf = (i - firstTile) % S;
            const int64_t q0 = static_cast<int64_t>(i) * BM;
            const int rows = static_cast<int>(sq - q0 < BM ? sq - q0 : BM);
            loadTileAsync<T, D, kThreads>(qs + buf * BM * RS, RS, qg + q0 * p.qStrides.row,
                                          p.qStrides.row, BM, rows);
            loadTileAsync<T, D, kThreads>(dos + buf * BM * RS, RS, dog + q0 * p.dOStrides.row,
                                          p.dOStrides.row, BM, rows);
            for (int r = threadIdx.x; r < BM; r += kThreads) {
                const bool valid = r < rows;
                cpAsync4(ls + buf * BM + r, valid ? lg + (q0 + r) * p.lseStrides.row : lg, valid);
                cpAsync4(dls + buf * BM + r, valid ? dg + q0 + r : dg, valid);
            }
        }
        cpAsyncCommit();
    };
    for (int i = firstTile; i < firstTile + S - 1; ++i) {
        loadQueryTile(i);  // the first group carries K and V too
    }

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const float scale = p.shape.softmaxScale;
    const float scaleLog2 = scale * kLog2e;
    const int64_t key0 = k0 + warp * 16 + g;  // this lane's keys: key0 and key0 + 8

    float dk[D / 8][4], dv[D / 8][4];
#pragma unroll
    for (int i = 0; i < D / 8; ++i) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            dk[i][e] = 0.f;
            dv[i][e] = 0.f;
        }
    }

    for (int i = firstTile; i < endTile; ++i) {
        cpAsyncWait<S - 2>();
        __syncthreads();  // tile i landed; the previous tile's buffers and dSᵀ are free
        loadQueryTile(i + S - 1);
        const int buf = (i - firstTile) % S;
        const T* qt = qs + buf * BM * RS;
        const T* dot = dos + buf * BM * RS;
        const float* lt = ls + buf * BM;
        const float* dt_ = dls + buf * BM;
        const int64_t q0 = static_cast<int64_t>(i) * BM;

        // Sᵀ = K Qᵀ for this warp's 16 keys × BM queries.
        float st[BM / 8][4];
#pragma unroll
        for (int n = 0; n < BM / 8; ++n) {
            st[n][0] = st[n][1] = st[n][2] = st[n][3] = 0.f;
        }
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
            uint32_t a[4];
            loadA(a, ks, RS, warp * 16, kk * 16);
#pragma unroll
            for (int nn = 0; nn < BM / 16; ++nn) {
                uint32_t bf[4];
                loadBPairFromNK(bf, qt, RS, nn * 16, kk * 16);
                mma16816<T>(st[2 * nn], a, bf[0], bf[1]);
                mma16816<T>(st[2 * nn + 1], a, bf[2], bf[3]);
            }
        }
        // Pᵀ = exp(scale·Sᵀ − L), zero where masked (causal, ragged queries or keys).
#pragma unroll
        for (int n = 0; n < BM / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int local = n * 8 + 2 * t + (e & 1);
                const int64_t query = q0 + local;
                const int64_t key = key0 + (e >= 2 ? 8 : 0);
                const bool valid = query < sq && key < sk && (!causal || key <= query + diagonal);
                st[n][e] = valid ? exp2f(fmaf(st[n][e], scaleLog2, -lt[local] * kLog2e)) : 0.f;
            }
        }
        // dV += Pᵀ dO
#pragma unroll
        for (int kk = 0; kk < BM / 16; ++kk) {
            const uint32_t a[4] = {Elem<T>::pack(st[2 * kk][0], st[2 * kk][1]),
                                   Elem<T>::pack(st[2 * kk][2], st[2 * kk][3]),
                                   Elem<T>::pack(st[2 * kk + 1][0], st[2 * kk + 1][1]),
                                   Elem<T>::pack(st[2 * kk + 1][2], st[2 * kk + 1][3])};
#pragma unroll
            for (int dd = 0; dd < D / 16; ++dd) {
                uint32_t bf[4];
                loadBPairFromKN(bf, dot, RS, kk * 16, dd * 16);
                mma16816<T>(dv[2 * dd], a, bf[0], bf[1]);
                mma16816<T>(dv[2 * dd + 1], a, bf[2], bf[3]);
            }
        }
        // dPᵀ = V dOᵀ
        float ds[BM / 8][4];
#pragma unroll
        for (int n = 0; n < BM / 8; ++n) {
            ds[n][0] = ds[n][1] = ds[n][2] = ds[n][3] = 0.f;
        }
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
            uint32_t a[4];
            loadA(a, vs, RS, warp * 16, kk * 16);
#pragma unroll
            for (int nn = 0; nn < BM / 16; ++nn) {
                uint32_t bf[4];
                loadBPairFromNK(bf, dot, RS, nn * 16, kk * 16);
                mma16816<T>(ds[2 * nn], a, bf[0], bf[1]);
                mma16816<T>(ds[2 * nn + 1], a, bf[2], bf[3]);
            }
        }
        // dSᵀ = Pᵀ ∘ (dPᵀ − D); kept in registers for dK and in shared memory for dQ.
#pragma unroll
        for (int n = 0; n < BM / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                ds[n][e] = st[n][e] * (ds[n][e] - dt_[n * 8 + 2 * t + (e & 1)]);
            }
            if constexpr (kDqAtomics) {
#pragma unroll
                for (int r = 0; r < 2; ++r) {
                    *reinterpret_cast<uint32_t*>(dss + (warp * 16 + g + 8 * r) * SS + n * 8 +
                                                 2 * t) =
                        Elem<T>::pack(ds[n][2 * r], ds[n][2 * r + 1]);
                }
            }
        }
        // dK += dSᵀ Q (scaled at the end)
#pragma unroll
        for (int kk = 0; kk < BM / 16; ++kk) {
            const uint32_t a[4] = {Elem<T>::pack(ds[2 * kk][0], ds[2 * kk][1]),
                                   Elem<T>::pack(ds[2 * kk][2], ds[2 * kk][3]),
                                   Elem<T>::pack(ds[2 * kk + 1][0], ds[2 * kk + 1][1]),
                                   Elem<T>::pack(ds[2 * kk + 1][2], ds[2 * kk + 1][3])};
#pragma unroll
            for (int dd = 0; dd < D / 16; ++dd) {
                uint32_t bf[4];
                loadBPairFromKN(bf, qt, RS, kk * 16, dd * 16);
                mma16816<T>(dk[2 * dd], a, bf[0], bf[1]);
                mma16816<T>(dk[2 * dd + 1], a, bf[2], bf[3]);
            }
        }
        if constexpr (kDqAtomics) {
            __syncthreads();  // dSᵀ of every warp is in shared memory

            // dQ (BM × D) += dS K, in units of 16 rows × CH columns spread over the warps.
            constexpr int CH = D < 32 ? D : 32;
            constexpr int kUnits = (BM / 16) * (D / CH);
            for (int u = warp; u < kUnits; u += W) {
                const int rm = (u / (D / CH)) * 16;
                const int dc = (u % (D / CH)) * CH;
                float acc[CH / 8][4];
#pragma unroll
                for (int n = 0; n < CH / 8; ++n) {
                    acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
                }
#pragma unroll
                for (int kk = 0; kk < BN / 16; ++kk) {
                    uint32_t a[4];
                    loadATransposed(a, dss, SS, rm, kk * 16);
#pragma unroll
                    for (int dd = 0; dd < CH / 16; ++dd) {
                        uint32_t bf[4];
                        loadBPairFromKN(bf, ks, RS, kk * 16, dc + dd * 16);
                        mma16816<T>(acc[2 * dd], a, bf[0], bf[1]);
                        mma16816<T>(acc[2 * dd + 1], a, bf[2], bf[3]);
                    }
                }
#pragma unroll
                for (int r = 0; r < 2; ++r) {
                    const int64_t row = q0 + rm + g + 8 * r;
                    if (row < sq) {
                        float* dst = dqAccum + (bh * sq + row) * D + dc + 2 * t;
#pragma unroll
                        for (int n = 0; n < CH / 8; ++n) {
                            atomicAdd(dst + n * 8, acc[n][2 * r] * scale);
                            atomicAdd(dst + n * 8 + 1, acc[n][2 * r + 1] * scale);
                        }
                    }
                }
            }
        }
    }
    cpAsyncWait<0>();

#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int64_t key = key0 + 8 * r;
        if (key >= sk) {
            continue;
        }
        T* dkg = static_cast<T*>(p.dK) + offsetOf(p.dKStrides, b, h, key);
        T* dvg = static_cast<T*>(p.dV) + offsetOf(p.dVStrides, b, h, key);
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            *reinterpret_cast<uint32_t*>(dkg + n * 8 + 2 * t) =
                Elem<T>::pack(dk[n][2 * r] * scale, dk[n][2 * r + 1] * scale);
            *reinterpret_cast<uint32_t*>(dvg + n * 8 + 2 * t) =
                Elem<T>::pack(dv[n][2 * r], dv[n][2 * r + 1]);
        }
    }
}

// ---- 2b. dQ as a separate pass (DqStrategy::SeparatePass) ---------------------
// One block per (query tile, batch·head), like the forward: each warp keeps
// Q and dO fragments of its 16 query rows in registers while K/V tiles stream
// past, recomputes P from L, and accumulates dQ += dS K in registers; no
// atomics, no workspace accumulator.

template <typename T, int D>
__global__ void __launch_bounds__(dqConfig(D).warps * 32)
    backwardDqTensorCoreKernel(const FlashBackwardParams p, const float* delta) {
    constexpr TileConfig C = dqConfig(D);
    constexpr int BM = C.blockM, BN = C.blockN, S = C.stages, kThreads = C.warps * 32;
    constexpr int RS = D + kPad;
    static_assert(BM == 16 * C.warps && BN % 16 == 0 && S >= 2, "dQ tile table");

    extern __shared__ __align__(16) unsigned char sharedRaw[];
    T* qs = reinterpret_cast<T*>(sharedRaw);
    T* dos = qs + BM * RS;
    T* ks = dos + BM * RS;     // S stages
    T* vs = ks + S * BN * RS;  // S stages

    const int64_t sq = p.shape.queryLength, sk = p.shape.keyLength;
    const int64_t diagonal = sk - sq;
    const bool causal = p.shape.causal;
    const int tile =
        causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
    const int h = blockIdx.y, b = blockIdx.z;
    const int64_t bh = static_cast<int64_t>(b) * p.shape.heads + h;
    const int64_t q0 = static_cast<int64_t>(tile) * BM;
    const int qRows = static_cast<int>(sq - q0 < BM ? sq - q0 : BM);
    const int64_t keyEnd = causal && q0 + qRows + diagonal < sk ? q0 + qRows + diagonal : sk;
    const int tiles = static_cast<int>((keyEnd + BN - 1) / BN);

    const T* kg = static_cast<const T*>(p.k) + offsetOf(p.kStrides, b, h, 0);
    const T* vg = static_cast<const T*>(p.v) + offsetOf(p.vStrides, b, h, 0);
    auto loadKeyTile = [=](int j) {
        if (j < tiles) {
            const int64_t k0 = static_cast<int64_t>(j) * BN;
            const int rows = static_cast<int>(sk - k0 < BN ? sk - k0 : BN);
            loadTileAsync<T, D, kThreads>(ks + (j % S) * BN * RS, RS, kg + k0 * p.kStrides.row,
                                          p.kStrides.row, BN, rows);
            loadTileAsync<T, D, kThreads>(vs + (j % S) * BN * RS, RS, vg + k0 * p.vStrides.row,
                                          p.vStrides.row, BN, rows);
        }
        cpAsyncCommit();
    };
    loadTileAsync<T, D, kThreads>(qs, RS,
                                  static_cast<const T*>(p.q) + offsetOf(p.qStrides, b, h, q0),
                                  p.qStrides.row, BM, qRows);
    loadTileAsync<T, D, kThreads>(dos, RS,
                                  static_cast<const T*>(p.dO) + offsetOf(p.dOStrides, b, h, q0),
                                  p.dOStrides.row, BM, qRows);
    cpAsyncCommit();
    for (int j = 0; j < S - 1; ++j) {
        loadKeyTile(j);
    }
    cpAsyncWait<S - 1>();  // Q and dO
    __syncthreads();

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    uint32_t qf[D / 16][4], dof[D / 16][4];
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        loadA(qf[kk], qs, RS, warp * 16, kk * 16);
        loadA(dof[kk], dos, RS, warp * 16, kk * 16);
    }
    const int64_t row0 = q0 + warp * 16 + g;
    float lseLog2[2], rowDelta[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int64_t row = row0 + 8 * r;
        lseLog2[r] = row < sq ? p.logsumexp[offsetOf(p.lseStrides, b, h, row)] * kLog2e : 0.f;
        rowDelta[r] = row < sq ? delta[bh * sq + row] : 0.f;
    }
    const float scale = p.shape.softmaxScale;
    const float scaleLog2 = scale * kLog2e;
    float dq[D / 8][4];
#pragma unroll
    for (int i = 0; i < D / 8; ++i) {
        dq[i][0] = dq[i][1] = dq[i][2] = dq[i][3] = 0.f;
    }

    for (int j = 0; j < tiles; ++j) {
        cpAsyncWait<S - 2>();
        __syncthreads();
        loadKeyTile(j + S - 1);
        const T* kt = ks + (j % S) * BN * RS;
        const T* vt = vs + (j % S) * BN * RS;
        float s[BN / 8][4], dp[BN / 8][4];
#pragma unroll
        for (int n = 0; n < BN / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                s[n][e] = 0.f;
                dp[n][e] = 0.f;
            }
        }
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
            for (int nn = 0; nn < BN / 16; ++nn) {
                uint32_t bf[4];
                loadBPairFromNK(bf, kt, RS, nn * 16, kk * 16);
                mma16816<T>(s[2 * nn], qf[kk], bf[0], bf[1]);
                mma16816<T>(s[2 * nn + 1], qf[kk], bf[2], bf[3]);
                loadBPairFromNK(bf, vt, RS, nn * 16, kk * 16);
                mma16816<T>(dp[2 * nn], dof[kk], bf[0], bf[1]);
                mma16816<T>(dp[2 * nn + 1], dof[kk], bf[2], bf[3]);
            }
        }
        // dS = P ∘ (dP − D), P recomputed from L; zero where masked.
        const int64_t k0 = static_cast<int64_t>(j) * BN;
#pragma unroll
        for (int n = 0; n < BN / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int64_t col = k0 + n * 8 + 2 * t + (e & 1);
                const int r = e >= 2 ? 1 : 0;
                const int64_t row = row0 + 8 * r;
                const bool valid = col < sk && row < sq && (!causal || col <= row + diagonal);
                const float prob = valid ? exp2f(fmaf(s[n][e], scaleLog2, -lseLog2[r])) : 0.f;
                s[n][e] = prob * (dp[n][e] - rowDelta[r]);
            }
        }
        // dQ += dS K
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) {
            const uint32_t a[4] = {Elem<T>::pack(s[2 * kk][0], s[2 * kk][1]),
                                   Elem<T>::pack(s[2 * kk][2], s[2 * kk][3]),
                                   Elem<T>::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                   Elem<T>::pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
            for (int dd = 0; dd < D / 16; ++dd) {
                uint32_t bf[4];
                loadBPairFromKN(bf, kt, RS, kk * 16, dd * 16);
                mma16816<T>(dq[2 * dd], a, bf[0], bf[1]);
                mma16816<T>(dq[2 * dd + 1], a, bf[2], bf[3]);
            }
        }
    }
    cpAsyncWait<0>();

#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int64_t row = row0 + 8 * r;
        if (row >= sq) {
            continue;
        }
        T* dst = static_cast<T*>(p.dQ) + offsetOf(p.dQStrides, b, h, row);
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            *reinterpret_cast<uint32_t*>(dst + n * 8 + 2 * t) =
                Elem<T>::pack(dq[n][2 * r] * scale, dq[n][2 * r + 1] * scale);
        }
    }
}

// ---- 3. dQ: fp32 accumulator → dtype ------------------------------------------

template <typename T, int D>
__global__ void __launch_bounds__(256)
    convertDqKernel(const FlashBackwardParams p, const float* dqAccum) {
    const int64_t sq = p.shape.queryLength, heads = p.shape.heads;
    const int64_t total = p.shape.batch * heads * sq * D;
    const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += step) {
        const int64_t d = i % D, rest = i / D;
        const int64_t row = rest % sq, bh = rest / sq;
        T* dst = static_cast<T*>(p.dQ) + offsetOf(p.dQStrides, bh / heads, bh % heads, row);
        dst[d] = Elem<T>::fromFloat(dqAccum[i]);
    }
}

// ---- fp32, SIMT ----------------------------------------------------------------
// dK, dV: one warp per key row, 4 keys per block; 32-query chunks of Q, dO,
// L and D in shared memory. Lane j handles query j of the chunk.

template <int D>
__global__ void __launch_bounds__(simtConfig().warps * 32)
    backwardKeySimtKernel(const FlashBackwardParams p, const float* delta) {
    constexpr int W = simtConfig().warps, CH = simtConfig().blockN, kThreads = W * 32;
    constexpr int PS = D + 1;
    constexpr int PER = (D + 31) / 32;
    __shared__ float qc[CH * PS];
    __shared__ float dc[CH * PS];
    __shared__ float lc[CH];
    __shared__ float deltac[CH];
    __shared__ float kr[W * D];
    __shared__ float vr[W * D];

    const int64_t sq = p.shape.queryLength, sk = p.shape.keyLength;
    const int64_t diagonal = sk - sq;
    const bool causal = p.shape.causal;
    const int h = blockIdx.y, b = blockIdx.z;
    const int64_t bh = static_cast<int64_t>(b) * p.shape.heads + h;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t firstKey = static_cast<int64_t>(blockIdx.x) * W;
    const int64_t key = firstKey + warp;
    const bool keyValid = key < sk;
    const int64_t firstQuery = causal && firstKey - diagonal > 0 ? firstKey - diagonal : 0;

    const float* kg = static_cast<const float*>(p.k) + offsetOf(p.kStrides, b, h, key);
    const float* vg = static_cast<const float*>(p.v) + offsetOf(p.vStrides, b, h, key);
    for (int d = lane; d < D; d += 32) {
        kr[warp * D + d] = keyValid ? kg[d] : 0.f;
        vr[warp * D + d] = keyValid ? vg[d] : 0.f;
    }
    const float* qg = static_cast<const float*>(p.q) + offsetOf(p.qStrides, b, h, 0);
    const float* dog = static_cast<const float*>(p.dO) + offsetOf(p.dOStrides, b, h, 0);
    const float* lg = p.logsumexp + offsetOf(p.lseStrides, b, h, 0);
    const float* dg = delta + bh * sq;
    const float scaleLog2 = p.shape.softmaxScale * kLog2e;

    float dk[PER], dv[PER];
#pragma unroll
    for (int i = 0; i < PER; ++i) {
        dk[i] = dv[i] = 0.f;
    }
    for (int64_t q0 = firstQuery; q0 < sq; q0 += CH) {
        __syncthreads();
        for (int i = threadIdx.x; i < CH * D; i += kThreads) {
            const int r = i / D, d = i % D;
            const bool valid = q0 + r < sq;
            qc[r * PS + d] = valid ? qg[(q0 + r) * p.qStrides.row + d] : 0.f;
            dc[r * PS + d] = valid ? dog[(q0 + r) * p.dOStrides.row + d] : 0.f;
        }
        if (threadIdx.x < CH) {
            const bool valid = q0 + threadIdx.x < sq;
            lc[threadIdx.x] = valid ? lg[(q0 + threadIdx.x) * p.lseStrides.row] : 0.f;
            deltac[threadIdx.x] = valid ? dg[q0 + threadIdx.x] : 0.f;
        }
        __syncthreads();
        const int64_t query = q0 + lane;
        float score = 0.f, dp = 0.f;
#pragma unroll 16
        for (int d = 0; d < D; ++d) {
            score = fmaf(qc[lane * PS + d], kr[warp * D + d], score);
            dp = fmaf(dc[lane * PS + d], vr[warp * D + d], dp);
        }
        const bool valid = keyValid && query < sq && (!causal || key <= query + diagonal);
        const float prob = valid ? exp2f(fmaf(score, scaleLog2, -lc[lane] * kLog2e)) : 0.f;
        const float dscore = prob * (dp - deltac[lane]);
        for (int j = 0; j < CH; ++j) {
            const float pj = __shfl_sync(0xffffffffu, prob, j);
            const float dsj = __shfl_sync(0xffffffffu, dscore, j);
#pragma unroll
            for (int i = 0; i < PER; ++i) {
                const int d = lane + 32 * i;
                if (d < D) {
                    dv[i] = fmaf(pj, dc[j * PS + d], dv[i]);
                    dk[i] = fmaf(dsj, qc[j * PS + d], dk[i]);
                }
            }
        }
    }
    if (!keyValid) {
        return;
    }
    float* dkg = static_cast<float*>(p.dK) + offsetOf(p.dKStrides, b, h, key);
    float* dvg = static_cast<float*>(p.dV) + offsetOf(p.dVStrides, b, h, key);
#pragma unroll
    for (int i = 0; i < PER; ++i) {
        const int d = lane + 32 * i;
        if (d < D) {
            dkg[d] = dk[i] * p.shape.softmaxScale;
            dvg[d] = dv[i];
        }
    }
}

// dQ: one warp per query row, 4 rows per block; 32-key chunks of K and V in
// shared memory. Lane j handles key j of the chunk.
template <int D>
__global__ void __launch_bounds__(simtConfig().warps * 32)
    backwardQuerySimtKernel(const FlashBackwardParams p, const float* delta) {
    constexpr int W = simtConfig().warps, CH = simtConfig().blockN, kThreads = W * 32;
    constexpr int PS = D + 1;
    constexpr int PER = (D + 31) / 32;
    __shared__ float kc[CH * PS];
    __shared__ float vc[CH * PS];
    __shared__ float qr[W * D];
    __shared__ float dor[W * D];

    const int64_t sq = p.shape.queryLength, sk = p.shape.keyLength;
    const int64_t diagonal = sk - sq;
    const bool causal = p.shape.causal;
    const int h = blockIdx.y, b = blockIdx.z;
    const int64_t bh = static_cast<int64_t>(b) * p.shape.heads + h;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t firstRow = static_cast<int64_t>(blockIdx.x) * W;
    const int64_t row = firstRow + warp;
    const bool rowValid = row < sq;
    const int64_t lastRow = firstRow + W - 1 < sq ? firstRow + W - 1 : sq - 1;
    const int64_t keyEnd = causal && lastRow + diagonal + 1 < sk ? lastRow + diagonal + 1 : sk;

    const float* qg = static_cast<const float*>(p.q) + offsetOf(p.qStrides, b, h, row);
    const float* dog = static_cast<const float*>(p.dO) + offsetOf(p.dOStrides, b, h, row);
    for (int d = lane; d < D; d += 32) {
        qr[warp * D + d] = rowValid ? qg[d] : 0.f;
        dor[warp * D + d] = rowValid ? dog[d] : 0.f;
    }
    const float rowLse = rowValid ? p.logsumexp[offsetOf(p.lseStrides, b, h, row)] : 0.f;
    const float rowDelta = rowValid ? delta[bh * sq + row] : 0.f;
    const float* kg = static_cast<const float*>(p.k) + offsetOf(p.kStrides, b, h, 0);
    const float* vg = static_cast<const float*>(p.v) + offsetOf(p.vStrides, b, h, 0);
    const float scaleLog2 = p.shape.softmaxScale * kLog2e;

    float dq[PER];
#pragma unroll
    for (int i = 0; i < PER; ++i) {
        dq[i] = 0.f;
    }
    for (int64_t k0 = 0; k0 < keyEnd; k0 += CH) {
        __syncthreads();
        for (int i = threadIdx.x; i < CH * D; i += kThreads) {
            const int r = i / D, d = i % D;
            const bool valid = k0 + r < sk;
            kc[r * PS + d] = valid ? kg[(k0 + r) * p.kStrides.row + d] : 0.f;
            vc[r * PS + d] = valid ? vg[(k0 + r) * p.vStrides.row + d] : 0.f;
        }
        __syncthreads();
        const int64_t key = k0 + lane;
        float score = 0.f, dp = 0.f;
#pragma unroll 16
        for (int d = 0; d < D; ++d) {
            score = fmaf(qr[warp * D + d], kc[lane * PS + d], score);
            dp = fmaf(dor[warp * D + d], vc[lane * PS + d], dp);
        }
        const bool valid = rowValid && key < sk && (!causal || key <= row + diagonal);
        const float prob = valid ? exp2f(fmaf(score, scaleLog2, -rowLse * kLog2e)) : 0.f;
        const float dscore = prob * (dp - rowDelta);
        for (int j = 0; j < CH; ++j) {
            const float dsj = __shfl_sync(0xffffffffu, dscore, j);
#pragma unroll
            for (int i = 0; i < PER; ++i) {
                const int d = lane + 32 * i;
                if (d < D) {
                    dq[i] = fmaf(dsj, kc[j * PS + d], dq[i]);
                }
            }
        }
    }
    if (!rowValid) {
        return;
    }
    float* dqg = static_cast<float*>(p.dQ) + offsetOf(p.dQStrides, b, h, row);
#pragma unroll
    for (int i = 0; i < PER; ++i) {
        const int d = lane + 32 * i;
        if (d < D) {
            dqg[d] = dq[i] * p.shape.softmaxScale;
        }
    }
}

// ---- launchers -------------------------------------------------------------------

FlashResult launchError(cudaError_t status, const char* what) {
    return {FlashStatus::LaunchError, std::string(what) + ": " + cudaGetErrorString(status)};
}

FlashResult lastLaunch(const char* what) {
    const cudaError_t status = cudaGetLastError();
    return status == cudaSuccess ? FlashResult{} : launchError(status, what);
}

dim3 rowGrid(const FlashShape& s, int64_t rows, int perBlock) {
    return dim3(static_cast<unsigned>((rows + perBlock - 1) / perBlock),
                static_cast<unsigned>(s.heads), static_cast<unsigned>(s.batch));
}

template <typename T, int D>
FlashResult launchTensorCore(const FlashBackwardParams& p, float* delta, float* dqAccum) {
    constexpr TileConfig C = backwardConfig(D);
    constexpr int bytes = backwardSharedBytes(D);
    const FlashShape& s = p.shape;
    const bool atomics = p.dqStrategy == DqStrategy::Atomics ||
                         (p.dqStrategy == DqStrategy::Default && kDqAtomicsByDefault);
    cudaError_t status = cudaSuccess;
    if (atomics) {
        status = cudaMemsetAsync(
            dqAccum, 0,
            static_cast<std::size_t>(s.batch * s.heads * s.queryLength * D) * sizeof(float),
            p.stream);
        if (status != cudaSuccess) {
            return launchError(status, "flash backward: clearing the dQ accumulator");
        }
    }
    const auto kernel =
        atomics ? backwardTensorCoreKernel<T, D, true> : backwardTensorCoreKernel<T, D, false>;
    status = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (status != cudaSuccess) {
        return launchError(status, "flash backward: shared-memory limit");
    }
    kernel<<<rowGrid(s, s.keyLength, C.blockN), C.warps * 32, bytes, p.stream>>>(p, delta, dqAccum);
    if (FlashResult r = lastLaunch("flash backward launch"); !r.ok()) {
        return r;
    }
    if (atomics) {
        const int64_t total = s.batch * s.heads * s.queryLength * D;
        const int64_t blocks = (total + 255) / 256;
        convertDqKernel<T, D>
            <<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), 256, 0, p.stream>>>(p,
                                                                                           dqAccum);
        return lastLaunch("flash backward dQ conversion launch");
    }
    constexpr TileConfig Q = dqConfig(D);
    constexpr int dqBytes = dqSharedBytes(D);
    const auto dqKernel = backwardDqTensorCoreKernel<T, D>;
    status = cudaFuncSetAttribute(dqKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dqBytes);
    if (status != cudaSuccess) {
        return launchError(status, "flash backward dQ pass: shared-memory limit");
    }
    dqKernel<<<rowGrid(s, s.queryLength, Q.blockM), Q.warps * 32, dqBytes, p.stream>>>(p, delta);
    return lastLaunch("flash backward dQ pass launch");
}

template <int D>
FlashResult launchSimt(const FlashBackwardParams& p, const float* delta) {
    constexpr int W = simtConfig().warps;
    backwardKeySimtKernel<D>
        <<<rowGrid(p.shape, p.shape.keyLength, W), W * 32, 0, p.stream>>>(p, delta);
    if (FlashResult r = lastLaunch("flash backward (fp32) dK/dV launch"); !r.ok()) {
        return r;
    }
    backwardQuerySimtKernel<D>
        <<<rowGrid(p.shape, p.shape.queryLength, W), W * 32, 0, p.stream>>>(p, delta);
    return lastLaunch("flash backward (fp32) dQ launch");
}

template <int D>
FlashResult launchForHeadDim(const FlashBackwardParams& p) {
    const FlashShape& s = p.shape;
    float* delta = static_cast<float*>(p.workspace);
    // The dQ accumulator follows D, 16-byte aligned.
    const int64_t deltaFloats = (s.batch * s.heads * s.queryLength + 3) / 4 * 4;
    float* dqAccum = delta + deltaFloats;
    const dim3 grid = rowGrid(s, s.queryLength, 4);
    switch (s.dtype) {
        case AttentionDtype::BFloat16:
            rowDotKernel<__nv_bfloat16, D><<<grid, 128, 0, p.stream>>>(p, delta);
            if (FlashResult r = lastLaunch("flash backward rowsum launch"); !r.ok()) {
                return r;
            }
            return launchTensorCore<__nv_bfloat16, D>(p, delta, dqAccum);
        case AttentionDtype::Float16:
            rowDotKernel<__half, D><<<grid, 128, 0, p.stream>>>(p, delta);
            if (FlashResult r = lastLaunch("flash backward rowsum launch"); !r.ok()) {
                return r;
            }
            return launchTensorCore<__half, D>(p, delta, dqAccum);
        case AttentionDtype::Float32:
            rowDotKernel<float, D><<<grid, 128, 0, p.stream>>>(p, delta);
            if (FlashResult r = lastLaunch("flash backward rowsum launch"); !r.ok()) {
                return r;
            }
            return launchSimt<D>(p, delta);
    }
    return {FlashStatus::UnsupportedDtype, "flash backward: unknown dtype"};
}

}  // namespace

FlashResult launchBackward(const FlashBackwardParams& p) {
    return dispatchHeadDim(p.shape.headDim, "flash backward",
                           [&](auto d) { return launchForHeadDim<decltype(d)::value>(p); });
}

}  // namespace stepscope::kernels::flash
