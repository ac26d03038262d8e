#pragma once

// core/model: the Transformer LM (here) and what trains it: activation
// checkpointing, the chunked loss, the optimizers; its weights as torch.save
// files and from_pretrained folders, and a checkpoint's loss on a batch.
// Includes attention/ and interop/ (the torch.save reader).

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>

#include <memory>

#include "attention/attention_backend.h"
#include "config/checkpoint_strategy.h"
#include "config/model_dims.h"

namespace stepscope {

// Sees each module's output as a forward runs on this thread; the dtype-flow
// inspector uses it. `role` is empty for a module's output, or names an inner
// tensor ("attention core": what the attention backend returned).
class ForwardTap {
public:
    virtual ~ForwardTap() = default;
    virtual void onOutput(const torch::nn::Module& module, const char* role,
                          const at::Tensor& output) = 0;
};

// Installs a tap for the current thread while alive.
class ForwardTapScope {
public:
    explicit ForwardTapScope(ForwardTap* tap);
    ~ForwardTapScope();
    ForwardTapScope(const ForwardTapScope&) = delete;
    ForwardTapScope& operator=(const ForwardTapScope&) = delete;

private:
    ForwardTap* previous_;
};

// The modules of design.md. Parameter names come from register_parameter /
// register_module and match the reference Python model's state dict.

class LinearImpl : public torch::nn::Module {
public:
    LinearImpl(int64_t dIn, int64_t dOut, const at::TensorOptions& options);
    at::Tensor forward(const at::Tensor& x);
    at::Tensor weight;  // (d_out, d_in)
};
TORCH_MODULE(Linear);

class EmbeddingImpl : public torch::nn::Module {
public:
    EmbeddingImpl(int64_t vocabSize, int64_t dModel, const at::TensorOptions& options);
    at::Tensor forward(const at::Tensor& tokens);
    at::Tensor weight;  // (vocab, d_model)
};
TORCH_MODULE(Embedding);

// x / sqrt(mean(x²) + eps) · weight, computed in fp32 and cast back.
class RMSNormImpl : public torch::nn::Module {
public:
    RMSNormImpl(int64_t dModel, const at::TensorOptions& options, double eps = 1e-5);
    at::Tensor forward(const at::Tensor& x);
    at::Tensor weight;
    double eps;
};
TORCH_MODULE(RMSNorm);

// Rotary position embedding on adjacent pairs (x[2i], x[2i+1]) with angle
// position · theta^(-2i/d). Holds its cos/sin tables; no parameters.
class RotaryEmbedding {
public:
    RotaryEmbedding(int64_t headDim, int64_t maxContext, double theta,
                    const at::TensorOptions& options);
    // x: (..., seq, head_dim); positions: (seq) int64.
    at::Tensor apply(const at::Tensor& x, const at::Tensor& positions) const;

private:
    at::Tensor cos_;  // (max_context, head_dim / 2), fp32
    at::Tensor sin_;
};

// w2(silu(w1 x) ⊙ w3 x).
class SwiGLUImpl : public torch::nn::Module {
public:
    SwiGLUImpl(int64_t dModel, int64_t dFf, const at::TensorOptions& options);
    at::Tensor forward(const at::Tensor& x);
    Linear w1{nullptr}, w2{nullptr}, w3{nullptr};
};
TORCH_MODULE(SwiGLU);

class CausalSelfAttentionImpl : public torch::nn::Module {
public:
    CausalSelfAttentionImpl(const ModelDims& dims, std::shared_ptr<const RotaryEmbedding> rope,
                            std::shared_ptr<AttentionBackend> backend,
                            const at::TensorOptions& options);
    at::Tensor forward(const at::Tensor& x, const at::Tensor& positions);
    Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, output_proj{nullptr};

private:
    int64_t heads_;
    std::shared_ptr<const RotaryEmbedding> rope_;
    std::shared_ptr<AttentionBackend> backend_;
};
TORCH_MODULE(CausalSelfAttention);

// x + Attn(RMSNorm(x)), then x + SwiGLU(RMSNorm(x)).
class TransformerBlockImpl : public torch::nn::Module {
public:
    TransformerBlockImpl(int64_t index, const ModelDims& dims,
                         std::shared_ptr<const RotaryEmbedding> rope,
                         std::shared_ptr<AttentionBackend> backend,
                         const at::TensorOptions& options);
    at::Tensor forward(const at::Tensor& x, const at::Tensor& positions);
    RMSNorm ln1{nullptr}, ln2{nullptr};
    CausalSelfAttention attn{nullptr};
    SwiGLU ffn{nullptr};

private:
    std::string rangeName_;      // "layers.3", for traces and module paths
    std::string attnRangeName_;  // "layers.3.attn"
    std::string ffnRangeName_;   // "layers.3.ffn"
};
TORCH_MODULE(TransformerBlock);

class TransformerLMImpl : public torch::nn::Module {
public:
    // Parameters are created on options' device (the meta device builds a
    // model without memory, for counting) and initialised as design.md says.
    TransformerLMImpl(const ModelDims& dims, std::shared_ptr<AttentionBackend> backend,
                      const at::TensorOptions& options);
    // tokens: (batch, seq) int64 → logits (batch, seq, vocab).
    at::Tensor forward(const at::Tensor& tokens);
    // The final norm's output (batch, seq, d_model): what the LM head reads.
    at::Tensor hidden(const at::Tensor& tokens);
    const ModelDims& dims() const { return dims_; }
    // Which blocks forward() keeps nothing of and backward recomputes; off by default.
    void setCheckpointStrategy(const CheckpointStrategy& strategy) { checkpoint_ = strategy; }
    const CheckpointStrategy& checkpointStrategy() const { return checkpoint_; }

    Embedding token_embeddings{nullptr};
    torch::nn::ModuleList layers{nullptr};
    RMSNorm ln_final{nullptr};
    Linear lm_head{nullptr};

private:
    // Blocks [first, end) one after another.
    at::Tensor runBlocks(at::Tensor x, const at::Tensor& positions, int64_t first, int64_t end);
    // Blocks [first, end) with nested checkpointing: each half checkpointed,
    // and nested again when it is recomputed.
    at::Tensor runNested(const at::Tensor& x, const at::Tensor& positions, int64_t first,
                         int64_t end);

    ModelDims dims_;
    CheckpointStrategy checkpoint_;
};
TORCH_MODULE(TransformerLM);

// Mean next-token cross-entropy of logits (B, T, V) against targets (B, T), in fp32.
at::Tensor crossEntropyLoss(const at::Tensor& logits, const at::Tensor& targets);

}  // namespace stepscope
