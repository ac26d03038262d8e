"""FlashAttention-2 in Python, and how StepScope checks and runs attention
that users write themselves.

- FlashAttentionPyTorch: tiled forward with an online softmax, recompute
  backward, in PyTorch ops (flash_pytorch).
- FlashAttentionTriton: the same as Triton kernels (flash_triton). Imported
  on first use, not with this package: Triton chooses between its compiler
  and its interpreter when the kernels are decorated, from TRITON_INTERPRET
  (triton_mode), and the worker sets it first when it runs on the CPU.

Both follow the course's convention: apply(q, k, v, is_causal) on (batch,
seq, d) or (batch, heads, seq, d); saved for backward: O, Q, K, V and one
logsumexp of shape (batch[, heads], seq_q). gate holds the correctness gate
every Python backend passes before it is timed; user_attention loads the
user's (`py_attention`, MODULE:NAME); backends gives each a name.
"""
from .flash_pytorch import FlashAttentionPyTorch


def __getattr__(name):
    if name == "FlashAttentionTriton":
        from .flash_triton import FlashAttentionTriton

        return FlashAttentionTriton
    raise AttributeError(f"module 'stepscope.attention' has no attribute '{name}'")


__all__ = ["FlashAttentionPyTorch", "FlashAttentionTriton"]
