"""Data-parallel and sharded training on torch.distributed, with the
course's calling conventions, so that ours can stand beside a student's.

Every wrapper holds the module, forwards to it, and broadcasts rank 0's
parameters and buffers when it is built; after backward the caller calls
finish_gradient_synchronization() and then the optimizer.

- NaiveDDP: each gradient all-reduced after backward (ddp).
- FlatDDP: one flattened all-reduce after backward (ddp).
- DDP: each gradient's all-reduce started from its post-accumulate-grad
  hook, while backward goes on; waited for in finish (ddp).
- BucketedDDP: gradients packed in reverse order into buckets of
  bucket_size_mb, each all-reduced as it fills (ddp).
- ShardedOptimizer: a torch.optim.Optimizer that keeps the state of its
  rank's shard of the parameters only and broadcasts the updated ones
  (sharded_optimizer).
- FSDP: Linear and Embedding weights sharded across ranks, gathered for
  forward and again for backward, gradients reduce-scattered (fsdp).

strategies names them all (and torch's, and the user's) for a run; gate
checks one against single-process training before it is timed. A worker's
distributed run: launch starts the ranks with torchrun and merges their
events, rank_main is one rank's run, collectives records each collective
as a span (the client reads exposed communication and overlap from the
spans), rank_memory a rank's memory at its marks.

Collectives are torch.distributed's: the caller's process group (gloo on
CPU, NCCL on GPUs), its ranks started by torchrun.
"""
from .ddp import DDP, BucketedDDP, FlatDDP, NaiveDDP
from .fsdp import FSDP
from .sharded_optimizer import ShardedOptimizer

__all__ = ["NaiveDDP", "FlatDDP", "DDP", "BucketedDDP", "ShardedOptimizer", "FSDP"]
