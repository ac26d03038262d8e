#include "estimate/memory_estimate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>

#include "util/strings.h"

namespace stepscope {

namespace {

struct Shape {
    int64_t B, T, d, F, H, V, L, dh, maxContext;
};

std::string words(const std::string& what, int64_t bytes) {
    return what + ": " + formatBytes(double(bytes));
}

}  // namespace

std::optional<int64_t> deviceMemoryBytes(const RunConfig& config) {
    if (config.device != DeviceKind::Cpu) {
        return std::nullopt;
    }
    std::ifstream meminfo("/proc/meminfo");
    std::string key, unit;
    int64_t kibibytes = 0;
    while (meminfo >> key >> kibibytes >> unit) {
        if (key == "MemTotal:") {
            return kibibytes * 1024;
        }
    }
    return std::nullopt;
}

std::optional<std::string> preflightRefusal(const RunConfig& config, int64_t availableBytes) {
    if (config.device != DeviceKind::Cpu || config.force || !config.pyModel.empty()) {
        return std::nullopt;
    }
    const int64_t needed = preflightBytes(config);
    if (availableBytes > 0 && needed > availableBytes) {
        return "the run needs about " + formatBytes(static_cast<double>(needed)) +
               " (the predicted peak and a 10% margin) but only " +
               formatBytes(static_cast<double>(availableBytes)) +
               " is available; shrink the batch, the context or the model";
    }
    return std::nullopt;
}

MemoryPrediction predictMemory(const RunConfig& config) {
    const ModelDims& m = config.model;
    const Shape s{config.batchSize, config.contextLength, m.dModel,    m.dFf, m.heads, m.vocabSize,
                  m.layers,         m.headDim(),          m.maxContext};
    const bool low = config.precision != Precision::Fp32;
    const int64_t e = low ? 2 : 4;  // what autocast's matmuls produce
    const bool naive = config.attention == "naive";
    const bool backward = hasBackward(config.mode);
    const bool inference = config.mode == RunMode::Inference;
    const bool optimizerAlive =
        hasOptimizer(config.mode) && config.warmupSteps + config.measuredSteps > 1;
    const int64_t bt = s.B * s.T, btd = bt * s.d, btf = bt * s.F, btv = bt * s.V;
    const int64_t scores = s.B * s.H * s.T * s.T;

    MemoryPrediction p;
    const int64_t params = parameterCount(m) * 4;
    const int64_t inputs = s.B * (s.T + 1) * 8;                // the int64 token tensor
    const int64_t rope = s.maxContext * s.dh * 4;              // cos and sin tables, fp32
    const int64_t angles = s.maxContext * s.dh / 2 * 4 + 128;  // setup: the rotary angles
    const int64_t gradients = backward ? params : 0;           // fp32, like the parameters
    const int64_t optimizer = hasOptimizer(config.mode) ? 2 * params : 0;  // AdamW m and v

    // What one block keeps for backward. fp32: the two norms' x·rms and the
    // normed output, q and k after the rotation, v, the attention output
    // reshaped for output_proj, the residual after attention and after the
    // MLP (10·B·T·d), and the MLP's w1, silu, w3 and product (4·B·T·d_ff).
    // Under autocast the residual stream and norms stay fp32 (4·B·T·d) and
    // every linear keeps its own low-precision copy of its input (5 casts),
    // with q, k, v, the attention output and one more rotation cast in
    // low precision (9·B·T·d), plus the weights' cached low-precision copies.
    int64_t streams = low ? btd * 4 * 4 + btd * 9 * 2 : btd * 10 * 4;
    const int64_t mlp = btf * 4 * e;
    const int64_t weightCopies = low ? (4 * s.d * s.d + 3 * s.d * s.F) * 2 : 0;
    const int64_t small = bt * 2 * 4 + s.T * s.dh * 8;   // rms per norm, cos/sin rows per rotation
    const int64_t core = naive ? scores * e + s.T * s.T  // probabilities + causal mask
                               : btd * e + s.B * s.H * s.T * 4;  // O + logsumexp
    const int64_t perLayer = streams + mlp + weightCopies + small + core;
    // Outside the blocks: the embedding output, the final norm, the LM head's
    // weight copy and the fp32 log-softmax the loss keeps.
    int64_t headSaved =
        btd * 4 + btd * 4 + bt * 4 + (low ? btd * 2 + s.V * s.d * 2 : btd * 4) + btv * 4;

    // What each moment allocates for itself.
    int64_t lossTemp = inference ? (low ? btv * 2 + btv * 8 : btv * 8)  // logits, fp32, log-softmax
                                 : (low ? btv * 2 + btv * 4 : btv * 4);  // logits (and fp32 cast)
    const int64_t attentionTemp = naive ? 2 * scores * e + (inference ? 5 * btd * e : 0) : 0;
    int64_t backwardTemp = backward ? 2 * btv * 4 : 0;  // dlogits of log-softmax and its input

    // The memory levers. A chunked loss keeps no logits: each chunk's logits,
    // fp32 cast and log-softmax exist for a moment in forward (with, under
    // autocast, the LM head's weight copy, which nothing keeps), and again in
    // backward, recomputed, beside their two fp32 gradients and the LM head's
    // gradient, which fills in chunk by chunk. What the loss keeps is the fp32
    // final-norm output it starts from.
    const bool chunked = config.loss == LossKind::Chunked;
    const int64_t chunkLogits = std::min(config.lossChunkTokens, bt) * s.V;
    const int64_t headWeightCopy = low ? s.V * s.d * 2 : 0;
    int64_t recomputedLoss = 0;
    int64_t lossBackward = backwardTemp;  // alive at the loss's backward, beyond the kept
    if (chunked) {
        headSaved = btd * 4 * 3 + bt * 4;
        lossTemp = (low ? chunkLogits * 2 + chunkLogits * 8 : chunkLogits * 8) + headWeightCopy;
        backwardTemp = backward ? 2 * chunkLogits * 4 : 0;
        recomputedLoss = backward ? chunkLogits * (e + (low ? 4 : 0) + 4) + headWeightCopy : 0;
        lossBackward =
            backward ? chunkLogits * (e + (low ? 4 : 0)) + backwardTemp + s.V * s.d * 4 : 0;
    }
    // Activation checkpointing keeps each checkpointed group's fp32 input;
    // under autocast the weights' cached copies live only until the forward
    // ends, since nothing saved refers to them. Backward recomputes one group
    // at a time with all it saves (its weight copies again) and its output;
    // nested recomputes down to one block, keeping each level's boundary, with
    // the copies of the outer half's other blocks still cached.
    const CheckpointStrategy& checkpoint = config.activationCheckpoint;
    const bool checkpointing = backward && checkpoint.kind != CheckpointStrategy::Kind::Off;
    const int64_t residual = btd * 4;
    int64_t blocksSaved = s.L * perLayer;
    int64_t recomputedBlocks = 0;  // one recomputed group, all it keeps for its backward
    if (checkpointing && checkpoint.kind == CheckpointStrategy::Kind::Groups) {
        const int64_t size = std::min(checkpoint.groupSize, s.L);
        const int64_t groups = (s.L + size - 1) / size;
        blocksSaved = groups * residual;
        recomputedBlocks = size * perLayer + residual;
    } else if (checkpointing) {
        int64_t depth = 0;  // halvings down to one block
        while ((int64_t(1) << depth) < s.L) {
            ++depth;
        }
        const int64_t split = nestedSplit(0, s.L);
        const int64_t outerHalf = std::max(split, s.L - split);
        blocksSaved = std::min<int64_t>(s.L, 2) * residual;
        recomputedBlocks = perLayer + (depth + 1) * residual +
                           (std::max<int64_t>(outerHalf, 1) - 1) * weightCopies;
    }
    if (checkpointing) {
        lossTemp += s.L * weightCopies;  // the copies are freed when the forward ends
    }
    const int64_t saved = inference ? 0 : blocksSaved + headSaved;
    // The first block is recomputed last, with every gradient made but the
    // embedding's, which its backward makes after it.
    const int64_t recomputePeak =
        checkpointing ? blocksSaved + recomputedBlocks + gradients - s.V * s.d * 4 : 0;
    // What the optimizer makes for a moment: LibTorch's loop sqrt(v) and the
    // denominator of one parameter at a time; the foreach form sqrt(v) of
    // every parameter at once (one fp32 copy of them all); the fused kernel
    // nothing.
    const int64_t largestParameter = std::max({s.V * s.d, s.d * s.F, s.d * s.d}) * 4;
    int64_t optimizerTemp = 0;
    if (hasOptimizer(config.mode)) {
        switch (config.optimizer) {
            case OptimizerKind::AdamW:
                optimizerTemp = 2 * largestParameter;
                break;
            case OptimizerKind::AdamWForeach:
                optimizerTemp = params;
                break;
            case OptimizerKind::AdamWFused:
                break;
        }
    }

    const int64_t base = params + inputs + rope + (optimizerAlive ? optimizer : 0);
    const std::array<int64_t, 4> peakByPhase{
        params + inputs + rope,
        std::max(base + saved + lossTemp, base + saved - headSaved + attentionTemp),
        backward ? std::max(base + saved + lossBackward, base + recomputePeak) : 0,
        hasOptimizer(config.mode) ? params + inputs + rope + gradients + optimizer + optimizerTemp
                                  : 0};
    for (int phase = 0; phase < 4; ++phase) {
        if (peakByPhase[size_t(phase)] > p.peakBytes) {
            p.peakBytes = peakByPhase[size_t(phase)];
            p.peakPhase = phase;
        }
    }

    auto set = [&](MemoryCategory c, int64_t bytes) { p.maxByCategory[size_t(c)] = bytes; };
    set(MemoryCategory::Parameters, params);
    set(MemoryCategory::Gradients, gradients);
    set(MemoryCategory::OptimizerState, optimizer);
    set(MemoryCategory::Activations, backward ? saved : 0);
    set(MemoryCategory::Temporaries,
        std::max({lossTemp, attentionTemp, backwardTemp, optimizerTemp}));
    set(MemoryCategory::Inputs, inputs);
    // Without backward, what the graph keeps lives until the next step's forward.
    set(MemoryCategory::Other,
        rope + std::max(angles, config.mode == RunMode::Forward ? saved : 0));
    set(MemoryCategory::Recomputed, std::max(recomputedBlocks, recomputedLoss));
    p.deviceBytes = deviceMemoryBytes(config);

    auto& x = p.explanation;
    x.push_back(words("parameters (fp32)", params));
    if (backward) {
        x.push_back(words("gradients (fp32, one per parameter)", gradients));
    }
    if (optimizer > 0) {
        x.push_back(words("AdamW state (first and second moments, fp32)", optimizer));
    }
    if (!inference) {
        x.push_back(words("activations per layer (" +
                              std::string(naive ? "T×T probabilities" : "O and logsumexp") +
                              (low ? ", low-precision input and weight copies" : "") + ")",
                          perLayer) +
                    " × " + std::to_string(s.L) + " layers");
        x.push_back(words(chunked ? "embedding and final norm kept for the loss"
                                  : "embedding, final norm and fp32 log-softmax kept for the loss",
                          headSaved));
    }
    if (checkpointing) {
        x.push_back(words("activation checkpointing " + toString(checkpoint) +
                              ": the blocks keep their groups' inputs",
                          blocksSaved));
        x.push_back(words("backward: one group recomputed with all it keeps", recomputedBlocks));
    }
    x.push_back(words(std::string(chunked ? "chunked loss: one chunk's logits" : "loss: logits") +
                          (low ? " and their fp32 cast" : "") +
                          (checkpointing && low ? ", beside the blocks' weight copies" : ""),
                      lossTemp));
    if (attentionTemp > 0) {
        x.push_back(
            words("naive attention's scaled and masked scores for a moment", attentionTemp));
    }
    if (backward) {
        x.push_back(words(chunked ? "backward of the loss: a chunk's recomputed logits, their two "
                                    "fp32 gradients and the LM head's gradient"
                                  : "backward of the loss: two logits-sized fp32 gradients",
                          lossBackward));
    }
    if (optimizerTemp > 0) {
        x.push_back(words(config.optimizer == OptimizerKind::AdamWForeach
                              ? "foreach AdamW's sqrt(v) for every parameter at once"
                              : "AdamW's denominator for the largest parameter",
                          optimizerTemp));
    }
    x.push_back(words("token inputs and rotary tables", inputs + rope));
    x.push_back(words("peak in " + std::string(phaseName(p.peakPhase)), p.peakBytes));
    return p;
}

int64_t preflightBytes(const RunConfig& config) {
    return int64_t(std::ceil(double(predictMemory(config).peakBytes) * (1.0 + kPreflightMargin)));
}

}  // namespace stepscope
