"""The `attention` command: forward and backward times of attention points.

Backend "compiled" is torch.compile of the naive attention function (the
course's exercise), "naive" the same function uncompiled. Each point: q, k,
v of (batch, heads, seq, d) in the point's dtype, requiring grad; `warmup`
calls (at least one, where the compile happens) then `repeats` measured
ones, each a synchronised forward then a backward of a fixed random output
gradient; the times are medians, like the C++ attention benchmark.
"""
import statistics
import time

import torch

from .compiling import compile_function
from .model import naive_attention
from .outcome import first_line, is_out_of_memory, with_traceback_tail

BACKENDS = ("compiled", "naive")
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
KERNELS = {"compiled": "inductor", "naive": "naive"}


def point_event(point, status, message="", forward_ms=None, backward_ms=None, peak_bytes=None):
    return {"backend": point.get("backend"), "kernel": KERNELS.get(point.get("backend"), ""),
            "d": point.get("d"), "seq": point.get("seq"), "batch": point.get("batch"),
            "heads": point.get("heads"), "precision": point.get("precision"),
            "causal": point.get("causal", True), "status": status, "message": message,
            "forward_ms": forward_ms, "backward_ms": backward_ms, "peak_bytes": peak_bytes}


def unavailable_reason(point):
    if point.get("backend") not in BACKENDS:
        return (f"backend: '{point.get('backend')}' is not served by the PyTorch worker; "
                f"allowed: {', '.join(BACKENDS)}")
    if point.get("precision", "fp32") not in DTYPES:
        return (f"precision: '{point.get('precision')}' is not served; allowed: "
                f"{', '.join(DTYPES)}")
    device = point.get("device", "cpu")
    if device not in ("cpu", "cuda"):
        return f"device: '{device}' is not served; allowed: cpu, cuda"
    if device == "cuda" and not torch.cuda.is_available():
        return "device: 'cuda' was asked for, but this torch sees no CUDA device; allowed: cpu"
    return None


def attention_function(backend):
    if backend == "compiled":
        torch._dynamo.reset()  # a fresh compile for this shape, not a dynamic-shape reuse
        return compile_function(naive_attention, dynamic=False)
    return naive_attention


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def timed_ms(function, device):
    synchronize(device)
    start = time.perf_counter()
    result = function()
    synchronize(device)
    return result, (time.perf_counter() - start) * 1e3


def measure(point):
    """(forward_ms, backward_ms, peak_bytes) of one point."""
    device = point.get("device", "cpu")
    causal = bool(point.get("causal", True))
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(int(point.get("seed", 0)))
    shape = (int(point["batch"]), int(point["heads"]), int(point["seq"]), int(point["d"]))
    options = {"device": device, "dtype": DTYPES[point.get("precision", "fp32")]}
    q, k, v = (torch.randn(shape, **options).requires_grad_() for _ in range(3))
    grad_out = torch.randn(shape, **options)
    attend = attention_function(point["backend"])
    warmup, repeats = max(1, int(point.get("warmup", 1))), max(1, int(point.get("repeats", 5)))
    forward_times, backward_times = [], []
    for i in range(warmup + repeats):
        for tensor in (q, k, v):
            tensor.grad = None
        out, forward_ms = timed_ms(lambda: attend(q, k, v, causal), device)
        _, backward_ms = timed_ms(lambda: out.backward(grad_out), device)
        if i >= warmup:
            forward_times.append(forward_ms)
            backward_times.append(backward_ms)
    peak = torch.cuda.max_memory_allocated() if device == "cuda" else None
    return statistics.median(forward_times), statistics.median(backward_times), peak


def measure_point(point):
    """The point's `point` event fields; a failure is the point's status, not the command's."""
    reason = unavailable_reason(point)
    if reason:
        return point_event(point, "unavailable", reason)
    try:
        forward_ms, backward_ms, peak = measure(point)
    except Exception as error:  # the grid goes on after a point that fails
        if is_out_of_memory(error):
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            return point_event(point, "oom", str(error).strip().splitlines()[0])
        return point_event(point, "failed", with_traceback_tail(first_line(error), error))
    return point_event(point, "ok", forward_ms=forward_ms, backward_ms=backward_ms,
                       peak_bytes=peak)


def run_attention(request, events, cancelled):
    """Emits one `point` per point; returns (status, message) for `finished`."""
    points = request.get("points", [])
    for done, point in enumerate(points):
        if cancelled():
            return "cancelled", f"cancelled after {done} of {len(points)} points"
        events.emit("point", **measure_point(point))
    return "ok", ""
