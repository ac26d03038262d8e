"""What test_distributed runs on each rank, under torchrun: every strategy of
stepscope.distributed trains a small model a few steps on its rank's share
of the batch, and its parameters are held against plain single-process
training on the whole batch (computed on each rank, without collectives).
Writes {check: max relative error} to OUT_DIR/rank<r>.json.

The model has what trips a data-parallel wrapper: an embedding tied to the
output layer, a frozen layer, a parameter no step uses, biases and a norm.
"""
import copy
import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from stepscope.model import TransformerLM
from stepscope.distributed import DDP, FSDP, BucketedDDP, FlatDDP, NaiveDDP, ShardedOptimizer

VOCAB, WIDTH, BATCH, CONTEXT, STEPS = 48, 16, 4, 6, 4


class TiedModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.hidden = nn.Linear(WIDTH, WIDTH)
        self.frozen = nn.Linear(WIDTH, WIDTH)
        self.frozen.requires_grad_(False)
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.head.weight = self.embed.weight
        self.unused = nn.Parameter(torch.ones(3))

    def forward(self, tokens):
        h = self.embed(tokens)
        h = torch.relu(self.hidden(h)) + self.frozen(h)
        return self.head(self.norm(h))


def loss_of(model, tokens):
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits.reshape(-1, VOCAB).float(), tokens[:, 1:].reshape(-1))


def batches(steps=STEPS):
    generator = torch.Generator().manual_seed(7)
    return [torch.randint(0, VOCAB, (BATCH, CONTEXT), generator=generator) for _ in range(steps)]


def sgd(params):
    # Plain SGD: an update scales with the gradient, so a gradient summed
    # where it should be averaged shows (Adam's update would hide it).
    return torch.optim.SGD(params, lr=0.5)


def adamw(params):
    return torch.optim.AdamW(params, lr=1e-2, weight_decay=0.1)


def sharded_adamw(params):
    return ShardedOptimizer(params, torch.optim.AdamW, lr=1e-2, weight_decay=0.1)


def train_alone(model, make_optimizer, steps=STEPS):
    """The reference: one process, the whole batch."""
    optimizer = make_optimizer(model.parameters())
    for tokens in batches(steps):
        optimizer.zero_grad()
        loss_of(model, tokens).backward()
        optimizer.step()
    return {name: p.detach().clone() for name, p in model.named_parameters(remove_duplicate=False)}


def my_share(tokens):
    rank, world = dist.get_rank(), dist.get_world_size()
    per_rank = tokens.shape[0] // world
    return tokens[rank * per_rank : (rank + 1) * per_rank]


def train_wrapped(wrapped, optimizer, steps=STEPS):
    for tokens in batches(steps):
        optimizer.zero_grad()
        loss_of(wrapped, my_share(tokens)).backward()
        wrapped.finish_gradient_synchronization()
        optimizer.step()


def worst_error(ours, reference):
    worst = 0.0
    for name, expected in reference.items():
        got = ours[name].float()
        scale = expected.abs().max().clamp_min(1e-12)
        worst = max(worst, ((got - expected.float()).abs().max() / scale).item())
    return worst


def course_model():
    """The reference LM, whose Linear and Embedding are classes of its own."""
    return TransformerLM(VOCAB, WIDTH, 2 * WIDTH, layers=1, heads=2, max_context=CONTEXT)


def own_start(make_model=TiedModel):
    """Rank 0's initial model; the others start elsewhere, so a wrapper
    that forgets to broadcast rank 0's parameters is caught."""
    torch.manual_seed(0)
    model = make_model()
    if dist.get_rank() != 0:
        with torch.no_grad():
            for param in model.parameters():
                param.add_(0.5)
    return model


class SummingDDP(NaiveDDP):
    """Wrong on purpose: gradients summed, not averaged."""

    def finish_gradient_synchronization(self):
        for param in self.trained_parameters():
            if param.grad is not None:
                dist.all_reduce(param.grad)


