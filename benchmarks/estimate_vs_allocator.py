"""The memory estimate against the CUDA caching allocator's own peak: for each
run file made with `--device cuda --memory`, `stepscope-cli estimate` on the
same configuration beside the run's `device_peak_allocated` (what PyTorch's
`torch.cuda.max_memory_allocated` reports) and `device_peak_reserved`. The
goal is within ±10% of the allocated peak; the allocator's rounding (blocks
of 512 B, 2 MiB segments for large ones) is what separates the two.

    python benchmarks/estimate_vs_allocator.py --cli build/gpu/app/stepscope-cli RUN.json...
"""
import argparse
import json
import subprocess
import sys

MiB = 1024 * 1024


def estimate_of(cli, config):
    """The estimate for the configuration a run file holds, by the CLI's flags."""
    flags = ["estimate", "--json", "--device", "cuda",
             "--model", config["model"]["name"], "--ctx", str(config["ctx"]),
             "--batch", str(config["batch"]), "--mode", config["mode"],
             "--precision", config["precision"], "--attention", config["attention"],
             "--activation-checkpoint", config.get("activation_checkpoint", "off"),
             "--loss", config.get("loss", "full")]
    if "optimizer" in config:
        flags += ["--optimizer", config["optimizer"]]
    done = subprocess.run([cli] + flags, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(flags)}: {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)["peak_bytes"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("runs", nargs="+")
    args = parser.parse_args()
    print("| run | estimate MiB | allocated MiB | reserved MiB | estimate / allocated |")
    print("|---|---:|---:|---:|---:|")
    outside = compared = 0
    for path in args.runs:
        try:
            with open(path) as file:
                run = json.load(file)
            memory = run.get("memory") or {}
            allocated = memory.get("device_peak_allocated")
            if run.get("status") != "ok" or not allocated:
                print(f"| {path} | – | – | – | {run.get('status')}: no allocator peak |")
                continue
            estimate = estimate_of(args.cli, run["config"])
            ratio = estimate / allocated
            compared += 1
            outside += not 0.9 <= ratio <= 1.1
            reserved = memory.get("device_peak_reserved") or 0
            print(f"| {path} | {estimate / MiB:.1f} | {allocated / MiB:.1f} | "
                  f"{reserved / MiB:.1f} | {ratio:.3f} |")
        except (OSError, ValueError, KeyError, RuntimeError) as error:
            print(f"| {path} | unreadable: {error} | | | |")
            outside += 1
    print(f"\n{compared} of {len(args.runs)} runs compared; {outside} outside ±10% or unreadable")
    return 1 if outside or not compared else 0


if __name__ == "__main__":
    sys.exit(main())
