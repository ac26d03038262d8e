"""FlashAttention-2 in PyTorch ops: the course's first version of the kernel.

The forward walks tiles of Q and, inside, tiles of K and V with an online
softmax (a running row maximum m and row sum l, the output rescaled when m
grows), so no (seq_q, seq_k) matrix is ever held; it saves the logsumexp
L = m + log(l) of each query row. The backward recomputes the probabilities
P = exp(S - L) from Q, K and L one key tile at a time, as FlashAttention-2
does, instead of keeping them from the forward.

Arithmetic runs in fp32 whatever the inputs' dtype (autocast off inside),
as a fused kernel accumulates; outputs and gradients come back in the
inputs' dtype, L in fp32.
"""
import math

import torch

from .layout import as_four_dims, check_inputs


def autocast_off(device):
    return torch.autocast(device_type=device.type, enabled=False)


def causal_mask(query_rows, key_columns):
    """True where key j may not be seen from query i (j > i: the future)."""
    return key_columns[None, :] > query_rows[:, None]


class FlashAttentionPyTorch(torch.autograd.Function):
    """apply(q, k, v, is_causal=False) -> o for (batch, seq, d) or
    (batch, heads, seq, d) tensors; saves O, Q, K, V and L (batch[, heads],
    seq_q). Causal masking is top-left aligned (key j <= query i), as
    scaled_dot_product_attention's is_causal."""

    # Tile sizes: big enough that each tile is one efficient matmul, small
    # enough that a tile's scores stay small beside Q, K and V.
    Q_TILE = 128
    K_TILE = 128

    @staticmethod
    def forward(ctx, q, k, v, is_causal=False):
        check_inputs(q, k, v)
        is_causal = bool(is_causal)
        q4, k4, v4 = as_four_dims(q), as_four_dims(k), as_four_dims(v)
        seq_q, seq_k, scale = q4.shape[-2], k4.shape[-2], 1.0 / math.sqrt(q4.shape[-1])
        out = torch.empty(q4.shape, dtype=torch.float32, device=q.device)
        logsumexp = torch.empty(q4.shape[:-1], dtype=torch.float32, device=q.device)
        rows_of = torch.arange(seq_q, device=q.device)
        columns_of = torch.arange(seq_k, device=q.device)
        q_tile, k_tile = FlashAttentionPyTorch.Q_TILE, FlashAttentionPyTorch.K_TILE
        with autocast_off(q.device):
            for q_start in range(0, seq_q, q_tile):
                q_end = min(q_start + q_tile, seq_q)
                q_block = q4[..., q_start:q_end, :].float()
                row_max = torch.full(q_block.shape[:-1], float("-inf"), device=q.device)
                row_sum = torch.zeros(q_block.shape[:-1], device=q.device)
                acc = torch.zeros(q_block.shape, device=q.device)
                # Causal: key tiles that start after this tile's last query are all future.
                k_stop = min(seq_k, q_end) if is_causal else seq_k
                for k_start in range(0, k_stop, k_tile):
                    k_end = min(k_start + k_tile, seq_k)
                    scores = q_block @ k4[..., k_start:k_end, :].float().transpose(-2, -1) * scale
                    if is_causal and k_end - 1 > q_start:  # the tile crosses the diagonal
                        future = causal_mask(rows_of[q_start:q_end], columns_of[k_start:k_end])
                        scores = scores.masked_fill(future, float("-inf"))
                    new_max = torch.maximum(row_max, scores.amax(dim=-1))
                    probabilities = torch.exp(scores - new_max[..., None])
                    rescale = torch.exp(row_max - new_max)
                    row_sum = row_sum * rescale + probabilities.sum(dim=-1)
                    v_block = v4[..., k_start:k_end, :].float()
                    acc = acc * rescale[..., None] + probabilities @ v_block
                    row_max = new_max
                out[..., q_start:q_end, :] = acc / row_sum[..., None]
                logsumexp[..., q_start:q_end] = row_max + torch.log(row_sum)
        out = out.to(q.dtype).reshape(q.shape)
        logsumexp = logsumexp.reshape(q.shape[:-1])
        ctx.save_for_backward(q, k, v, out, logsumexp)
        ctx.is_causal = is_causal
        return out

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, out, logsumexp = ctx.saved_tensors
        q4, k4, v4 = as_four_dims(q), as_four_dims(k), as_four_dims(v)
        seq_q, seq_k, scale = q4.shape[-2], k4.shape[-2], 1.0 / math.sqrt(q4.shape[-1])
        with autocast_off(q.device):
            q32, do32 = q4.float(), as_four_dims(grad_out).float()
            lse = logsumexp.reshape(q4.shape[:-1])
            # D_i = rowsum(dO ∘ O) = Σ_j P_ij dP_ij: the softmax's backward needs no P row.
            delta = (do32 * as_four_dims(out).float()).sum(dim=-1)
            grad_q = torch.zeros_like(q32)
            grad_k = torch.empty(k4.shape, dtype=torch.float32, device=q.device)
            grad_v = torch.empty(v4.shape, dtype=torch.float32, device=q.device)
            rows_of = torch.arange(seq_q, device=q.device)
            columns_of = torch.arange(seq_k, device=q.device)
            k_tile = FlashAttentionPyTorch.K_TILE
            for k_start in range(0, seq_k, k_tile):
                k_end = min(k_start + k_tile, seq_k)
                # Causal: queries before this tile see none of its keys.
                first = min(k_start, seq_q) if ctx.is_causal else 0
                k_block = k4[..., k_start:k_end, :].float()
                v_block = v4[..., k_start:k_end, :].float()
                q_rows, do_rows = q32[..., first:, :], do32[..., first:, :]
                scores = q_rows @ k_block.transpose(-2, -1) * scale
                probabilities = torch.exp(scores - lse[..., first:, None])
                if ctx.is_causal:
                    future = causal_mask(rows_of[first:], columns_of[k_start:k_end])
                    probabilities = probabilities.masked_fill(future, 0.0)
                grad_v[..., k_start:k_end, :] = probabilities.transpose(-2, -1) @ do_rows
                grad_p = do_rows @ v_block.transpose(-2, -1)
                grad_s = probabilities * (grad_p - delta[..., first:, None]) * scale
                grad_k[..., k_start:k_end, :] = grad_s.transpose(-2, -1) @ q_rows
                grad_q[..., first:, :] += grad_s @ k_block
        return (grad_q.to(q.dtype).reshape(q.shape), grad_k.to(k.dtype).reshape(k.shape),
                grad_v.to(v.dtype).reshape(v.shape), None)
