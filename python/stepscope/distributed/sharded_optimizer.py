"""Optimizer-state sharding: each rank keeps the state of its shard of the
parameters only (ZeRO stage 1).

The parameters are dealt to ranks greedily by size, so shards hold about
the same bytes; each rank steps an optimizer of the given class over its
own, then every parameter is broadcast from the rank that owns it. The
optimizer's param_groups hold every parameter, as the caller gave them (so
zero_grad, a learning-rate scheduler and the caller's eyes see them all);
their hyperparameters are copied to the inner optimizer before each step.
"""
import torch
import torch.distributed as dist


class ShardedOptimizer(torch.optim.Optimizer):
    def __init__(self, params, optimizer_cls, **kwargs):
        self._optimizer_cls = optimizer_cls
        self._kwargs = kwargs
        self._owner = {}
        self._shard_bytes = [0] * dist.get_world_size()
        self.local = None  # the inner optimizer, over this rank's shard
        super().__init__(params, kwargs)

    def add_param_group(self, param_group):
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        mine = []
        for param in group["params"]:
            rank = min(range(len(self._shard_bytes)), key=self._shard_bytes.__getitem__)
            self._shard_bytes[rank] += param.numel() * param.element_size()
            self._owner[param] = rank
            if rank == dist.get_rank():
                mine.append(param)
        local_group = {key: value for key, value in group.items() if key != "params"}
        local_group["params"] = mine
        if self.local is None:
            self.local = self._optimizer_cls([local_group], **self._kwargs)
        else:
            self.local.add_param_group(local_group)

    def owner_of(self, param):
        """The rank that keeps this parameter's optimizer state."""
        return self._owner[param]

    @torch.no_grad()
    def step(self, closure=None, **kwargs):
        for group, local_group in zip(self.param_groups, self.local.param_groups):
            for key, value in group.items():
                if key != "params":
                    local_group[key] = value
        with torch.enable_grad():
            loss = self.local.step(closure, **kwargs)
        for group in self.param_groups:
            for param in group["params"]:
                dist.broadcast(param, src=self._owner[param])
        return loss