def check_replicated(wrapper, make_optimizer=sgd, make_reference_optimizer=None):
    start = own_start()
    torch.manual_seed(0)
    reference = train_alone(TiedModel(), make_reference_optimizer or make_optimizer)
    wrapped = wrapper(copy.deepcopy(start))
    train_wrapped(wrapped, make_optimizer(wrapped.parameters()))
    ours = dict(wrapped.module.named_parameters(remove_duplicate=False))
    return worst_error(ours, reference)


def cast_like_fsdp(model, dtype):
    """The single-process model FSDP's compute dtype stands for: Linear and
    Embedding weights, and a Linear's input, cast to dtype."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            module.forward = lambda x, m=module: (
                x.to(dtype) @ m.weight.to(dtype).T + (0 if m.bias is None else m.bias)
            )
        elif isinstance(module, nn.Embedding):
            module.forward = lambda t, m=module: m.weight.to(dtype)[t]
    return model


def check_fsdp(compute_dtype=None, steps=STEPS, make_model=TiedModel):
    start = own_start(make_model)
    torch.manual_seed(0)
    alone = make_model()
    if compute_dtype is not None:
        cast_like_fsdp(alone, compute_dtype)
    reference = train_alone(alone, sgd, steps)
    wrapped = FSDP(copy.deepcopy(start), compute_dtype=compute_dtype)
    train_wrapped(wrapped, sgd(wrapped.parameters()), steps)
    return worst_error(wrapped.gather_full_params(), reference)


def fsdp_share_held():
    """Of the course model's Linear and Embedding weights, the share this
    rank holds once wrapped."""
    model = course_model()
    whole = sum(m.weight.numel() for m in model.modules() if type(m).__name__ in ("Linear", "Embedding"))
    FSDP(model)  # swaps each weight for its shard, in the model
    held = sum(m.weight.numel() for m in model.modules() if type(m).__name__ in ("Linear", "Embedding"))
    return held / whole


def check_sharded_optimizer_alone():
    """No DDP: every rank the same whole batch, ten steps, against AdamW."""
    torch.manual_seed(0)
    reference_model = TiedModel()
    model = copy.deepcopy(reference_model)
    optimizers = (adamw(reference_model.parameters()), sharded_adamw(model.parameters()))
    for step in range(10):
        tokens = batches()[step % STEPS]
        for each, optimizer in zip((reference_model, model), optimizers):
            optimizer.zero_grad()
            loss_of(each, tokens).backward()
            optimizer.step()
    reference = dict(reference_model.named_parameters(remove_duplicate=False))
    ours = dict(model.named_parameters(remove_duplicate=False))
    owned_here = sum(1 for group in optimizers[1].local.param_groups for _ in group["params"])
    return worst_error(ours, {k: v.detach() for k, v in reference.items()}), owned_here


def main():
    out_dir = Path(sys.argv[1])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    errors = {
        "naive": check_replicated(NaiveDDP),
        "flat": check_replicated(FlatDDP),
        "overlap": check_replicated(DDP),
        "bucketed": check_replicated(lambda m: BucketedDDP(m, bucket_size_mb=0.001)),
        "sharded-optimizer": check_replicated(DDP, sharded_adamw, adamw),
        "fsdp": check_fsdp(),
        # One step: bf16's rounding, compounded by later steps, is not the check.
        "fsdp-bf16": check_fsdp(torch.bfloat16, steps=1),
        "fsdp-fp16": check_fsdp(torch.float16, steps=1),
        "fsdp-course-classes": check_fsdp(make_model=course_model),
        "summing-not-averaging": check_replicated(SummingDDP),
    }
    errors["sharded-optimizer-alone"], owned = check_sharded_optimizer_alone()
    buckets = BucketedDDP(TiedModel(), bucket_size_mb=0.001).bucket_sizes()
    result = {"errors": errors, "owned_parameters": owned, "bucket_sizes": buckets,
              "fsdp_share_held": fsdp_share_held()}
    (out_dir / f"rank{dist.get_rank()}.json").write_text(json.dumps(result))
    dist.barrier()  # no rank leaves while another still talks to it
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
