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

// The run as the formula sees it: the sizes, and the switches that decide
// which tensors exist.
struct Setting {
    Shape s;
    bool low;    // autocast to bf16 or fp16
    int64_t e;   // bytes of what autocast's matmuls produce
    bool naive;  // naive attention, which keeps the T×T probabilities
    // CUDA's autocast runs softmax in fp32 and the ·v matmul casts its result
    // back: naive attention keeps fp32 probabilities and a low-precision copy.
    // The CPU's autocast keeps softmax in low precision: one copy.
    bool fp32Probabilities;
    bool backward;
    bool inference;
    bool chunked;  // the chunked loss
    bool checkpointing;
    int64_t bt, btd, btf, btv, scores;
};

Setting settingOf(const RunConfig& config) {
    const ModelDims& m = config.model;
    Setting r;
    r.s = {config.batchSize, config.contextLength, m.dModel,    m.dFf, m.heads, m.vocabSize,
           m.layers,         m.headDim(),          m.maxContext};
    r.low = config.precision != Precision::Fp32;
    r.e = r.low ? 2 : 4;  // what autocast's matmuls produce
    r.naive = config.attention == "naive";
    r.fp32Probabilities = r.naive && r.low && config.device == DeviceKind::Cuda;
    r.backward = hasBackward(config.mode);
    r.inference = config.mode == RunMode::Inference;
    r.chunked = config.loss == LossKind::Chunked;
    r.checkpointing =
        r.backward && config.activationCheckpoint.kind != CheckpointStrategy::Kind::Off;
    r.bt = r.s.B * r.s.T;
    r.btd = r.bt * r.s.d;
    r.btf = r.bt * r.s.F;
    r.btv = r.bt * r.s.V;
    r.scores = r.s.B * r.s.H * r.s.T * r.s.T;
    return r;
}

// The parts of the formula in bytes, each named as the explanation names it.
struct Parts {
    // Held for the whole run.
    int64_t params = 0, inputs = 0, rope = 0, angles = 0, gradients = 0, optimizer = 0;
    // Kept for backward.
    int64_t weightCopies = 0, perLayer = 0, headSaved = 0, blocksSaved = 0, saved = 0;
    // Allocated for a moment.
    int64_t lossTemp = 0, attentionTemp = 0, backwardTemp = 0, lossBackward = 0;
    int64_t optimizerTemp = 0;
    // Made again in backward by the levers.
    int64_t recomputedLoss = 0, recomputedBlocks = 0, recomputePeak = 0;
};

// What lives for the whole run: the parameters, their gradients, AdamW's
// moments, the token batch and the rotary tables.
void addRunLongState(const RunConfig& config, const Setting& r, Parts& p) {
    const Shape& s = r.s;
    p.params = parameterCount(config.model) * 4;
    p.inputs = s.B * (s.T + 1) * 8;                              // the int64 token tensor
    p.rope = s.maxContext * s.dh * 4;                            // cos and sin tables, fp32
    p.angles = s.maxContext * s.dh / 2 * 4 + 128;                // setup: the rotary angles
    p.gradients = r.backward ? p.params : 0;                     // fp32, like the parameters
    p.optimizer = hasOptimizer(config.mode) ? 2 * p.params : 0;  // AdamW m and v
}

// What one block keeps for backward. fp32: the two norms' x·rms and the
// normed output, q and k after the rotation, v, the attention output
// reshaped for output_proj, the residual after attention and after the
// MLP (10·B·T·d), and the MLP's w1, silu, w3 and product (4·B·T·d_ff).
// Under autocast the residual stream and norms stay fp32 (4·B·T·d) and
// every linear keeps its own low-precision copy of its input (5 casts),
// with q, k, v, the attention output and one more rotation cast in
// low precision (9·B·T·d), plus the weights' cached low-precision copies.
void addBlockActivations(const Setting& r, Parts& p) {
    const Shape& s = r.s;
    const bool low = r.low;
    const int64_t e = r.e, bt = r.bt, btd = r.btd, btv = r.btv;
    const int64_t streams = low ? btd * 4 * 4 + btd * 9 * 2 : btd * 10 * 4;
    const int64_t mlp = r.btf * 4 * e;
    p.weightCopies = low ? (4 * s.d * s.d + 3 * s.d * s.F) * 2 : 0;
    const int64_t small = bt * 2 * 4 + s.T * s.dh * 8;  // rms per norm, cos/sin rows per rotation
    const int64_t probabilities = r.scores * (r.fp32Probabilities ? 4 + e : e);
    const int64_t core = r.naive ? probabilities + s.T * s.T       // probabilities + causal mask
                                 : btd * e + s.B * s.H * s.T * 4;  // O + logsumexp
    p.perLayer = streams + mlp + p.weightCopies + small + core;
    // Outside the blocks: the embedding output, the final norm, the LM head's
    // weight copy and the fp32 log-softmax the loss keeps.
    p.headSaved = btd * 4 + btd * 4 + bt * 4 + (low ? btd * 2 + s.V * s.d * 2 : btd * 4) + btv * 4;
}

