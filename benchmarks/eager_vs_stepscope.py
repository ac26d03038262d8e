"""Python PyTorch eager vs stepscope-cli on the same model step, side by side.

Both run the design.md model (python/stepscope/model.py for Python, the C++
engine for StepScope) on the same device with the same intra-op threads,
batch, vocab, warm-up and measured steps. Each configuration is measured
`--rounds` times, alternating the two, and the medians of the per-round
median step times are compared.

    ~/.cache/stepscope/venv/bin/python benchmarks/eager_vs_stepscope.py \
        --cli build/default/app/stepscope-cli --models nano,small --modes forward,train-step
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from stepscope import model as reference_model  # noqa: E402


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def python_eager(model_name, mode, args):
    device = args.device
    torch.manual_seed(0)
    model = reference_model.from_preset(model_name, vocab=args.vocab).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    tokens = torch.randint(0, args.vocab, (args.batch, args.ctx + 1), device=device)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.precision)

    def step():
        if mode == "train-step":
            optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device, dtype=dtype, enabled=dtype is not None):
            logits = model(inputs)
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))
        if mode == "train-step":
            loss.backward()
            optimizer.step()

    times = []
    for i in range(args.warmup + args.steps):
        sync(device)
        start = time.perf_counter()
        step()
        sync(device)
        if i >= args.warmup:
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def stepscope(model_name, mode, args):
    command = [args.cli, "run", "--json", "--model", model_name, "--mode", mode,
               "--ctx", str(args.ctx), "--batch", str(args.batch), "--vocab", str(args.vocab),
               "--warmup", str(args.warmup), "--steps", str(args.steps),
               "--precision", args.precision, "--device", args.device,
               "--threads", str(torch.get_num_threads()), "--force"]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["summary"]["total_ms"]["median"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default="build/default/app/stepscope-cli")
    parser.add_argument("--models", default="nano,small")
    parser.add_argument("--modes", default="forward,train-step")
    parser.add_argument("--ctx", type=int, default=128)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=10000)
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="0: torch's default")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    print(f"# eager vs StepScope: {args.device}, {torch.get_num_threads()} threads, "
          f"batch {args.batch}, ctx {args.ctx}, vocab {args.vocab}, {args.precision}, "
          f"{args.warmup} warm-up + {args.steps} measured steps, {args.rounds} rounds, "
          f"torch {torch.__version__}")
    print("| model | mode | Python eager median ms | StepScope median ms | StepScope / eager |")
    print("|---|---|---:|---:|---:|")
    for model_name in args.models.split(","):
        for mode in args.modes.split(","):
            eager, ours = [], []
            for _ in range(args.rounds):
                eager.append(python_eager(model_name, mode, args))
                ours.append(stepscope(model_name, mode, args))
            e, s = statistics.median(eager), statistics.median(ours)
            print(f"| {model_name} | {mode} | {e:.2f} | {s:.2f} | {s / e:.3f} |", flush=True)


if __name__ == "__main__":
    main()
