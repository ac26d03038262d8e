#!/usr/bin/env python3
"""Holistic Trace Analysis (HTA) as the oracle for StepScope's trace analyses.

  python hta_oracle.py FOLDER [--include-last-step] [--out FILE]

Runs HTA (scripts/hta-venv.sh makes its venv) on a folder of rank traces and
prints, per rank, the figures tst_kineto_trace compares with its own:
temporal breakdown, kernel-type times (MEMORY included), kernels by name,
kernel launch statistics, communication's overlap with computation and the
profiler steps, as JSON. HTA's rounding of
fractional timestamps to whole microseconds is switched off
(HTA_DISABLE_NS_ROUNDING=1) so both sides read the same times; see
docs/trace-analyses.md for what is still rounded.
"""
import argparse
import io
import json
import logging
import math
import os
import sys
from contextlib import redirect_stdout

os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"


def number(value):
    value = float(value)
    return None if math.isnan(value) else value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--include-last-step", action="store_true")
    parser.add_argument("--out")
    options = parser.parse_args()

    noise = io.StringIO()
    with redirect_stdout(noise):  # HTA prints as it loads
        logging.disable(logging.CRITICAL)
        import importlib.metadata
        from hta.analyzers.breakdown_analysis import BreakdownAnalysis
        from hta.trace_analysis import TraceAnalysis
        from hta.utils.utils import get_kernel_type

        analyzer = TraceAnalysis(trace_dir=os.path.abspath(options.folder),
                                 include_last_profiler_step=options.include_last_step)
        t = analyzer.t
        symbols = t.symbol_table.get_sym_table()
        ranks = sorted(t.traces.keys())
        result = {
            "hta_version": importlib.metadata.version("holistictraceanalysis"),
            "include_last_profiler_step": options.include_last_step,
            "profiler_steps": [int(s) for s in analyzer.get_profiler_steps()],
            "ranks": {},
        }
        for rank in ranks:
            result["ranks"][str(rank)] = {"temporal": None, "kernel_types": {}, "kernels": [],
                                          "kernel_type_edges": 0}

        try:
            temporal = analyzer.get_temporal_breakdown(visualize=False)
            for _, row in temporal.iterrows():
                result["ranks"][str(int(row["rank"]))]["temporal"] = {
                    "span_us": number(row["kernel_time(us)"]),
                    "idle_us": number(row["idle_time(us)"]),
                    "compute_us": number(row["compute_time(us)"]),
                    "non_compute_us": number(row["non_compute_time(us)"]),
                    "idle_pct": number(row["idle_time_pctg"]),
                    "compute_pct": number(row["compute_time_pctg"]),
                    "non_compute_pct": number(row["non_compute_time_pctg"]),
                }
        except (IndexError, KeyError, ValueError):
            pass  # HTA fails on a rank without GPU kernels (a CPU trace)

        # Kernel-type time per rank, as get_gpu_kernel_breakdown computes it
        # before it sums the ranks together.
        types = ["COMPUTATION", "COMMUNICATION", "MEMORY"]
        for rank in ranks:
            frame = t.get_trace(rank)
            kernels = frame[frame["stream"].ne(-1)].copy()
            if kernels.empty:
                continue
            kernels["kernel_type"] = [get_kernel_type(symbols[n]) for n in kernels["name"]]
            by_type = BreakdownAnalysis._get_gpu_kernel_type_time(kernels, types)
            entry = result["ranks"][str(rank)]
            entry["kernel_types"] = {row["kernel_type"]: number(row["sum"])
                                     for _, row in by_type.iterrows() if row["sum"] != 0}
            entry["kernel_type_edges"] = int(2 * len(kernels))

        try:
            _, kernel_df = analyzer.get_gpu_kernel_breakdown(
                visualize=False, num_kernels=10**9, include_memory_kernels=True)
            for _, row in kernel_df.iterrows():
                result["ranks"][str(int(row["rank"]))]["kernels"].append({
                    "name": row["name"], "type": row["kernel_type"],
                    "sum_us": number(row["sum (us)"]), "mean_us": number(row["mean (us)"]),
                    "min_us": number(row["min (us)"]), "max_us": number(row["max (us)"]),
                    "std_us": number(row["stddev"]),
                })
        except (IndexError, KeyError, ValueError):
            pass

        # Communication under computation; NaN (None here) or an error on a
        # trace without NCCL kernels, which StepScope answers from gloo's spans.
        for rank in ranks:
            result["ranks"][str(rank)]["comm_overlap_pct"] = None
        try:
            overlap = analyzer.get_comm_comp_overlap(visualize=False)
            for _, row in overlap.iterrows():
                result["ranks"][str(int(row["rank"]))]["comm_overlap_pct"] = number(
                    row["comp_comm_overlap_pctg"])
        except (IndexError, KeyError, ValueError, ZeroDivisionError):
            pass

        launch = analyzer.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)
        for rank, frame in launch.items():
            short = frame[(frame["cpu_duration"] <= 50) &
                          (frame["gpu_duration"] < frame["cpu_duration"])]
            result["ranks"][str(rank)]["launch"] = {
                "launches": int(len(frame)),
                "cpu_total_us": number(frame["cpu_duration"].sum()),
                "gpu_total_us": number(frame["gpu_duration"].sum()),
                "delay_total_us": number(frame["launch_delay"].sum()),
                "short_kernels": int(len(short)),
                "runtime_outliers": int((frame["cpu_duration"] > 50).sum()),
                "delay_outliers": int((frame["launch_delay"] > 100).sum()),
            }

    text = json.dumps(result, indent=1, sort_keys=True)
    if options.out:
        with open(options.out, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    sys.exit(main())
