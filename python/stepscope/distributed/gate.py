"""Checked before it is timed: a strategy trains a small model a few steps
on the run's ranks, and its parameters must match single-process training
on the whole batch (computed on every rank, without collectives).

The check steps with SGD with momentum: its update scales with the
gradient, so gradients summed where they should be averaged show (Adam's
update would hide them), and its momentum is optimizer state, so a sharded
optimizer that loses or misplaces state shows too.
"""
import copy
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn.functional as F

from .ddp import broadcast_from_rank0
from .strategies import prepare

# Relative to the parameter's largest magnitude. fp32 differs from the
# single process only by the order of sums; a compute dtype by its rounding
# of one step's gradients (bf16 keeps 8 bits, fp16 11), so it runs one step.
TOLERANCE = {None: 1e-5, torch.float32: 1e-5, torch.bfloat16: 1e-2, torch.float16: 1e-3}
GATE_STEPS = 3
GATE_OPTIMIZER = (torch.optim.SGD, {"lr": 0.5, "momentum": 0.9})


@dataclass
class GateResult:
    ok: bool
    max_rel_error: float
    worst_parameter: str
    tolerance: float


def language_model_loss(model, tokens):
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(),
                           tokens[:, 1:].reshape(-1))


def rank_share(tokens):
    """This rank's rows of a global batch (which the world size divides)."""
    rank, world = dist.get_rank(), dist.get_world_size()
    per_rank = tokens.shape[0] // world
    return tokens[rank * per_rank:(rank + 1) * per_rank]


def cast_like_compute_dtype(model, dtype):
    """The single-process model a compute dtype stands for: every Linear and
    Embedding (by class name) computes with its weight, and a Linear with
    its input, cast to dtype; the rest as the model holds it."""
    for module in model.modules():
        kind = type(module).__name__
        if kind == "Linear":
            module.forward = lambda x, m=module: (
                x.to(dtype) @ m.weight.to(dtype).T
                + (0 if getattr(m, "bias", None) is None else m.bias))
        elif kind == "Embedding":
            module.forward = lambda tokens, m=module: m.weight.to(dtype)[tokens]
    return model


def worst_error(ours, reference):
    worst, worst_name = 0.0, ""
    for name, expected in reference.items():
        if name not in ours:
            return float("inf"), name
        got = ours[name].detach().float()
        if got.shape != expected.shape:
            return float("inf"), name
        scale = expected.abs().max().clamp_min(1e-12)
        error = ((got - expected.float()).abs().max() / scale).item()
        if not error <= worst:  # NaN counts as worst
            worst, worst_name = error, name
    return worst, worst_name


def train_single_process(model, batches, loss=language_model_loss):
    optimizer_cls, kwargs = GATE_OPTIMIZER
    optimizer = optimizer_cls(model.parameters(), **kwargs)
    for tokens in batches:
        optimizer.zero_grad()
        loss(model, tokens).backward()
        optimizer.step()
    return {name: p.detach().clone() for name, p in model.named_parameters(remove_duplicate=False)}


def check_strategy(strategy, make_model, batches, compute_dtype=None, bucket_mb=25.0,
                   users=None, loss=language_model_loss):
    """Trains make_model() with strategy on this rank's share of each global
    batch and holds the result against one process training rank 0's model
    on the whole batches."""
    start = make_model()
    # Rank 0's start on every rank: the wrapper must broadcast it itself.
    reference_model = copy.deepcopy(start)
    broadcast_from_rank0(reference_model)
    if compute_dtype not in (None, torch.float32):
        batches = batches[:1]
        cast_like_compute_dtype(reference_model, compute_dtype)
    reference = train_single_process(reference_model, batches, loss)
    optimizer_cls, kwargs = GATE_OPTIMIZER
    prepared = prepare(strategy, start, optimizer_cls, kwargs, bucket_mb,
                       compute_dtype, users)
    for tokens in batches:
        prepared.optimizer.zero_grad()
        loss(prepared.model, rank_share(tokens)).backward()
        prepared.finish_gradient_synchronization()
        prepared.optimizer.step()
    error, name = worst_error(prepared.full_parameters(), reference)
    tolerance = TOLERANCE[compute_dtype]
    return GateResult(error <= tolerance, error, name, tolerance)
