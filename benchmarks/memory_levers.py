"""The memory levers side by side on one train step: activation checkpointing
off / K / nested and the chunked loss, each a `stepscope-cli run --memory` in
its own process. Every configuration is measured `--rounds` times, the order
rotating from round to round (A B C …, then B C … A), so that whatever else
the machine does falls on all alike; the step time is the median of the
per-round medians, the peak the memory tracker's (the same in every round).

    ~/.cache/stepscope/venv/bin/python benchmarks/memory_levers.py \
        --cli build/default/app/stepscope-cli --model small --ctx 512 --batch 4 --out levers/
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

# (label, activation checkpoint, loss)
CONFIGS = [("off", "off", "full"), ("K=1", "1", "full"), ("K=2", "2", "full"),
           ("K=4", "4", "full"), ("nested", "nested", "full"),
           ("chunked loss", "off", "chunked"), ("nested + chunked loss", "nested", "chunked")]


def cli_json(args, command):
    done = subprocess.run([args.cli] + command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def run_once(args, label, checkpoint, loss, round_index):
    out = os.path.join(args.out, f"{label.replace(' ', '_').replace('+', 'and')}_"
                                 f"round{round_index}.json")
    command = ["run", "--model", args.model, "--ctx", str(args.ctx), "--batch", str(args.batch),
               "--mode", "train-step", "--precision", args.precision, "--warmup",
               str(args.warmup), "--steps", str(args.steps), "--threads", str(args.threads),
               "--activation-checkpoint", checkpoint, "--loss", loss, "--loss-chunk",
               str(args.loss_chunk), "--memory", "--force", "--device", args.device, "--out", out]
    if not (args.reuse and os.path.exists(out)):
        done = subprocess.run([args.cli] + command, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    memory = cli_json(args, ["memory", out, "--json"])
    run = cli_json(args, ["show", out, "--json"])
    summary = run["summary"]
    return {"file": out, "total": summary["total_ms"]["median"],
            "backward": summary["backward_ms"]["median"], "peak": memory["peak_bytes"],
            "peak_phase": memory["peak_phase"],
            "activations": memory["max_by_category"]["activations"],
            "recomputed": memory["max_by_category"]["recomputed"],
            "estimate": memory["estimate"]["peak_bytes"],
            "mfu_flops": summary.get("flops_per_step")}


def mib(value):
    return f"{value / 2**20:,.0f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", default="build/default/app/stepscope-cli")
    parser.add_argument("--model", default="small")
    parser.add_argument("--ctx", type=int, default=512)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--loss-chunk", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", required=True)
    parser.add_argument("--reuse", action="store_true",
                        help="keep the run files already in --out instead of running them again")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    results = {label: [] for label, _, _ in CONFIGS}
    for round_index in range(args.rounds):
        order = CONFIGS[round_index % len(CONFIGS):] + CONFIGS[:round_index % len(CONFIGS)]
        for label, checkpoint, loss in order:
            results[label].append(run_once(args, label, checkpoint, loss, round_index))
            print(f"round {round_index}: {label}: {results[label][-1]['total']:.0f} ms",
                  file=sys.stderr)
    base = results["off"]
    base_total = statistics.median(r["total"] for r in base)
    print(f"{args.model}, ctx {args.ctx}, batch {args.batch}, {args.precision} train step "
          f"(AdamW); {args.warmup} warm-up + {args.steps} measured steps per run, "
          f"{args.rounds} rounds; loss chunk {args.loss_chunk} tokens\n")
    print("| levers | peak MiB | peak phase | activations MiB | recomputed MiB | estimate MiB | "
          "step ms (per round) | median ms | × off | GFLOP/step |")
    print("|---|---:|---|---:|---:|---:|---|---:|---:|---:|")
    for label, _, _ in CONFIGS:
        runs = results[label]
        total = statistics.median(r["total"] for r in runs)
        flops = runs[0]["mfu_flops"]
        per_round = " / ".join(f"{r['total']:.0f}" for r in runs)
        print(f"| {label} | {mib(runs[0]['peak'])} | {runs[0]['peak_phase']} | "
              f"{mib(runs[0]['activations'])} | {mib(runs[0]['recomputed'])} | "
              f"{mib(runs[0]['estimate'])} | {per_round} | "
              f"{total:.0f} | {total / base_total:.2f} | "
              f"{flops / 1e9 if flops else float('nan'):.0f} |")


if __name__ == "__main__":
    main()
