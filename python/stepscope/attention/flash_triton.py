"""FlashAttention-2 in Triton: the course's second version of the kernel.

The forward is one Triton kernel (a program per query tile × batch·head,
online softmax in fp32, key tiles above the causal diagonal skipped, the
logsumexp L written); the backward is Triton kernels too: D = rowsum(dO ∘ O)
in one PyTorch reduction, then one kernel for dK and dV (a program per key
tile) and one for dQ (a program per query tile), no atomics.

On a machine without CUDA, or when the worker runs a request on the CPU,
the kernels run in Triton's interpreter (see triton_mode): the same code,
checked on CPU tensors, never timed there.
"""
import math

import torch

from . import triton_mode
from .layout import as_four_dims, check_inputs

if not triton_mode.interpreting() and not torch.cuda.is_available():
    triton_mode.use_interpreter()  # nothing but the interpreter can run the kernels here
triton_mode.fix_interpreter()
triton_mode.check_interpreter_ready()

from . import triton_kernels  # noqa: E402  (decorated now: compiled or interpreted)

# What the grid shows for this backend's backward.
BACKWARD = "triton kernels (dK/dV pass, dQ pass)"
INTERPRETED = triton_mode.interpreting()

HEAD_DIMS = (16, 128)  # the smallest and largest head dim the tile table serves
DOT_PRECISIONS = {torch.float32: "ieee", torch.bfloat16: "tf32", torch.float16: "tf32"}


def tile_sizes(block_d, dtype):
    """(BLOCK_Q, BLOCK_K, num_warps, num_stages) per padded head dim and dtype:
    fp32 tiles of d=128 take twice the shared memory, so their key tile halves."""
    if dtype == torch.float32 and block_d > 64:
        return 64, 32, 4, 2
    return 64, 64, 4, 2


def launch_options(q, seq_q, seq_k):
    head_dim = q.shape[-1]
    if not HEAD_DIMS[0] <= head_dim <= HEAD_DIMS[1]:
        raise ValueError(f"flash-triton serves head dims {HEAD_DIMS[0]} to {HEAD_DIMS[1]}, "
                         f"got {head_dim}")
    if q.dtype not in DOT_PRECISIONS:
        raise ValueError(f"flash-triton serves fp32, bf16 and fp16, got {q.dtype}")
    if q.device.type == "cpu" and not INTERPRETED:
        raise RuntimeError("flash-triton: CPU tensors need Triton's interpreter, and this "
                           "process compiled its kernels for the GPU; set TRITON_INTERPRET=1 "
                           "before stepscope.attention.flash_triton is imported")
    block_d = max(16, triton_next_power_of_two(head_dim))
    block_q, block_k, warps, stages = tile_sizes(block_d, q.dtype)
    constants = {"DOT_PRECISION": DOT_PRECISIONS[q.dtype], "BLOCK_Q": block_q,
                 "BLOCK_K": block_k, "BLOCK_D": block_d}
    if not INTERPRETED:
        constants.update(num_warps=warps, num_stages=stages)
    return constants


def triton_next_power_of_two(n):
    return 1 << (int(n) - 1).bit_length()


def ceil_div(a, b):
    return -(-a // b)


def strides(tensor):
    return tuple(tensor.stride())


class FlashAttentionTriton(torch.autograd.Function):
    """apply(q, k, v, is_causal=False) -> o for (batch, seq, d) or
    (batch, heads, seq, d) tensors in fp32, bf16 or fp16, head dims 16-128;
    saves O, Q, K, V and L (batch[, heads], seq_q) in fp32. Causal masking
    is top-left aligned (key j <= query i)."""

    @staticmethod
    def forward(ctx, q, k, v, is_causal=False):
        check_inputs(q, k, v)
        is_causal = bool(is_causal)
        q4, k4, v4 = as_four_dims(q), as_four_dims(k), as_four_dims(v)
        batch, heads, seq_q, head_dim = q4.shape
        seq_k = k4.shape[-2]
        options = launch_options(q, seq_q, seq_k)
        out = torch.empty((batch, heads, seq_q, head_dim), dtype=q.dtype, device=q.device)
        logsumexp = torch.empty((batch, heads, seq_q), dtype=torch.float32, device=q.device)
        grid = (ceil_div(seq_q, options["BLOCK_Q"]), batch * heads)
        triton_kernels.flash_forward_kernel[grid](
            q4, k4, v4, out, logsumexp, *strides(q4), *strides(k4), *strides(v4), *strides(out),
            heads, seq_q, seq_k, head_dim, 1.0 / math.sqrt(head_dim), IS_CAUSAL=is_causal,
            **options)
        out = out.reshape(q.shape)
        logsumexp = logsumexp.reshape(q.shape[:-1])
        ctx.save_for_backward(q, k, v, out, logsumexp)
        ctx.is_causal = is_causal
        return out

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, out, logsumexp = ctx.saved_tensors
        q4, k4, v4 = as_four_dims(q), as_four_dims(k), as_four_dims(v)
        grad_o = as_four_dims(grad_out)
        batch, heads, seq_q, head_dim = q4.shape
        seq_k = k4.shape[-2]
        options = launch_options(q, seq_q, seq_k)
        # D_i = rowsum(dO ∘ O): one reduction, contiguous (batch, heads, seq_q) in fp32.
        delta = (grad_o.float() * as_four_dims(out).float()).sum(dim=-1).contiguous()
        lse = logsumexp.reshape(batch, heads, seq_q).contiguous()
        grad_q = torch.empty((batch, heads, seq_q, head_dim), dtype=q.dtype, device=q.device)
        grad_k = torch.empty((batch, heads, seq_k, head_dim), dtype=k.dtype, device=q.device)
        grad_v = torch.empty_like(grad_k)
        common = (*strides(q4), *strides(k4), *strides(v4), *strides(grad_o),
                  heads, seq_q, seq_k, head_dim, 1.0 / math.sqrt(head_dim))
        triton_kernels.flash_backward_dkdv_kernel[
            (ceil_div(seq_k, options["BLOCK_K"]), batch * heads)](
            q4, k4, v4, grad_o, lse, delta, grad_k, grad_v, *common,
            IS_CAUSAL=ctx.is_causal, **options)
        triton_kernels.flash_backward_dq_kernel[
            (ceil_div(seq_q, options["BLOCK_Q"]), batch * heads)](
            q4, k4, v4, grad_o, lse, delta, grad_q, *common, IS_CAUSAL=ctx.is_causal, **options)
        return grad_q.reshape(q.shape), grad_k.reshape(k.shape), grad_v.reshape(v.shape), None

