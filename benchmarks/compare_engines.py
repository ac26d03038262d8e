"""The three engines side by side: stepscope-cli run --engine libtorch,
pytorch and pytorch-compile on the same model step, device, threads, batch,
warm-up and measured steps. Each configuration is measured `--rounds` times,
the engines alternating within a round (A B C, then B C A, ...), and the
medians of the per-round median step times are compared. Per phase too, and
torch.compile's compile time (kept out of the steps) is listed beside it.

    ~/.cache/stepscope/venv/bin/python benchmarks/compare_engines.py \
        --cli build/default/app/stepscope-cli --models nano,small --modes forward,train-step
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ENGINES = ["libtorch", "pytorch", "pytorch-compile"]


def run_once(args, model, mode, engine):
    command = [args.cli, "run", "--json", "--model", model, "--mode", mode, "--engine", engine,
               "--ctx", str(args.ctx), "--batch", str(args.batch), "--vocab", str(args.vocab),
               "--warmup", str(args.warmup), "--steps", str(args.steps),
               "--precision", args.precision, "--device", args.device,
               "--threads", str(args.threads), "--force"]
    if engine == "pytorch-compile":
        command += ["--compile-mode", args.compile_mode]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    run = json.loads(done.stdout)
    summary = run["summary"]
    phases = {phase: (summary[f"{phase}_ms"] or {}).get("median")
              for phase in ("forward", "backward", "optimizer")}
    return {"total": summary["total_ms"]["median"], **phases, "compile_ms": run["compile_ms"],
            "torch": run["environment"]["python_torch_version"]
            or run["environment"]["libtorch_version"]}


def median_of(rounds, key):
    values = [r[key] for r in rounds if r[key] is not None]
    return statistics.median(values) if values else None


def cell(value, scale=1.0, digits=2):
    return "–" if value is None else f"{value * scale:.{digits}f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default="build/default/app/stepscope-cli")
    parser.add_argument("--models", default="nano,small")
    parser.add_argument("--modes", default="forward,train-step")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--ctx", type=int, default=128)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=10000)
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="intra-op threads, the same for every engine")
    parser.add_argument("--compile-mode", default="default")
    args = parser.parse_args()
    engines = args.engines.split(",")

    print(f"# Engines side by side: {args.device}, {args.threads} threads, batch {args.batch}, "
          f"ctx {args.ctx}, vocab {args.vocab}, {args.precision}, {args.warmup} warm-up + "
          f"{args.steps} measured steps, {args.rounds} rounds alternating; medians of the "
          f"per-round medians (ms)\n")
    print("| model | mode | engine | total | forward | backward | optimizer | × libtorch "
          "| compile s |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    versions = set()
    for model in args.models.split(","):
        for mode in args.modes.split(","):
            rounds = {engine: [] for engine in engines}
            for round_index in range(args.rounds):
                shift = round_index % len(engines)
                for engine in engines[shift:] + engines[:shift]:
                    result = run_once(args, model, mode, engine)
                    versions.add(f"{engine}: torch {result['torch']}")
                    rounds[engine].append(result)
            baseline = median_of(rounds.get("libtorch", []), "total")
            for engine in engines:
                total = median_of(rounds[engine], "total")
                ratio = total / baseline if baseline else None
                print(f"| {model} | {mode} | {engine} | {cell(total)} "
                      f"| {cell(median_of(rounds[engine], 'forward'))} "
                      f"| {cell(median_of(rounds[engine], 'backward'))} "
                      f"| {cell(median_of(rounds[engine], 'optimizer'))} "
                      f"| {cell(ratio, digits=3)} "
                      f"| {cell(median_of(rounds[engine], 'compile_ms'), 1e-3, 1)} |", flush=True)
    print("\n" + "; ".join(sorted(versions)))


if __name__ == "__main__":
    main()
