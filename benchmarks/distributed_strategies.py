"""Data-parallel strategies side by side on N ranks: stepscope.distributed's
naive, flat, overlap and bucketed DDP and torch's DistributedDataParallel
and the sharded optimizer's memory beside overlap's.
Run it under torchrun; every rank measures, rank 0 prints:

    ~/.cache/stepscope/venv/bin/python -m torch.distributed.run --standalone \
        --nproc-per-node 2 benchmarks/distributed_strategies.py --model nano

Each round runs every strategy once, in an order rotated by round (A B C,
then B C A, ...), from the same seeded model: warm-up steps, then measured
steps under torch.profiler. Per step: the step's wall time; communication,
the union of the backend's collective spans (gloo's or NCCL's threads);
compute, the union of the main thread's ATen ops; exposed communication,
communication with no compute under it; overlap, HTA's share of
communication time under compute. The figures are the medians over rounds
of each round's median step, the slowest rank's.

Memory: what each rank holds, counted from the tensors themselves
(parameters, gradients, optimizer state; each storage once), after the
wrapper and optimizer are built, before the first optimizer step and after
it, for overlap (DDP + AdamW) and sharded-optimizer (DDP + AdamW sharded).
"""
import argparse
import gc
import statistics
import time

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

from stepscope.distributed.gate import language_model_loss, rank_share
from stepscope.distributed.strategies import prepare
from stepscope.model import PRESETS, TransformerLM

STRATEGIES = ["naive", "flat", "overlap", "bucketed", "torch-ddp"]


def merged(intervals):
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def covered(a, b):
    """How long two merged interval lists overlap."""
    total, i, j = 0.0, 0, 0
    while i < len(a) and j < len(b):
        total += max(0.0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def communication_figures(events, main_thread):
    communication = merged((e.time_range.start, e.time_range.end) for e in events
                           if e.name.startswith(("gloo:", "nccl:")))
    compute = merged((e.time_range.start, e.time_range.end) for e in events
                     if e.thread == main_thread and e.name.startswith("aten::"))
    total = sum(end - start for start, end in communication)
    hidden = covered(communication, compute)
    return total, total - hidden, (100.0 * hidden / total if total else 0.0)


def model_of(args):
    d_model, d_ff, layers, heads = PRESETS[args.model]
    return TransformerLM(args.vocab, d_model, d_ff, layers, heads, max_context=args.ctx)


def measure(strategy, args, batches):
    torch.manual_seed(0)
    prepared = prepare(strategy, model_of(args), torch.optim.AdamW, {"lr": 1e-4},
                       bucket_mb=args.bucket_mb)

    def step(tokens):
        prepared.optimizer.zero_grad()
        language_model_loss(prepared.model, rank_share(tokens)).backward()
        prepared.finish_gradient_synchronization()
        prepared.optimizer.step()

    for tokens in batches[:args.warmup]:
        step(tokens)
    times = []
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        for tokens in batches[args.warmup:]:
            dist.barrier()
            start = time.perf_counter()
            step(tokens)
            times.append(time.perf_counter() - start)
    steps = len(times)
    events = profiler.events()
    main_thread = next(e.thread for e in events if e.name.startswith("aten::"))
    communication, exposed, overlap = communication_figures(events, main_thread)
    del prepared
    gc.collect()
    return {"step_ms": 1e3 * statistics.median(times), "comm_ms": communication / 1e3 / steps,
            "exposed_ms": exposed / 1e3 / steps, "overlap_pct": overlap}


def held_bytes(model, optimizer):
    storages = {}
    tensors = list(model.parameters()) + [p.grad for p in model.parameters() if p.grad is not None]
    for state in optimizer.state.values():
        tensors += [t for t in state.values() if torch.is_tensor(t)]
    inner = getattr(optimizer, "local", None)  # the sharded optimizer's own
    if inner is not None:
        for state in inner.state.values():
            tensors += [t for t in state.values() if torch.is_tensor(t)]
    for tensor in tensors:
        storage = tensor.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
    return sum(storages.values())


def memory_marks(strategy, args, batches):
    torch.manual_seed(0)
    prepared = prepare(strategy, model_of(args), torch.optim.AdamW, {"lr": 1e-4})
    marks = {"after_init": held_bytes(prepared.model, prepared.optimizer)}
    language_model_loss(prepared.model, rank_share(batches[0])).backward()
    prepared.finish_gradient_synchronization()
    marks["before_optimizer"] = held_bytes(prepared.model, prepared.optimizer)
    prepared.optimizer.step()
    marks["after_optimizer"] = held_bytes(prepared.model, prepared.optimizer)
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, marks)
    del prepared
    gc.collect()
    return everyone


def slowest_rank(figures):
    """Every rank's figures; the slowest rank's step (its others beside it)."""
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, figures)
    return max(everyone, key=lambda f: f["step_ms"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="nano", choices=sorted(PRESETS))
    parser.add_argument("--vocab", type=int, default=10000)
    parser.add_argument("--ctx", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8, help="global batch, split over ranks")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bucket-mb", type=float, default=1.0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    torch.set_num_threads(args.threads)
    generator = torch.Generator().manual_seed(1)
    batches = [torch.randint(0, args.vocab, (args.batch, args.ctx + 1), generator=generator)
               for _ in range(args.warmup + args.steps)]
    rounds = {strategy: [] for strategy in STRATEGIES}
    for round_index in range(args.rounds):
        order = STRATEGIES[round_index % len(STRATEGIES):] + STRATEGIES[:round_index % len(STRATEGIES)]
        for strategy in order:
            rounds[strategy].append(slowest_rank(measure(strategy, args, batches)))
    if dist.get_rank() == 0:
        print(f"# {dist.get_world_size()} gloo ranks, model {args.model}, ctx {args.ctx}, "
              f"global batch {args.batch}, {args.steps} steps x {args.rounds} rounds, "
              f"bucket {args.bucket_mb} MB, torch {torch.__version__}")
        print("| strategy | step ms | communication ms | exposed ms | overlap % | step vs naive |")
        print("|---|---|---|---|---|---|")
        naive = statistics.median(r["step_ms"] for r in rounds["naive"])
        for strategy in STRATEGIES:
            figures = {key: statistics.median(r[key] for r in rounds[strategy])
                       for key in rounds[strategy][0]}
            print(f"| {strategy} | {figures['step_ms']:.1f} | {figures['comm_ms']:.1f} | "
                  f"{figures['exposed_ms']:.1f} | {figures['overlap_pct']:.0f} | "
                  f"{figures['step_ms'] / naive:.2f}x |")
    memory = {strategy: memory_marks(strategy, args, batches)
              for strategy in ("overlap", "sharded-optimizer")}
    if dist.get_rank() == 0:
        print("\n| strategy | rank | after init MiB | before optimizer MiB | after optimizer MiB |")
        print("|---|---|---|---|---|")
        for strategy, ranks in memory.items():
            for rank, marks in enumerate(ranks):
                print(f"| {strategy} | {rank} | " + " | ".join(
                    f"{marks[key] / 2**20:.2f}" for key in
                    ("after_init", "before_optimizer", "after_optimizer")) + " |")
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