// What each moment allocates for itself.
void addMomentTemporaries(const Setting& r, Parts& p) {
    const bool low = r.low;
    const int64_t btv = r.btv;
    p.lossTemp = r.inference ? (low ? btv * 2 + btv * 8 : btv * 8)   // logits, fp32, log-softmax
                             : (low ? btv * 2 + btv * 4 : btv * 4);  // logits (and fp32 cast)
    p.attentionTemp = r.naive ? 2 * r.scores * r.e + (r.inference ? 5 * r.btd * r.e : 0) : 0;
    p.backwardTemp = r.backward ? 2 * btv * 4 : 0;  // dlogits of log-softmax and its input
    p.lossBackward = p.backwardTemp;                // alive at the loss's backward, beyond the kept
}

// The memory levers. A chunked loss keeps no logits: each chunk's logits,
// fp32 cast and log-softmax exist for a moment in forward (with, under
// autocast, the LM head's weight copy, which nothing keeps), and again in
// backward, recomputed, beside their two fp32 gradients and the LM head's
// gradient, which fills in chunk by chunk. What the loss keeps is the fp32
// final-norm output it starts from.
void applyChunkedLoss(const RunConfig& config, const Setting& r, Parts& p) {
    if (!r.chunked) {
        return;
    }
    const Shape& s = r.s;
    const bool low = r.low, backward = r.backward;
    const int64_t e = r.e;
    const int64_t chunkLogits = std::min(config.lossChunkTokens, r.bt) * s.V;
    const int64_t headWeightCopy = low ? s.V * s.d * 2 : 0;
    p.headSaved = r.btd * 4 * 3 + r.bt * 4;
    p.lossTemp = (low ? chunkLogits * 2 + chunkLogits * 8 : chunkLogits * 8) + headWeightCopy;
    p.backwardTemp = backward ? 2 * chunkLogits * 4 : 0;
    p.recomputedLoss = backward ? chunkLogits * (e + (low ? 4 : 0) + 4) + headWeightCopy : 0;
    p.lossBackward =
        backward ? chunkLogits * (e + (low ? 4 : 0)) + p.backwardTemp + s.V * s.d * 4 : 0;
}

// Activation checkpointing keeps each checkpointed group's fp32 input;
// under autocast the weights' cached copies live only until the forward
// ends, since nothing saved refers to them. Backward recomputes one group
// at a time with all it saves (its weight copies again) and its output;
// nested recomputes down to one block, keeping each level's boundary, with
// the copies of the outer half's other blocks still cached.
void applyCheckpointing(const RunConfig& config, const Setting& r, Parts& p) {
    const Shape& s = r.s;
    const CheckpointStrategy& checkpoint = config.activationCheckpoint;
    const int64_t residual = r.btd * 4;
    p.blocksSaved = s.L * p.perLayer;
    if (!r.checkpointing) {
        return;
    }
    if (checkpoint.kind == CheckpointStrategy::Kind::Groups) {
        const int64_t size = std::min(checkpoint.groupSize, s.L);
        const int64_t groups = (s.L + size - 1) / size;
        p.blocksSaved = groups * residual;
        p.recomputedBlocks = size * p.perLayer + residual;
    } else {
        int64_t depth = 0;  // halvings down to one block
        while ((int64_t(1) << depth) < s.L) {
            ++depth;
        }
        const int64_t split = nestedSplit(0, s.L);
        const int64_t outerHalf = std::max(split, s.L - split);
        p.blocksSaved = std::min<int64_t>(s.L, 2) * residual;
        p.recomputedBlocks = p.perLayer + (depth + 1) * residual +
                             (std::max<int64_t>(outerHalf, 1) - 1) * p.weightCopies;
    }
    p.lossTemp += s.L * p.weightCopies;  // the copies are freed when the forward ends
    // The first block is recomputed last, with every gradient made but the
    // embedding's, which its backward makes after it.
    p.recomputePeak = p.blocksSaved + p.recomputedBlocks + p.gradients - s.V * s.d * 4;
}

