"""The reference Transformer LM of design.md in plain PyTorch.

An independent implementation, written from the design rather than from the
C++ code: the tests check StepScope's model against it (checkpoints, logits,
loss), and the PyTorch worker (stepscope.worker) runs it for the pytorch and
pytorch-compile engines (benchmarks/compare_engines.py times them).

Attention is "naive" (softmax(QK^T/sqrt(d) + causal mask) V, written out),
"sdpa" (torch.nn.functional.scaled_dot_product_attention, causal),
"flash-pytorch" or "flash-triton" (our FlashAttention-2, stepscope.attention),
or any function (q, k, v) -> o on (batch, heads, seq, d) tensors (the
worker's adapter of the user's py_attention): the same function, so the
same weights give the same logits.
"""
import math

import torch
from torch import nn

PRESETS = {
    "nano": (64, 256, 2, 4),
    "tiny": (128, 512, 4, 4),
    "small": (768, 3072, 12, 12),
    "medium": (1024, 4096, 24, 16),
    "large": (1280, 5120, 36, 20),
    "xl": (1600, 6400, 48, 25),
    "2.7B": (2560, 10240, 32, 32),
    "10b": (4608, 12288, 50, 36),
    "leaderboard": (4096, 11008, 34, 32),
}
# (vocab, max context) of the presets that do not take 10000 and 2048.
PRESET_LIMITS = {"leaderboard": (151936, 32768)}
DEFAULT_VOCAB, DEFAULT_MAX_CONTEXT = 10000, 2048

ATTENTIONS = ("naive", "sdpa", "flash-pytorch", "flash-triton")


def trunc_normal_linear(weight):
    d_out, d_in = weight.shape
    std = math.sqrt(2.0 / (d_in + d_out))
    nn.init.trunc_normal_(weight, mean=0.0, std=std, a=-3 * std, b=3 * std)


class Linear(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(d_out, d_in))
        trunc_normal_linear(self.weight)

    def forward(self, x):
        return x @ self.weight.T


class Embedding(nn.Module):
    def __init__(self, vocab, d_model):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(vocab, d_model))
        nn.init.trunc_normal_(self.weight, mean=0.0, std=1.0, a=-3.0, b=3.0)

    def forward(self, tokens):
        return self.weight[tokens]


class RMSNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.eps = eps

    def forward(self, x):
        in_dtype = x.dtype
        x = x.to(torch.float32)
        rms = torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (x / rms * self.weight).to(in_dtype)


class RoPE(nn.Module):
    def __init__(self, d_head, max_context, theta=10000.0):
        super().__init__()
        inv_freq = theta ** (-torch.arange(0, d_head, 2, dtype=torch.float32) / d_head)
        angles = torch.arange(max_context, dtype=torch.float32)[:, None] * inv_freq[None, :]
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x, positions):
        cos, sin = self.cos[positions], self.sin[positions]
        x_even, x_odd = x[..., 0::2], x[..., 1::2]
        out = torch.empty_like(x, dtype=torch.promote_types(x.dtype, cos.dtype))
        out[..., 0::2] = x_even * cos - x_odd * sin
        out[..., 1::2] = x_even * sin + x_odd * cos
        return out.to(x.dtype)


def naive_attention(q, k, v, causal=True):
    """softmax(QK^T/sqrt(d) + causal mask) V on (batch, heads, seq, d) tensors."""
    t = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        future = torch.triu(torch.ones(t, t, dtype=torch.bool, device=q.device), diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def sdpa_attention(q, k, v):
    return nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def flash_attention(name):
    """Ours, imported when asked for: flash-triton's kernels are decorated at
    import, after the worker has chosen Triton's compiler or interpreter."""
    from .attention import backends

    return backends.ours(name).model_attention()


def attention_function(name):
    """The causal attention function (q, k, v) -> o called `name` (one of
    ATTENTIONS), or `name` itself where it is such a function."""
    if callable(name):
        return name
    functions = {"naive": naive_attention, "sdpa": sdpa_attention}
    if name in functions:
        return functions[name]
    if name in ATTENTIONS:
        return flash_attention(name)
    raise ValueError(f"attention '{name}' is not one of {', '.join(ATTENTIONS)}")


class Attention(nn.Module):
    def __init__(self, d_model, heads, rope, attention="naive"):
        super().__init__()
        self.heads = heads
        self.attend = attention_function(attention)
        self.q_proj = Linear(d_model, d_model)
        self.k_proj = Linear(d_model, d_model)
        self.v_proj = Linear(d_model, d_model)
        self.output_proj = Linear(d_model, d_model)
        self.rope = rope

    def forward(self, x, positions):
        b, t, d = x.shape
        split = lambda y: y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        q = self.rope(split(self.q_proj(x)), positions)
        k = self.rope(split(self.k_proj(x)), positions)
        v = split(self.v_proj(x))
        out = self.attend(q, k, v)
        return self.output_proj(out.transpose(1, 2).reshape(b, t, d))


class SwiGLU(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = Linear(d_model, d_ff)
        self.w2 = Linear(d_ff, d_model)
        self.w3 = Linear(d_model, d_ff)

    def forward(self, x):
        return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, d_model, d_ff, heads, rope, attention="naive"):
        super().__init__()
        self.ln1 = RMSNorm(d_model)
        self.attn = Attention(d_model, heads, rope, attention)
        self.ln2 = RMSNorm(d_model)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, positions):
        x = x + self.attn(self.ln1(x), positions)
        return x + self.ffn(self.ln2(x))


class TransformerLM(nn.Module):
    def __init__(self, vocab, d_model, d_ff, layers, heads, max_context=2048, theta=10000.0,
                 attention="naive"):
        super().__init__()
        self.token_embeddings = Embedding(vocab, d_model)
        rope = RoPE(d_model // heads, max_context, theta)
        self.layers = nn.ModuleList(
            Block(d_model, d_ff, heads, rope, attention) for _ in range(layers))
        self.ln_final = RMSNorm(d_model)
        self.lm_head = Linear(d_model, vocab)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.token_embeddings(tokens)
        for layer in self.layers:
            x = layer(x, positions)
        return self.lm_head(self.ln_final(x))


def parameter_count(vocab, d_model, d_ff, layers):
    """The model's parameters in closed form: embedding and LM head, per block
    the four projections, the SwiGLU and two norms, and the final norm."""
    per_layer = 4 * d_model * d_model + 3 * d_model * d_ff + 2 * d_model
    return 2 * vocab * d_model + layers * per_layer + d_model


def from_preset(name, vocab=10000, max_context=2048, attention="naive"):
    d_model, d_ff, layers, heads = PRESETS[name]
    return TransformerLM(vocab, d_model, d_ff, layers, heads, max_context, attention=attention)


def next_token_loss(model, tokens):
    logits = model(tokens[:, :-1])
    return nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]).float(), tokens[:, 1:].reshape(-1))
