"""Four ways to average gradients across data-parallel ranks.

They differ only in when the all-reduces are issued and how many there are:
after backward, one per gradient (NaiveDDP) or one for all (FlatDDP); during
backward, one per gradient as it is ready (DDP) or one per bucket as it
fills (BucketedDDP). Gradients are summed and divided by the world size
(gloo has no average). A parameter that takes no gradient (frozen) is left
alone; one that got none this step (unused) keeps None. Every rank must run
the same model, so the collectives come in the same order on each.
"""
import torch
import torch.distributed as dist
from torch import nn
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors


def broadcast_from_rank0(module):
    """Every rank starts from rank 0's parameters and buffers."""
    with torch.no_grad():
        for tensor in list(module.parameters()) + list(module.buffers()):
            dist.broadcast(tensor, src=0)


def average_flat(tensors):
    """All-reduces tensors of one dtype as one flat buffer, in place, averaged."""
    flat = _flatten_dense_tensors(tensors)
    dist.all_reduce(flat)
    flat.div_(dist.get_world_size())
    for tensor, averaged in zip(tensors, _unflatten_dense_tensors(flat, tensors)):
        tensor.copy_(averaged)


class _Replicated(nn.Module):
    """The module on every rank, as `module` (so its state_dict keys gain
    "module.", as torch's DistributedDataParallel's do)."""

    def __init__(self, module):
        super().__init__()
        self.module = module
        broadcast_from_rank0(module)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def trained_parameters(self):
        return [p for p in self.module.parameters() if p.requires_grad]


class NaiveDDP(_Replicated):
    """One blocking all-reduce per gradient, after backward."""

    def finish_gradient_synchronization(self):
        world = dist.get_world_size()
        for param in self.trained_parameters():
            if param.grad is not None:
                dist.all_reduce(param.grad)
                param.grad.div_(world)


class FlatDDP(_Replicated):
    """One all-reduce of every gradient flattened together (one per dtype)."""

    def finish_gradient_synchronization(self):
        by_dtype = {}
        for param in self.trained_parameters():
            if param.grad is not None:
                by_dtype.setdefault(param.grad.dtype, []).append(param.grad)
        for grads in by_dtype.values():
            average_flat(grads)


class DDP(_Replicated):
    """Each gradient's all-reduce starts as soon as autograd has accumulated
    it, so communication runs while backward computes the rest."""

    def __init__(self, module):
        super().__init__(module)
        self._pending = []
        for param in self.trained_parameters():
            param.register_post_accumulate_grad_hook(self._start_all_reduce)

    def _start_all_reduce(self, param):
        param.grad.div_(dist.get_world_size())
        self._pending.append(dist.all_reduce(param.grad, async_op=True))

    def finish_gradient_synchronization(self):
        for work in self._pending:
            work.wait()
        self._pending.clear()


class _Bucket:
    def __init__(self, params):
        self.params = params
        self.ready = 0
        self.flat = None
        self.work = None


class BucketedDDP(_Replicated):
    """Gradients in buckets of at most bucket_size_mb (a parameter larger
    than that gets a bucket of its own), filled in reverse order of the
    parameters, the order backward produces them; a bucket's all-reduce
    starts when its last gradient is ready."""

    def __init__(self, module, bucket_size_mb):
        super().__init__(module)
        if not bucket_size_mb > 0:
            raise ValueError(f"bucket_size_mb must be above 0, not {bucket_size_mb}")
        self._buckets = self._pack(self.trained_parameters(), bucket_size_mb * 2**20)
        self._bucket_of = {param: bucket for bucket in self._buckets for param in bucket.params}
        for param in self._bucket_of:
            param.register_post_accumulate_grad_hook(self._mark_ready)

    @staticmethod
    def _pack(params, limit_bytes):
        buckets, current, size = [], [], 0
        for param in reversed(params):
            nbytes = param.numel() * param.element_size()
            if current and (size + nbytes > limit_bytes or param.dtype != current[0].dtype):
                buckets.append(_Bucket(current))
                current, size = [], 0
            current.append(param)
            size += nbytes
        if current:
            buckets.append(_Bucket(current))
        return buckets

    def bucket_sizes(self):
        """The parameters per bucket, in the order they are all-reduced."""
        return [len(bucket.params) for bucket in self._buckets]

    def _mark_ready(self, param):
        bucket = self._bucket_of[param]
        bucket.ready += 1
        if bucket.ready == len(bucket.params):
            self._start(bucket)

    @staticmethod
    def _start(bucket):
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in bucket.params]
        bucket.flat = _flatten_dense_tensors(grads)
        bucket.work = dist.all_reduce(bucket.flat, async_op=True)

    def finish_gradient_synchronization(self):
        world = dist.get_world_size()
        for bucket in self._buckets:
            # A bucket holding a parameter unused this step never filled.
            if bucket.work is None and bucket.ready:
                self._start(bucket)
            if bucket.work is None:
                continue
            bucket.work.wait()
            bucket.flat.div_(world)
            averaged_grads = _unflatten_dense_tensors(bucket.flat, bucket.params)
            for param, averaged in zip(bucket.params, averaged_grads):
                if param.grad is not None:
                    param.grad.copy_(averaged)
            bucket.ready, bucket.flat, bucket.work = 0, None, None
