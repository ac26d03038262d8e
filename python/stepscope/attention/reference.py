"""Attention written out in float64: what every backend is held against.

softmax(Q Kᵀ / sqrt(d), causal mask top-left aligned) V, and the logsumexp
L of each query row's scaled, masked scores (what a FlashAttention saves).
"""
import math

import torch


def reference_attention(q, k, v, is_causal):
    """(o, logsumexp) in float64 for (..., seq, d) tensors, differentiable."""
    q, k, v = q.double(), k.double(), v.double()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if is_causal:
        seq_q, seq_k = q.shape[-2], k.shape[-2]
        future = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    logsumexp = torch.logsumexp(scores, dim=-1)
    return torch.exp(scores - logsumexp[..., None]) @ v, logsumexp
