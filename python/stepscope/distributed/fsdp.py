"""Fully sharded data parallelism, the course's way.

Every Linear and Embedding weight (torch's classes and any module class of
those names, like the course's: a Linear computes x @ weight.T, plus its
bias if it has one; an Embedding looks rows up) is flattened, padded to a
multiple of the world size and cut into one shard per rank; the module's
`weight` becomes the rank's shard, the fp32 master the optimizer updates.
Before the module's forward its weight is all-gathered, and freed after;
backward gathers it again, and the weight's gradient is reduce-scattered
(averaged) into the shard's. A weight tied between modules is one shard.
The other parameters (norms, biases) are replicated and all-reduced in
finish_gradient_synchronization().

compute_dtype: a sharded weight is gathered in that dtype and its module's
input cast to it; the rest computes in the dtypes the module holds.
Gradients are reduced in fp32, the master's dtype.
"""
import math
import types

import torch
import torch.distributed as dist
from torch import nn

from .ddp import average_flat, broadcast_from_rank0

SHARDED_CLASSES = ("Linear", "Embedding")


class _Layout:
    """Where one weight's shards sit in its flat, padded whole."""

    def __init__(self, weight, compute_dtype):
        self.shape = weight.shape
        self.numel = weight.numel()
        self.world = dist.get_world_size()
        self.per_rank = math.ceil(self.numel / self.world)
        self.compute_dtype = compute_dtype or weight.dtype

    def shard_of(self, weight):
        flat = torch.zeros(self.per_rank * self.world, dtype=weight.dtype, device=weight.device)
        flat[: self.numel] = weight.detach().reshape(-1)
        start = dist.get_rank() * self.per_rank
        return flat[start : start + self.per_rank].clone()

    def gather(self, shard, dtype=None):
        dtype = dtype or self.compute_dtype
        whole = torch.empty(self.per_rank * self.world, dtype=dtype, device=shard.device)
        dist.all_gather_into_tensor(whole, shard.detach().to(dtype).contiguous())
        return whole[: self.numel].view(self.shape)

    def reduce_scatter(self, grad, shard):
        flat = torch.zeros(self.per_rank * self.world, dtype=torch.float32, device=grad.device)
        flat[: self.numel] = grad.reshape(-1)
        mine = torch.empty(self.per_rank, dtype=torch.float32, device=grad.device)
        dist.reduce_scatter_tensor(mine, flat)
        return mine.div_(self.world).to(shard.dtype)


class _ShardedLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, shard, layout):
        weight = layout.gather(shard)
        ctx.save_for_backward(x, shard)
        ctx.layout = layout
        return x.to(weight.dtype) @ weight.T

    @staticmethod
    def backward(ctx, grad_out):
        x, shard = ctx.saved_tensors
        layout = ctx.layout
        weight = layout.gather(shard)  # gathered again: forward's copy was freed
        grad_x = (grad_out @ weight).to(x.dtype) if ctx.needs_input_grad[0] else None
        grad_shard = None
        if ctx.needs_input_grad[1]:
            rows = grad_out.reshape(-1, grad_out.shape[-1])
            grad_weight = rows.T @ x.to(weight.dtype).reshape(-1, x.shape[-1])
            grad_shard = layout.reduce_scatter(grad_weight, shard)
        return grad_x, grad_shard, None


class _ShardedEmbedding(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tokens, shard, layout):
        ctx.save_for_backward(tokens, shard)
        ctx.layout = layout
        return layout.gather(shard)[tokens]

    @staticmethod
    def backward(ctx, grad_out):
        tokens, shard = ctx.saved_tensors
        if not ctx.needs_input_grad[1]:
            return None, None, None
        layout = ctx.layout
        rows = grad_out.reshape(-1, layout.shape[-1]).float()
        grad_weight = torch.zeros(layout.shape, dtype=torch.float32, device=rows.device)
        grad_weight.index_add_(0, tokens.reshape(-1), rows)
        return None, layout.reduce_scatter(grad_weight, shard), None


def _sharded_linear_forward(module, x):
    out = _ShardedLinear.apply(x, module.weight, module._stepscope_layout)
    bias = getattr(module, "bias", None)
    return out if bias is None else out + bias


def _sharded_embedding_forward(module, tokens):
    return _ShardedEmbedding.apply(tokens, module.weight, module._stepscope_layout)


class FSDP(nn.Module):
    def __init__(self, module, compute_dtype=None):
        super().__init__()
        self.module = module
        self.compute_dtype = compute_dtype
        broadcast_from_rank0(module)
        shards = {}  # id of the whole weight -> (its shard, its layout): ties stay tied
        self._names_of_shards = set()
        for name, sub in module.named_modules():
            weight = getattr(sub, "weight", None)
            if type(sub).__name__ not in SHARDED_CLASSES or not isinstance(weight, nn.Parameter):
                continue
            if id(weight) not in shards:
                layout = _Layout(weight, compute_dtype)
                shard = nn.Parameter(layout.shard_of(weight), requires_grad=weight.requires_grad)
                shards[id(weight)] = (shard, layout)
            shard, layout = shards[id(weight)]
            sub.weight = shard
            sub._stepscope_layout = layout
            forward = _sharded_linear_forward
            if type(sub).__name__ == "Embedding":
                forward = _sharded_embedding_forward
            sub.forward = types.MethodType(forward, sub)
            self._names_of_shards.add(f"{name}.weight" if name else "weight")
        sharded = {id(shard) for shard, _ in shards.values()}
        self._replicated = [
            p for p in module.parameters() if p.requires_grad and id(p) not in sharded
        ]

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def finish_gradient_synchronization(self):
        """Averages the replicated parameters' gradients (the shards' were
        reduce-scattered during backward)."""
        by_dtype = {}
        for param in self._replicated:
            if param.grad is not None:
                by_dtype.setdefault(param.grad.dtype, []).append(param.grad)
        for grads in by_dtype.values():
            average_flat(grads)

    def gather_full_params(self):
        """Every parameter by its name in the module, whole: sharded weights
        all-gathered from their fp32 masters, replicated ones as they are. A
        tied weight appears under each of its names."""
        full = {}
        for name, param in self.module.named_parameters(remove_duplicate=False):
            if name in self._names_of_shards:
                owner = self.module.get_submodule(name.rpartition(".")[0])
                full[name] = owner._stepscope_layout.gather(param, dtype=param.dtype)
            else:
                full[name] = param.detach()
        return full
