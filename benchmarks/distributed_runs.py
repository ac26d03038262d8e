"""Data-parallel strategies as users run them: `stepscope-cli run --engine
pytorch --ranks N --parallel S` for each strategy, rounds alternating (the
order rotated each round), each run's file read back with `stepscope-cli show
--json` so the figures are the ones the report and the app show:

    python3 benchmarks/distributed_runs.py --cli build/default/app/stepscope-cli \
        --rounds 2 --steps 5

Per strategy and round: rank 0's median step and comm wait; per rank, per
measured step, communication, exposed communication and overlap (HTA's), its
wait on the others; the peak and the memory marks (after init, before and
after the optimizer step). Printed as Markdown, each cell "round 1 / round 2 …".
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

STRATEGIES = ["naive", "flat", "overlap", "bucketed", "sharded-optimizer", "fsdp", "torch-ddp",
              "torch-fsdp"]
MIB = 1024 * 1024


def run(cli, strategy, args, out):
    command = [cli, "run", "--engine", "pytorch", "--model", args.model, "--ctx", str(args.ctx),
               "--batch", str(args.batch), "--warmup", str(args.warmup), "--steps",
               str(args.steps), "--ranks", str(args.ranks), "--parallel", strategy,
               "--threads", "1", "--bucket-mb", str(args.bucket_mb), "--out", str(out)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    shown = subprocess.run([cli, "show", str(out), "--json"], check=True, capture_output=True)
    return json.loads(shown.stdout)


def figures(document):
    steps = [s for s in document["steps"] if not s["warmup"]]
    per_rank = []
    for rank in document["ranks"]:
        measured = max(1, sum(not s["warmup"] for s in rank["steps"]))
        c, m = rank["communication"], rank["memory"]
        per_rank.append({
            "comm": c["time_us"] / 1e3 / measured, "exposed": c["exposed_us"] / 1e3 / measured,
            "overlap": c["overlap_pct"], "wait": c["wait_us"] / 1e3 / measured,
            "peak": m["peak_bytes"], "marks": [m["after_init_bytes"], m["before_optimizer_bytes"],
                                               m["after_optimizer_bytes"]]})
    return {"step": statistics.median(s["total_ms"] for s in steps),
            "comm_wait": statistics.median(s.get("comm_wait_ms") or 0 for s in steps),
            "ranks": per_rank}


def cell(values, digits=1):
    return " / ".join(f"{v:.{digits}f}" for v in values)


def mib(value):
    return "–" if value is None else f"{value / MIB:.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default="build/default/app/stepscope-cli")
    parser.add_argument("--model", default="nano")
    parser.add_argument("--ctx", type=int, default=32)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--bucket-mb", type=float, default=0.5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    args = parser.parse_args(argv)
    strategies = args.strategies.split(",")
    results = {s: [] for s in strategies}
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(args.rounds):
            order = strategies[round_ % len(strategies):] + strategies[:round_ % len(strategies)]
            for strategy in order:
                print(f"round {round_ + 1}: {strategy}", file=sys.stderr, flush=True)
                document = run(args.cli, strategy, args, Path(folder) / f"{strategy}.json")
                results[strategy].append(figures(document))
    print("| strategy | rank | step ms | comm wait ms | comm ms | exposed ms | overlap % | "
          "wait ms | peak MiB | after init / before opt. / after opt. MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for strategy, rounds in results.items():
        for rank in range(args.ranks):
            r = [x["ranks"][rank] for x in rounds]
            step = cell([x["step"] for x in rounds]) if rank == 0 else ""
            wait = cell([x["comm_wait"] for x in rounds]) if rank == 0 else ""
            marks = ", ".join(mib(v) for v in r[-1]["marks"])
            print(f"| {strategy if rank == 0 else ''} | {rank} | {step} | {wait} | "
                  f"{cell([x['comm'] for x in r])} | {cell([x['exposed'] for x in r])} | "
                  f"{cell([x['overlap'] for x in r], 0)} | {cell([x['wait'] for x in r])} | "
                  f"{mib(r[-1]['peak'])} | {marks} |")


if __name__ == "__main__":
    sys.exit(main())
