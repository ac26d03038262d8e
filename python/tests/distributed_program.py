"""What test_distributed runs on each rank, under torchrun: every strategy
(ours, torch's, a student's) through stepscope.distributed's gate, which
trains a small model on the rank's share of each batch and holds it against
single-process training on the whole batch. Writes what it found to
OUT_DIR/rank<r>.json.

TiedModel has what trips a data-parallel wrapper: an embedding tied to the
output layer, a frozen layer, a parameter no step uses, biases and a norm;
and every rank but 0 starts from other weights, so a wrapper that does not
broadcast rank 0's shows. The course's LM (stepscope.model) has Linear and
Embedding classes of its own, as FSDP must find them.
"""
import gc
import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

from stepscope.distributed import BucketedDDP, ShardedOptimizer
from stepscope.distributed.gate import check_strategy, language_model_loss, worst_error
from stepscope.distributed.strategies import UserStrategies
from stepscope.distributed import FSDP
from stepscope.model import TransformerLM

VOCAB, WIDTH, BATCH, CONTEXT, STEPS = 48, 16, 4, 6, 3
STUDENTS = str(Path(__file__).resolve().parent / "data" / "strategies")


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


def course_model():
    return TransformerLM(VOCAB, WIDTH, 2 * WIDTH, layers=1, heads=2, max_context=CONTEXT)


def elsewhere_but_rank0(make_model):
    def make():
        torch.manual_seed(0)
        model = make_model()
        if dist.get_rank() != 0:
            with torch.no_grad():
                for param in model.parameters():
                    param.add_(0.5)
        return model
    return make


def batches(steps=STEPS):
    generator = torch.Generator().manual_seed(7)
    return [torch.randint(0, VOCAB, (BATCH, CONTEXT), generator=generator) for _ in range(steps)]


def gate(strategy, make_model=TiedModel, **options):
    try:
        result = check_strategy(strategy, elsewhere_but_rank0(make_model), batches(), **options)
    except Exception as error:  # what the run will report for a strategy that raises
        return {"raised": f"{type(error).__name__}: {error}"}
    return {"ok": result.ok, "error": result.max_rel_error, "worst": result.worst_parameter,
            "tolerance": result.tolerance}


def sharded_optimizer_alone():
    """No DDP: every rank the whole batch, ten steps, against AdamW."""
    torch.manual_seed(0)
    reference, model = TiedModel(), TiedModel()
    model.load_state_dict(reference.state_dict())
    kwargs = {"lr": 1e-2, "weight_decay": 0.1}
    optimizers = (torch.optim.AdamW(reference.parameters(), **kwargs),
                  ShardedOptimizer(model.parameters(), torch.optim.AdamW, **kwargs))
    for step in range(10):
        tokens = batches()[step % STEPS]
        for each, optimizer in zip((reference, model), optimizers):
            optimizer.zero_grad()
            language_model_loss(each, tokens).backward()
            optimizer.step()
    error, _ = worst_error(dict(model.named_parameters()),
                           {k: v.detach() for k, v in reference.named_parameters()})
    owned = sum(len(group["params"]) for group in optimizers[1].local.param_groups)
    return {"error": error, "owned_parameters": owned}


def fsdp_share_held():
    """Of the course model's Linear and Embedding weights, the share this
    rank holds once wrapped."""
    model = course_model()
    sharded = [m for m in model.modules() if type(m).__name__ in ("Linear", "Embedding")]
    whole = sum(m.weight.numel() for m in sharded)
    FSDP(model)  # swaps each weight for its shard, in the model
    return sum(m.weight.numel() for m in sharded) / whole


def student(name):
    return UserStrategies(ddp=f"students:{name}", py_path=STUDENTS)


def main():
    out_dir = Path(sys.argv[1])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    gates = {strategy: gate(strategy) for strategy in
             ("naive", "flat", "overlap", "bucketed", "sharded-optimizer", "fsdp")}
    gates["bucketed-small"] = gate("bucketed", bucket_mb=0.001)
    gates["fsdp-bf16"] = gate("fsdp", compute_dtype=torch.bfloat16)
    gates["fsdp-fp16"] = gate("fsdp", compute_dtype=torch.float16)
    for strategy in ("fsdp", "torch-ddp", "torch-fsdp"):
        gates[f"{strategy}-course-model"] = gate(strategy, course_model)
    gates["torch-fsdp-bf16-course-model"] = gate("torch-fsdp", course_model,
                                                compute_dtype=torch.bfloat16)
    for name in ("AveragingDDP", "SummingDDP", "RaisingDDP"):
        gates[f"student-{name}"] = gate("naive", users=student(name))
    result = {"gates": gates, "sharded_optimizer_alone": sharded_optimizer_alone(),
              "bucket_sizes": BucketedDDP(TiedModel(), bucket_size_mb=0.001).bucket_sizes(),
              "fsdp_share_held": fsdp_share_held()}
    (out_dir / f"rank{dist.get_rank()}.json").write_text(json.dumps(result, indent=1))
    # Wrappers sit in reference cycles (hooks, bound forwards) and hold the
    # process group; freed at interpreter exit, gloo's threads abort it.
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
