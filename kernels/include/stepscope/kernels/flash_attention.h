#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

// cudaStream_t is `CUstream_st*`; declared here so that this header needs no
// CUDA headers (nullptr is the legacy default stream).
struct CUstream_st;

namespace stepscope::kernels {

// Our FlashAttention-2, forward and backward, behind a plain C++ launch API
// (no torch headers, no CUDA headers). Tensors are (batch, heads, rows,
// head_dim) with any batch, head and row strides, in elements; the head-dim
// stride must be 1.
//
//   O = softmax(scale · Q Kᵀ + mask) V
//   L = log Σ_j exp(scale · q·k_j)   (per query row, fp32, NATURAL log)
//
// Causal: query row r sees keys up to r + (keyLength - queryLength): the last
// query is aligned with the last key, as the naive and tiled backends do;
// causal needs keyLength >= queryLength (otherwise some rows see no key).
//
// bf16 and fp16 run on the tensor cores (mma.sync m16n8k16, ldmatrix,
// cp.async), accumulating in fp32; fp32 runs a plain SIMT path. Head dims
// 16, 32, 64 and 128. Sm_80 or newer.

enum class AttentionDtype { BFloat16, Float16, Float32 };

enum class FlashStatus {
    Ok,
    UnsupportedHeadDim,  // not 16, 32, 64 or 128
    UnsupportedDtype,
    BadLayout,        // head-dim stride not 1, or misaligned pointer or stride
    InvalidArgument,  // null pointer, non-positive length, causal with queries > keys, ...
    LaunchError,      // the CUDA runtime refused the launch (message says why)
};

struct FlashResult {
    FlashStatus status = FlashStatus::Ok;
    std::string message;  // empty when ok
    bool ok() const { return status == FlashStatus::Ok; }
};

std::string toString(FlashStatus status);

// Element strides of a (batch, heads, rows, head_dim) tensor; the head-dim
// stride is 1 by contract. For the logsumexp (batch, heads, rows) `row` is
// the stride between query rows (1 when contiguous).
struct Strides {
    int64_t batch = 0;
    int64_t head = 0;
    int64_t row = 0;
};

struct FlashShape {
    int64_t batch = 0;
    int64_t heads = 0;
    int64_t queryLength = 0;
    int64_t keyLength = 0;
    int64_t headDim = 0;
    float softmaxScale = 0;  // usually 1/sqrt(headDim)
    bool causal = false;
    AttentionDtype dtype = AttentionDtype::BFloat16;
};

// How the bf16/fp16 backward computes dQ (fp32 always uses a separate pass):
// fp32 atomics from the dK/dV kernel into a workspace accumulator, or a
// second kernel over query tiles that recomputes P. Which is faster is to be
// measured on the GPU; Default is the dispatch table's choice.
enum class DqStrategy { Default, Atomics, SeparatePass };

struct FlashForwardParams {
    FlashShape shape;
    const void* q = nullptr;
    Strides qStrides;
    const void* k = nullptr;
    Strides kStrides;
    const void* v = nullptr;
    Strides vStrides;
    void* o = nullptr;  // written: (batch, heads, queryLength, headDim) in dtype
    Strides oStrides;
    float* logsumexp = nullptr;  // written: (batch, heads, queryLength), fp32, natural log
    Strides lseStrides;
    CUstream_st* stream = nullptr;
};

struct FlashBackwardParams {
    FlashShape shape;
    const void* q = nullptr;
    Strides qStrides;
    const void* k = nullptr;
    Strides kStrides;
    const void* v = nullptr;
    Strides vStrides;
    const void* o = nullptr;  // the forward's output
    Strides oStrides;
    const float* logsumexp = nullptr;  // the forward's L
    Strides lseStrides;
    const void* dO = nullptr;
    Strides dOStrides;
    void* dQ = nullptr;  // written, like q
    Strides dQStrides;
    void* dK = nullptr;  // written, like k
    Strides dKStrides;
    void* dV = nullptr;  // written, like v
    Strides dVStrides;
    // Device scratch of flashAttentionBackwardWorkspaceBytes(shape) bytes,
    // 16-byte aligned: D = rowsum(dO ∘ O) and, for bf16/fp16, the fp32 dQ
    // accumulator (used by DqStrategy::Atomics). Its contents on entry do not
    // matter.
    void* workspace = nullptr;
    DqStrategy dqStrategy = DqStrategy::Default;
    CUstream_st* stream = nullptr;
};

// Whether the kernels serve this head dim and dtype at all (no pointers looked at).
FlashResult flashAttentionSupports(int64_t headDim, AttentionDtype dtype);

std::size_t flashAttentionBackwardWorkspaceBytes(const FlashShape& shape);

// The checks of the launches below without launching anything: what the
// kernels would refuse these arguments for (ok when they would run).
FlashResult flashAttentionValidate(const FlashForwardParams& params);
FlashResult flashAttentionValidate(const FlashBackwardParams& params);

// Validate, then launch on params.stream (asynchronous). A launch error is
// reported; errors inside the kernels surface at the next synchronisation.
FlashResult flashAttentionForward(const FlashForwardParams& params);
FlashResult flashAttentionBackward(const FlashBackwardParams& params);

// The tile configuration the dispatch table picks, for reports and notes:
// "fwd BMxBN w warps s stages, bwd BMxBN w warps" (empty when unsupported).
std::string flashAttentionConfig(int64_t headDim, AttentionDtype dtype);

}  // namespace stepscope::kernels
