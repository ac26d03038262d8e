#include "model/transformer.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/cross_entropy_loss.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/outer.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/stack.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>

#include "model/activation_checkpoint.h"
#include "profile/trace_range.h"

namespace stepscope {

namespace {

thread_local ForwardTap* currentTap = nullptr;

at::Tensor tapped(const torch::nn::Module& module, at::Tensor output, const char* role = "") {
    if (currentTap) {
        currentTap->onOutput(module, role, output);
    }
    return output;
}

// Truncated normal on [-3σ, 3σ] by inverse CDF, as torch.nn.init.trunc_normal_.
void truncatedNormal(at::Tensor& tensor, double std) {
    if (tensor.device().is_meta()) {
        return;
    }
    c10::InferenceMode guard;
    auto normalCdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
    const double lower = normalCdf(-3.0);
    const double upper = normalCdf(3.0);
    tensor.uniform_(2 * lower - 1, 2 * upper - 1);
    tensor.erfinv_();
    tensor.mul_(std * std::sqrt(2.0));
    tensor.clamp_(-3 * std, 3 * std);
}

}  // namespace

LinearImpl::LinearImpl(int64_t dIn, int64_t dOut, const at::TensorOptions& options) {
    weight = register_parameter("weight", at::empty({dOut, dIn}, options));
    truncatedNormal(weight, std::sqrt(2.0 / static_cast<double>(dIn + dOut)));
}

ForwardTapScope::ForwardTapScope(ForwardTap* tap) : previous_(currentTap) {
    currentTap = tap;
}
ForwardTapScope::~ForwardTapScope() {
    currentTap = previous_;
}

at::Tensor LinearImpl::forward(const at::Tensor& x) {
    return tapped(*this, at::linear(x, weight));
}

EmbeddingImpl::EmbeddingImpl(int64_t vocabSize, int64_t dModel, const at::TensorOptions& options) {
    weight = register_parameter("weight", at::empty({vocabSize, dModel}, options));
    truncatedNormal(weight, 1.0);
}

at::Tensor EmbeddingImpl::forward(const at::Tensor& tokens) {
    return tapped(*this, at::embedding(weight, tokens));
}

RMSNormImpl::RMSNormImpl(int64_t dModel, const at::TensorOptions& options, double eps) : eps(eps) {
    weight = register_parameter("weight", at::ones({dModel}, options));
}

at::Tensor RMSNormImpl::forward(const at::Tensor& x) {
    const auto inputType = x.scalar_type();
    const at::Tensor x32 = x.to(at::kFloat);
    const at::Tensor inverseRms = at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
    return tapped(*this, (x32 * inverseRms * weight).to(inputType));
}

RotaryEmbedding::RotaryEmbedding(int64_t headDim, int64_t maxContext, double theta,
                                 const at::TensorOptions& options) {
    const auto fp32 = options.dtype(at::kFloat);
    const at::Tensor pairIndex = at::arange(0, headDim / 2, fp32);
    const at::Tensor inverseFrequency =
        at::pow(theta, pairIndex * (-2.0 / static_cast<double>(headDim)));
    const at::Tensor angles = at::outer(at::arange(0, maxContext, fp32), inverseFrequency);
    cos_ = at::cos(angles);
    sin_ = at::sin(angles);
}

at::Tensor RotaryEmbedding::apply(const at::Tensor& x, const at::Tensor& positions) const {
    const at::Tensor cos = cos_.index_select(0, positions);
    const at::Tensor sin = sin_.index_select(0, positions);
    auto pairs = x.unflatten(-1, {x.size(-1) / 2, 2});
    const at::Tensor even = pairs.select(-1, 0);
    const at::Tensor odd = pairs.select(-1, 1);
    const at::Tensor rotated = at::stack({even * cos - odd * sin, even * sin + odd * cos}, -1);
    return rotated.flatten(-2).to(x.scalar_type());
}

SwiGLUImpl::SwiGLUImpl(int64_t dModel, int64_t dFf, const at::TensorOptions& options) {
    w1 = register_module("w1", Linear(dModel, dFf, options));
    w2 = register_module("w2", Linear(dFf, dModel, options));
    w3 = register_module("w3", Linear(dModel, dFf, options));
}

at::Tensor SwiGLUImpl::forward(const at::Tensor& x) {
    return tapped(*this, w2(at::silu(w1(x)) * w3(x)));
}

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const ModelDims& dims,
                                                 std::shared_ptr<const RotaryEmbedding> rope,
                                                 std::shared_ptr<AttentionBackend> backend,
                                                 const at::TensorOptions& options)
    : heads_(dims.heads), rope_(std::move(rope)), backend_(std::move(backend)) {
    q_proj = register_module("q_proj", Linear(dims.dModel, dims.dModel, options));
    k_proj = register_module("k_proj", Linear(dims.dModel, dims.dModel, options));
    v_proj = register_module("v_proj", Linear(dims.dModel, dims.dModel, options));
    output_proj = register_module("output_proj", Linear(dims.dModel, dims.dModel, options));
}

