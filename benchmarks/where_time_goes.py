#!/usr/bin/env python3
"""Answers the "where does the time go" questions from run files made with
`stepscope-cli run --kernels` (or --ops on a CPU): the top kernel and its
calls, the non-matmul share, the matmul share per phase, and softmax against
the attention matmuls in time and in FLOPs. Standard library only.

    where_time_goes.py forward.json train-step.json [...]
"""
import json
import sys


def rows_of(run):
    return run["kernels"] or run["operators"]


def share(rows, phase, category):
    total = sum(r["total_ms"] for r in rows if phase in (None, r["phase"]))
    part = sum(r["total_ms"] for r in rows
               if phase in (None, r["phase"]) and r["category"] == category)
    return part / total if total else 0.0


def report(path):
    run = json.load(open(path))
    config = run["config"]
    rows = rows_of(run)
    source = "kernels" if run["kernels"] else "operators"
    steps = config["steps"]
    print(f"## {config['model']['name']} ctx {config['ctx']} {config['mode']} {config['precision']} "
          f"({source}, {steps} measured steps, {path})")
    if not rows:
        print("no traced rows\n")
        return
    top = max(rows, key=lambda r: r["total_ms"])
    print(f"- top: {top['name'][:110]} [{top['category']}, {top['phase']}]: "
          f"{top['calls'] / steps:.0f} calls/step, {top['total_ms'] / steps:.3f} ms/step")
    print(f"- non-matmul share of the step: {100 * (1 - share(rows, None, 'matmul')):.1f}%")
    for phase in ("forward", "backward", "optimizer"):
        if any(r["phase"] == phase for r in rows):
            print(f"- matmul share of {phase}: {100 * share(rows, phase, 'matmul'):.1f}%")
    groups = {g["group"]: g for g in run.get("flop_groups", [])}
    matmuls = [groups[g] for g in ("attention q·kᵀ", "attention ·v") if g in groups]
    if "attention softmax" in groups and len(matmuls) == 2:
        soft = groups["attention softmax"]
        mm_ms = sum(g["ms_per_step"] for g in matmuls)
        mm_flops = sum(g["flops_per_step"] for g in matmuls)
        print(f"- softmax vs attention matmuls: time {soft['ms_per_step']:.3f} / {mm_ms:.3f} ms "
              f"= {soft['ms_per_step'] / mm_ms:.2f}x, FLOPs "
              f"{soft['flops_per_step'] / mm_flops:.3f}x")
    for g in run.get("flop_groups", []):
        if g["flops_per_step"]:
            print(f"  - {g['group']}: {g['ms_per_step']:.3f} ms, "
                  f"{g['achieved_flops_per_second'] / 1e12:.2f} TFLOP/s")
    print()


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        report(argument)