// What the optimizer makes for a moment: LibTorch's loop sqrt(v) and the
// denominator of one parameter at a time; the foreach form sqrt(v) of
// every parameter at once (one fp32 copy of them all); the fused kernel
// nothing.
int64_t optimizerTemporaryBytes(const RunConfig& config, const Setting& r, int64_t params) {
    const Shape& s = r.s;
    const int64_t largestParameter = std::max({s.V * s.d, s.d * s.F, s.d * s.d}) * 4;
    if (!hasOptimizer(config.mode)) {
        return 0;
    }
    switch (config.optimizer) {
        case OptimizerKind::AdamW:
            return 2 * largestParameter;
        case OptimizerKind::AdamWForeach:
            return params;
        case OptimizerKind::AdamWFused:
            break;
    }
    return 0;
}

// Each phase's peak (setup, forward, backward, optimizer); the largest is the run's.
void setPeak(const RunConfig& config, const Setting& r, const Parts& parts, MemoryPrediction& p) {
    const bool optimizerAlive =
        hasOptimizer(config.mode) && config.warmupSteps + config.measuredSteps > 1;
    const int64_t base =
        parts.params + parts.inputs + parts.rope + (optimizerAlive ? parts.optimizer : 0);
    const std::array<int64_t, 4> peakByPhase{
        parts.params + parts.inputs + parts.rope,
        std::max(base + parts.saved + parts.lossTemp,
                 base + parts.saved - parts.headSaved + parts.attentionTemp),
        r.backward ? std::max(base + parts.saved + parts.lossBackward, base + parts.recomputePeak)
                   : 0,
        hasOptimizer(config.mode) ? parts.params + parts.inputs + parts.rope + parts.gradients +
                                        parts.optimizer + parts.optimizerTemp
                                  : 0};
    for (int phase = 0; phase < 4; ++phase) {
        if (peakByPhase[size_t(phase)] > p.peakBytes) {
            p.peakBytes = peakByPhase[size_t(phase)];
            p.peakPhase = phase;
        }
    }
}

// Each category's own maximum over the run.
void setCategoryMaxima(const RunConfig& config, const Setting& r, const Parts& parts,
                       MemoryPrediction& p) {
    auto set = [&](MemoryCategory c, int64_t bytes) { p.maxByCategory[size_t(c)] = bytes; };
    set(MemoryCategory::Parameters, parts.params);
    set(MemoryCategory::Gradients, parts.gradients);
    set(MemoryCategory::OptimizerState, parts.optimizer);
    set(MemoryCategory::Activations, r.backward ? parts.saved : 0);
    set(MemoryCategory::Temporaries,
        std::max({parts.lossTemp, parts.attentionTemp, parts.backwardTemp, parts.optimizerTemp}));
    set(MemoryCategory::Inputs, parts.inputs);
    // Without backward, what the graph keeps lives until the next step's forward.
    set(MemoryCategory::Other,
        parts.rope + std::max(parts.angles, config.mode == RunMode::Forward ? parts.saved : 0));
    set(MemoryCategory::Recomputed, std::max(parts.recomputedBlocks, parts.recomputedLoss));
}

