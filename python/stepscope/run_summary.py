"""The run file's `summary`: statistics of the measured steps, model FLOPs
and MFU, computed as the C++ side computes them (core/results/statistics.cpp
summarize, core/estimate/cost_model.cpp, core/results/run_result.cpp
summarizeSteps). The C++ reader recomputes the summary from the steps, so a
file reads the same either way; tst_recorder holds the two against each other.
"""
import math
import statistics

PHASE_FIELDS = ("forward_ms", "backward_ms", "optimizer_ms")

# Vendor datasheet TFLOP/s, dense: (name part, fp32, tf32, bf16/fp16). SXM
# parts; PCIe parts are lower, so MFU reads high there.
DEVICE_PEAKS = (
    ("H200", 67, 494, 989), ("H100", 67, 494, 989), ("A100", 19.5, 156, 312),
    ("L40S", 91.6, 183, 362), ("A10G", 31.2, 62.5, 125), ("V100", 15.7, 15.7, 125),
)


def summarize(values):
    """count, mean, std (n - 1), median, min, max and cv; zeros when empty."""
    n = len(values)
    if n == 0:
        return {"count": 0, "mean": 0.0, "std": 0.0, "median": 0.0, "min": 0.0, "max": 0.0,
                "cv": 0.0}
    mean = math.fsum(values) / n
    std = statistics.stdev(values, mean) if n > 1 else 0.0
    return {"count": n, "mean": mean, "std": std, "median": statistics.median(values),
            "min": min(values), "max": max(values), "cv": std / mean if mean else 0.0}


def has_backward(mode):
    return mode in ("forward-backward", "train-step")


def model_flops_per_step(config):
    """2 FLOPs per multiply-add of the projections, MLP and LM head, plus the
    two T x T attention matmuls; backward twice the forward. The PyTorch
    engines recompute nothing (no checkpointing, the full loss)."""
    m, tokens, ctx = config["model"], config["batch"] * config["ctx"], config["ctx"]
    d = m["d_model"]
    block = 2.0 * tokens * (4 * d * d + 3 * d * m["d_ff"]) + 4.0 * config["batch"] * ctx * ctx * d
    forward = m["layers"] * block + 2.0 * tokens * m["vocab"] * d
    return forward * (3.0 if has_backward(config["mode"]) else 1.0)


def device_peak_flops(device_name, precision, tf32):
    """Tensor-core (or fp32) peak of a known GPU; None for others, CPUs among them."""
    for part, fp32, tf32_peak, half in DEVICE_PEAKS:
        if part in device_name:
            tflops = half if precision != "fp32" else tf32_peak if tf32 else fp32
            return tflops * 1e12
    return None


def measured(steps, field):
    return [step[field] for step in steps
            if not step["warmup"] and step.get(field) is not None]


def phase_stats(steps, field):
    """The measured steps' `field` summarized; None where no step has it."""
    values = measured(steps, field)
    return summarize(values) if values else None


def run_summary(steps, config, device_peak):
    total = summarize(measured(steps, "total_ms"))
    # A user's Python model has a shape of its own: its FLOPs are not ours to count.
    flops = 0.0 if config["py_model"] else model_flops_per_step(config)
    summary = {"total_ms": total, "flops_per_step": flops, "tokens_per_second": 0.0,
               "achieved_flops_per_second": 0.0, "device_peak_flops_per_second": device_peak,
               "mfu": None}
    for field in PHASE_FIELDS:
        summary[field] = phase_stats(steps, field)
    if total["mean"] > 0:
        seconds = total["mean"] / 1000.0
        summary["tokens_per_second"] = config["batch"] * config["ctx"] / seconds
        summary["achieved_flops_per_second"] = flops / seconds
        if device_peak:
            summary["mfu"] = summary["achieved_flops_per_second"] / device_peak
    return summary
