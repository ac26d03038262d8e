"""The strategies a distributed run trains with, by name: ours, torch's as
references, and the user's own (the course's shapes, MODULE:NAME).

prepare() gives every rank the same four things whatever the strategy: the
model to call, its optimizer, what to call after backward, and the whole
parameters by name (to check them against single-process training).
"""
from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn

from ..python_target import find_object
from .ddp import DDP, BucketedDDP, FlatDDP, NaiveDDP, broadcast_from_rank0
from .fsdp import FSDP
from .sharded_optimizer import ShardedOptimizer

OURS = ("naive", "flat", "overlap", "bucketed", "sharded-optimizer", "fsdp")
TORCH = ("torch-ddp", "torch-fsdp")
PARALLEL = OURS + TORCH


@dataclass
class Prepared:
    model: nn.Module
    optimizer: torch.optim.Optimizer
    finish_gradient_synchronization: Callable[[], None]
    full_parameters: Callable[[], dict]


@dataclass
class UserStrategies:
    """The user's classes or factories, each MODULE:NAME (empty: ours)."""

    ddp: str = ""
    fsdp: str = ""
    sharded_optimizer: str = ""
    py_path: str = ""


def _parameters_of(module):
    return lambda: {name: p.detach() for name, p in
                    module.named_parameters(remove_duplicate=False)}


def _torch_ddp(module, bucket_mb):
    from torch.nn.parallel import DistributedDataParallel

    wrapped = DistributedDataParallel(module, bucket_cap_mb=bucket_mb)
    return wrapped, (lambda: None), _parameters_of(module)


def _torch_fsdp(module, compute_dtype):
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    broadcast_from_rank0(module)  # fully_shard cuts each rank's own tensors
    policy = MixedPrecisionPolicy(param_dtype=compute_dtype)
    for block in getattr(module, "layers", []):
        fully_shard(block, mp_policy=policy)
    fully_shard(module, mp_policy=policy)

    def full_parameters():
        return {name: p.full_tensor().detach() for name, p in
                module.named_parameters(remove_duplicate=False)}

    return module, (lambda: None), full_parameters


def _ours_or_users(strategy, module, bucket_mb, compute_dtype, users):
    if strategy == "fsdp":
        cls = find_object(users.fsdp, users.py_path, "py_fsdp", "CLASS") if users.fsdp else FSDP
        wrapped = cls(module, compute_dtype)
        return wrapped, wrapped.finish_gradient_synchronization, wrapped.gather_full_params
    if users.ddp:
        cls = find_object(users.ddp, users.py_path, "py_ddp", "CLASS")
        wrapped = cls(module)
    elif strategy == "bucketed":
        wrapped = BucketedDDP(module, bucket_mb)
    else:
        wrapped = {"naive": NaiveDDP, "flat": FlatDDP}.get(strategy, DDP)(module)
    return wrapped, wrapped.finish_gradient_synchronization, _parameters_of(module)


def prepare(strategy, module, optimizer_cls, optimizer_kwargs, bucket_mb=25.0,
            compute_dtype=None, users=None):
    """Wraps module for strategy (one of PARALLEL) and builds its optimizer.
    Every rank must call it with the same model; rank 0's parameters win."""
    if strategy not in PARALLEL:
        raise ValueError(f"parallel: '{strategy}' is not one of {', '.join(PARALLEL)}")
    users = users or UserStrategies()
    if strategy == "torch-ddp":
        model, finish, full = _torch_ddp(module, bucket_mb)
    elif strategy == "torch-fsdp":
        model, finish, full = _torch_fsdp(module, compute_dtype)
    else:
        model, finish, full = _ours_or_users(strategy, module, bucket_mb, compute_dtype, users)
    if strategy == "sharded-optimizer":
        sharded = ShardedOptimizer
        if users.sharded_optimizer:
            sharded = find_object(users.sharded_optimizer, users.py_path,
                                  "py_sharded_optimizer", "CLASS")
        optimizer = sharded(model.parameters(), optimizer_cls, **optimizer_kwargs)
    else:
        optimizer = optimizer_cls(model.parameters(), **optimizer_kwargs)
    return Prepared(model, optimizer, finish, full)
