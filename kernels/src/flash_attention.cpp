// The FlashAttention-2 launch API: argument checks, the workspace size and
// the dispatch into the kernels (flash_attention_fwd.cu, _bwd.cu).
#include <cmath>
#include <cstdint>
#include <string>

#include "flash_attention_config.h"
#include "stepscope/kernels/flash_attention.h"

namespace stepscope::kernels {

namespace flash {
// Defined in the .cu files.
FlashResult launchForward(const FlashForwardParams& params);
FlashResult launchBackward(const FlashBackwardParams& params);
}  // namespace flash

namespace {

int64_t elementBytes(AttentionDtype dtype) {
    return dtype == AttentionDtype::Float32 ? 4 : 2;
}

FlashResult fail(FlashStatus status, std::string message) {
    return {status, "flash attention: " + std::move(message)};
}

FlashResult checkShape(const FlashShape& s) {
    if (FlashResult r = flashAttentionSupports(s.headDim, s.dtype); !r.ok()) {
        return r;
    }
    if (s.batch < 1 || s.heads < 1 || s.queryLength < 1 || s.keyLength < 1) {
        return fail(FlashStatus::InvalidArgument,
                    "batch, heads and both lengths must be positive, got batch " +
                        std::to_string(s.batch) + ", heads " + std::to_string(s.heads) +
                        ", query length " + std::to_string(s.queryLength) + ", key length " +
                        std::to_string(s.keyLength));
    }
    if (s.batch > 65535 || s.heads > 65535) {
        return fail(FlashStatus::InvalidArgument,
                    "batch and heads are grid dimensions and must be at most 65535");
    }
    if (s.causal && s.queryLength > s.keyLength) {
        return fail(FlashStatus::InvalidArgument,
                    "causal attention with more queries (" + std::to_string(s.queryLength) +
                        ") than keys (" + std::to_string(s.keyLength) +
                        ") leaves the first rows without a key");
    }
    if (!(s.softmaxScale > 0.f) || !std::isfinite(s.softmaxScale)) {
        return fail(FlashStatus::InvalidArgument, "the softmax scale must be positive and finite");
    }
    return {};
}

// Tensor-core tiles move 16 bytes at a time (cp.async): every row must start
// on a 16-byte boundary. The fp32 path needs only its natural alignment.
FlashResult checkTensor(const char* name, const void* pointer, const Strides& strides,
                        AttentionDtype dtype) {
    if (pointer == nullptr) {
        return fail(FlashStatus::InvalidArgument, std::string(name) + " is a null pointer");
    }
    const int64_t bytes = elementBytes(dtype);
    const int64_t alignment = dtype == AttentionDtype::Float32 ? 4 : 16;
    const auto address = reinterpret_cast<std::uintptr_t>(pointer);
    const bool aligned = address % alignment == 0 && (strides.batch * bytes) % alignment == 0 &&
                         (strides.head * bytes) % alignment == 0 &&
                         (strides.row * bytes) % alignment == 0;
    if (!aligned) {
        return fail(FlashStatus::BadLayout,
                    std::string(name) + ": its start and its batch, head and row strides must be " +
                        "multiples of " + std::to_string(alignment) + " bytes (strides " +
                        std::to_string(strides.batch) + ", " + std::to_string(strides.head) + ", " +
                        std::to_string(strides.row) + " elements)");
    }
    return {};
}

FlashResult checkLse(const void* pointer) {
    if (pointer == nullptr) {
        return fail(FlashStatus::InvalidArgument, "logsumexp is a null pointer");
    }
    if (reinterpret_cast<std::uintptr_t>(pointer) % 4 != 0) {
        return fail(FlashStatus::BadLayout, "logsumexp is not 4-byte aligned");
    }
    return {};
}

}  // namespace

std::string toString(FlashStatus status) {
    switch (status) {
        case FlashStatus::Ok:
            return "ok";
        case FlashStatus::UnsupportedHeadDim:
            return "unsupported head dim";
        case FlashStatus::UnsupportedDtype:
            return "unsupported dtype";
        case FlashStatus::BadLayout:
            return "bad layout";
        case FlashStatus::InvalidArgument:
            return "invalid argument";
        case FlashStatus::LaunchError:
            return "launch error";
    }
    return "unknown";
}

FlashResult flashAttentionSupports(int64_t headDim, AttentionDtype dtype) {
    if (!flash::supportedHeadDim(headDim)) {
        return fail(FlashStatus::UnsupportedHeadDim,
                    "head dim " + std::to_string(headDim) +
                        " is not served (our kernels take 16, 32, 64 or 128)");
    }
    if (dtype != AttentionDtype::BFloat16 && dtype != AttentionDtype::Float16 &&
        dtype != AttentionDtype::Float32) {
        return fail(FlashStatus::UnsupportedDtype, "dtype is not bf16, fp16 or fp32");
    }
    return {};
}

std::size_t flashAttentionBackwardWorkspaceBytes(const FlashShape& s) {
    const int64_t rows = s.batch * s.heads * s.queryLength;
    if (rows <= 0) {
        return 0;
    }
    const int64_t deltaFloats = (rows + 3) / 4 * 4;  // D; keeps the accumulator 16-byte aligned
    const int64_t accumulatorFloats = s.dtype == AttentionDtype::Float32 ? 0 : rows * s.headDim;
    return static_cast<std::size_t>(deltaFloats + accumulatorFloats) * sizeof(float);
}

FlashResult flashAttentionValidate(const FlashForwardParams& p) {
    const AttentionDtype t = p.shape.dtype;
    for (FlashResult r :
         {checkShape(p.shape), checkTensor("q", p.q, p.qStrides, t),
          checkTensor("k", p.k, p.kStrides, t), checkTensor("v", p.v, p.vStrides, t),
          checkTensor("o", p.o, p.oStrides, t), checkLse(p.logsumexp)}) {
        if (!r.ok()) {
            return r;
        }
    }
    return {};
}

FlashResult flashAttentionValidate(const FlashBackwardParams& p) {
    const AttentionDtype t = p.shape.dtype;
    for (FlashResult r :
         {checkShape(p.shape), checkTensor("q", p.q, p.qStrides, t),
          checkTensor("k", p.k, p.kStrides, t), checkTensor("v", p.v, p.vStrides, t),
          checkTensor("o", p.o, p.oStrides, t), checkTensor("dO", p.dO, p.dOStrides, t),
          checkTensor("dQ", p.dQ, p.dQStrides, t), checkTensor("dK", p.dK, p.dKStrides, t),
          checkTensor("dV", p.dV, p.dVStrides, t), checkLse(p.logsumexp)}) {
        if (!r.ok()) {
            return r;
        }
    }
    if (p.workspace == nullptr || reinterpret_cast<std::uintptr_t>(p.workspace) % 16 != 0) {
        return fail(FlashStatus::InvalidArgument,
                    "the backward pass needs a 16-byte aligned workspace of "
                    "flashAttentionBackwardWorkspaceBytes() bytes");
    }
    return {};
}

FlashResult flashAttentionForward(const FlashForwardParams& p) {
    if (FlashResult r = flashAttentionValidate(p); !r.ok()) {
        return r;
    }
    return flash::launchForward(p);
}

FlashResult flashAttentionBackward(const FlashBackwardParams& p) {
    if (FlashResult r = flashAttentionValidate(p); !r.ok()) {
        return r;
    }
    return flash::launchBackward(p);
}

std::string flashAttentionConfig(int64_t headDim, AttentionDtype dtype) {
    if (!flashAttentionSupports(headDim, dtype).ok()) {
        return {};
    }
    const auto describe = [](const flash::TileConfig& c) {
        return std::to_string(c.blockM) + "x" + std::to_string(c.blockN) + " " +
               std::to_string(c.warps) + " warps " + std::to_string(c.stages) + " stages";
    };
    if (dtype == AttentionDtype::Float32) {
        return "fp32 SIMT: " + describe(flash::simtConfig());
    }
    const int d = static_cast<int>(headDim);
    return "fwd " + describe(flash::forwardConfig(d)) + ", " +
           std::to_string(flash::forwardSharedBytes(d)) + " B shared; bwd " +
           describe(flash::backwardConfig(d)) + ", " +
           std::to_string(flash::backwardSharedBytes(d)) + " B shared";
}

}  // namespace stepscope::kernels
