"""A rank's memory at the marks ZeRO's paper reads: after init, before the
optimizer step and after it, by category.

On CUDA the marks are torch.cuda.memory_allocated() (cheap, no sync, so
taken inside the step) and the peak max_memory_allocated(). On the CPU
nothing counts allocations without tracing them, so a mark is the bytes of
the tensors the rank holds by category: parameters (a sharded weight's
shard), gradients and optimizer state, each storage once; the peak is the
largest mark. Activations are known on CUDA only (allocated after forward
less before it); communication buffers are not known (null).
"""
import torch
from torch import nn


def local(tensor):
    """A DTensor's own shard (torch-fsdp), or the tensor."""
    to_local = getattr(tensor, "to_local", None)
    return to_local() if callable(to_local) else tensor


def bytes_of(tensors):
    seen, total = set(), 0
    for tensor in tensors:
        if not isinstance(tensor, torch.Tensor):
            continue
        tensor = local(tensor)
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset())
        if key in seen:
            continue
        seen.add(key)
        total += tensor.numel() * tensor.element_size()
    return total


def optimizer_tensors(optimizer, seen=None):
    """The tensors of an optimizer's state, and of the optimizers it holds
    (a sharded optimizer's inner one, whatever its attribute's name)."""
    seen = seen if seen is not None else set()
    if id(optimizer) in seen:
        return
    seen.add(id(optimizer))
    for state in optimizer.state.values():
        for value in state.values():
            if isinstance(value, torch.Tensor):
                yield value
    for value in vars(optimizer).values():
        if isinstance(value, torch.optim.Optimizer):
            yield from optimizer_tensors(value, seen)


def categories(model: nn.Module, optimizer):
    params = list(model.parameters())
    return {"parameters": bytes_of(params),
            "gradients": bytes_of(p.grad for p in params if p.grad is not None),
            "optimizer_state": bytes_of(optimizer_tensors(optimizer)) if optimizer else 0}


class RankMemory:
    def __init__(self, device):
        self.cuda = device == "cuda"
        self.marks = {}
        self.by_category = None
        self.activations = None
        self._before_forward = None

    def allocated(self):
        return torch.cuda.memory_allocated() if self.cuda else None

    # Inside the step, on CUDA only: the allocator's counter, no walk.
    def before_forward(self):
        self._before_forward = self.allocated()

    def after_forward(self):
        if self.cuda:
            self.activations = self.allocated() - self._before_forward

    def before_optimizer(self):
        if self.cuda:
            self.marks["before_optimizer"] = self.allocated()

    def after_optimizer(self):
        if self.cuda:
            self.marks["after_optimizer"] = self.allocated()

    # Outside the step: the tensors by category.
    def after_init(self, model, optimizer):
        found = categories(model, optimizer)
        self.marks["after_init"] = self.allocated() if self.cuda else sum(found.values())
        self._state_before = found["optimizer_state"]

    def after_step(self, model, optimizer, has_optimizer):
        """After a whole step: the gradients are still there, and the state
        before the optimizer step was what the last step left."""
        found = categories(model, optimizer)
        if not self.cuda:
            before = found["parameters"] + found["gradients"] + self._state_before
            self.marks["before_optimizer"] = before if has_optimizer else sum(found.values())
            self.marks["after_optimizer"] = sum(found.values()) if has_optimizer else None
        self._state_before = found["optimizer_state"]
        self.by_category = dict(found, activations=self.activations, communication_buffers=None)

    def summary(self):
        marks = [m for m in self.marks.values() if m is not None]
        peak = torch.cuda.max_memory_allocated() if self.cuda else max(marks, default=0)
        return {"peak_bytes": peak, "after_init_bytes": self.marks.get("after_init"),
                "before_optimizer_bytes": self.marks.get("before_optimizer"),
                "after_optimizer_bytes": self.marks.get("after_optimizer"),
                "by_category": self.by_category}