// The parts of the formula in words, for the app, ending with the peak.
void explain(const RunConfig& config, const Setting& r, const Parts& parts, MemoryPrediction& p) {
    const bool low = r.low, chunked = r.chunked, checkpointing = r.checkpointing;
    auto& x = p.explanation;
    x.push_back(words("parameters (fp32)", parts.params));
    if (r.backward) {
        x.push_back(words("gradients (fp32, one per parameter)", parts.gradients));
    }
    if (parts.optimizer > 0) {
        x.push_back(words("AdamW state (first and second moments, fp32)", parts.optimizer));
    }
    if (!r.inference) {
        x.push_back(words("activations per layer (" +
                              std::string(!r.naive ? "O and logsumexp"
                                          : r.fp32Probabilities
                                              ? "T×T probabilities, fp32 and a low-precision copy"
                                              : "T×T probabilities") +
                              (low ? ", low-precision input and weight copies" : "") + ")",
                          parts.perLayer) +
                    " × " + std::to_string(r.s.L) + " layers");
        x.push_back(words(chunked ? "embedding and final norm kept for the loss"
                                  : "embedding, final norm and fp32 log-softmax kept for the loss",
                          parts.headSaved));
    }
    if (checkpointing) {
        x.push_back(words("activation checkpointing " + toString(config.activationCheckpoint) +
                              ": the blocks keep their groups' inputs",
                          parts.blocksSaved));
        x.push_back(
            words("backward: one group recomputed with all it keeps", parts.recomputedBlocks));
    }
    x.push_back(words(std::string(chunked ? "chunked loss: one chunk's logits" : "loss: logits") +
                          (low ? " and their fp32 cast" : "") +
                          (checkpointing && low ? ", beside the blocks' weight copies" : ""),
                      parts.lossTemp));
    if (parts.attentionTemp > 0) {
        x.push_back(
            words("naive attention's scaled and masked scores for a moment", parts.attentionTemp));
    }
    if (r.backward) {
        x.push_back(words(chunked ? "backward of the loss: a chunk's recomputed logits, their two "
                                    "fp32 gradients and the LM head's gradient"
                                  : "backward of the loss: two logits-sized fp32 gradients",
                          parts.lossBackward));
    }
    if (parts.optimizerTemp > 0) {
        x.push_back(words(config.optimizer == OptimizerKind::AdamWForeach
                              ? "foreach AdamW's sqrt(v) for every parameter at once"
                              : "AdamW's denominator for the largest parameter",
                          parts.optimizerTemp));
    }
    x.push_back(words("token inputs and rotary tables", parts.inputs + parts.rope));
    x.push_back(words("peak in " + std::string(phaseName(p.peakPhase)), p.peakBytes));
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

MemoryPrediction predictMemory(const RunConfig& config) {
    if (config.ranks > 1) {
        // One rank of a distributed step: its share of the global batch and
        // every parameter, gradient and optimizer state, as replicated DDP
        // holds them (sharded strategies hold less: an upper bound there).
        RunConfig rank = config;
        rank.batchSize = std::max<int64_t>(1, config.batchSize / config.ranks);
        rank.ranks = 1;
        rank.parallel = "none";
        MemoryPrediction p = predictMemory(rank);
        p.explanation.insert(
            p.explanation.begin(),
            "per rank: each of the " + std::to_string(config.ranks) + " ranks holds a batch of " +
                std::to_string(rank.batchSize) +
                " and every parameter, gradient and optimizer state (sharded-optimizer and fsdp "
                "hold less: for them an upper bound); on the CPU the ranks share this machine's "
                "memory, " +
                std::to_string(config.ranks) + " times this");
        return p;
    }
    const Setting setting = settingOf(config);
    Parts parts;
    addRunLongState(config, setting, parts);
    addBlockActivations(setting, parts);
    addMomentTemporaries(setting, parts);
    applyChunkedLoss(config, setting, parts);
    applyCheckpointing(config, setting, parts);
    parts.saved = setting.inference ? 0 : parts.blocksSaved + parts.headSaved;
    parts.optimizerTemp = optimizerTemporaryBytes(config, setting, parts.params);

    MemoryPrediction p;
    setPeak(config, setting, parts, p);
    setCategoryMaxima(config, setting, parts, p);
    p.deviceBytes = deviceMemoryBytes(config);
    explain(config, setting, parts, p);
    return p;
}

int64_t preflightBytes(const RunConfig& config) {
    // The ranks of a CPU run share one machine's memory; on CUDA each has its device.
    const double ranks = config.device == DeviceKind::Cpu ? std::max(1, config.ranks) : 1;
    return int64_t(
        std::ceil(ranks * double(predictMemory(config).peakBytes) * (1.0 + kPreflightMargin)));
}

}  // namespace stepscope