at::Tensor CausalSelfAttentionImpl::forward(const at::Tensor& x, const at::Tensor& positions) {
    const int64_t batch = x.size(0);
    const int64_t seq = x.size(1);
    auto splitHeads = [&](const at::Tensor& t) {
        return t.view({batch, seq, heads_, -1}).transpose(1, 2);  // (B, H, T, d_head)
    };
    const at::Tensor q = rope_->apply(splitHeads(q_proj(x)), positions);
    const at::Tensor k = rope_->apply(splitHeads(k_proj(x)), positions);
    const at::Tensor v = splitHeads(v_proj(x));
    const at::Tensor attended =
        tapped(*this, backend_->forward(q, k, v, /*causal=*/true), "attention core");
    return tapped(*this, output_proj(attended.transpose(1, 2).reshape({batch, seq, -1})));
}

TransformerBlockImpl::TransformerBlockImpl(int64_t index, const ModelDims& dims,
                                           std::shared_ptr<const RotaryEmbedding> rope,
                                           std::shared_ptr<AttentionBackend> backend,
                                           const at::TensorOptions& options)
    : rangeName_("layers." + std::to_string(index)),
      attnRangeName_(rangeName_ + ".attn"),
      ffnRangeName_(rangeName_ + ".ffn") {
    ln1 = register_module("ln1", RMSNorm(dims.dModel, options));
    attn = register_module("attn",
                           CausalSelfAttention(dims, std::move(rope), std::move(backend), options));
    ln2 = register_module("ln2", RMSNorm(dims.dModel, options));
    ffn = register_module("ffn", SwiGLU(dims.dModel, dims.dFf, options));
}

at::Tensor TransformerBlockImpl::forward(const at::Tensor& x, const at::Tensor& positions) {
    const TraceRange range(rangeName_);
    at::Tensor h = ln1(x);
    {
        const TraceRange attnRange(attnRangeName_);
        h = x + attn(h, positions);
    }
    at::Tensor out = ln2(h);
    {
        const TraceRange ffnRange(ffnRangeName_);
        out = h + ffn(out);
    }
    return tapped(*this, out);
}

TransformerLMImpl::TransformerLMImpl(const ModelDims& dims,
                                     std::shared_ptr<AttentionBackend> backend,
                                     const at::TensorOptions& options)
    : dims_(dims) {
    token_embeddings =
        register_module("token_embeddings", Embedding(dims.vocabSize, dims.dModel, options));
    auto rope = std::make_shared<const RotaryEmbedding>(dims.headDim(), dims.maxContext,
                                                        dims.ropeTheta, options);
    layers = register_module("layers", torch::nn::ModuleList());
    for (int64_t i = 0; i < dims.layers; ++i) {
        layers->push_back(TransformerBlock(i, dims, rope, backend, options));
    }
    ln_final = register_module("ln_final", RMSNorm(dims.dModel, options));
    lm_head = register_module("lm_head", Linear(dims.dModel, dims.vocabSize, options));
}

at::Tensor TransformerLMImpl::forward(const at::Tensor& tokens) {
    const at::Tensor x = hidden(tokens);
    const TraceRange range("lm_head");
    return tapped(*this, lm_head(x));
}

at::Tensor TransformerLMImpl::hidden(const at::Tensor& tokens) {
    const at::Tensor positions = at::arange(tokens.size(1), tokens.options().dtype(at::kLong));
    at::Tensor x = token_embeddings(tokens);
    const int64_t blocks = static_cast<int64_t>(layers->size());
    switch (checkpoint_.kind) {
        case CheckpointStrategy::Kind::Off:
            x = runBlocks(x, positions, 0, blocks);
            break;
        case CheckpointStrategy::Kind::Groups:
            for (int64_t first = 0; first < blocks; first += checkpoint_.groupSize) {
                const int64_t end = std::min(blocks, first + checkpoint_.groupSize);
                x = recomputedInBackward(x, [this, positions, first, end](const at::Tensor& in) {
                    return runBlocks(in, positions, first, end);
                });
            }
            break;
        case CheckpointStrategy::Kind::Nested:
            x = runNested(x, positions, 0, blocks);
            break;
    }
    return ln_final(x);
}

at::Tensor TransformerLMImpl::runBlocks(at::Tensor x, const at::Tensor& positions, int64_t first,
                                        int64_t end) {
    for (int64_t i = first; i < end; ++i) {
        x = layers->ptr(static_cast<size_t>(i))->as<TransformerBlockImpl>()->forward(x, positions);
    }
    return x;
}

at::Tensor TransformerLMImpl::runNested(const at::Tensor& x, const at::Tensor& positions,
                                        int64_t first, int64_t end) {
    if (end - first <= 1) {
        return runBlocks(x, positions, first, end);
    }
    const int64_t split = nestedSplit(first, end);
    auto half = [this, positions](int64_t from, int64_t to) {
        return [this, positions, from, to](const at::Tensor& in) {
            return runNested(in, positions, from, to);
        };
    };
    return recomputedInBackward(recomputedInBackward(x, half(first, split)), half(split, end));
}

at::Tensor crossEntropyLoss(const at::Tensor& logits, const at::Tensor& targets) {
    return at::cross_entropy_loss(logits.flatten(0, 1).to(at::kFloat), targets.flatten());
}

}  // namespace stepscope
