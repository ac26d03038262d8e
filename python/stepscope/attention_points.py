"""The `attention` command: forward and backward times of attention points.

Backends: "compiled" is torch.compile of the naive attention function (the
course's exercise), "naive" the same function uncompiled, "sdpa" PyTorch's
scaled_dot_product_attention; the Python backends "flash-pytorch",
"flash-triton" (stepscope.attention) and the user's own (the request's
`py_attention`, named by `py_attention_name` or else the NAME of
MODULE:NAME) are checked by the correctness gate first, once per backend,
precision and device, over the request's head dims: an incorrect backend is
not timed (status `incorrect`), one that raises is `failed` with its
message, and on the CPU a backend that runs Triton kernels (in Triton's
interpreter) is checked but not timed (`unavailable`).

Each point: q, k, v of (batch, heads, seq, d) in the point's dtype ((batch
· heads, seq, d) for the user's backend, the course's layout), requiring
grad; `warmup` calls (at least one, where a compile happens) then `repeats`
measured ones, each a synchronised forward then a backward of a fixed random
output gradient; the times are medians, like the C++ attention benchmark.
"""
import statistics
import time

import torch

from .attention import backends, triton_mode
from .attention.gate import run_gate
from .attention.user_attention import load_user_attention
from .compiling import compile_function
from .model import naive_attention
from .outcome import first_line, is_out_of_memory, with_traceback_tail

BACKENDS = ("compiled", "naive", "sdpa", backends.FLASH_PYTORCH, backends.FLASH_TRITON)
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
KERNELS = {"compiled": "inductor", "naive": "naive", "sdpa": "sdpa"}
INTERPRETER_ONLY = ("this worker runs Triton in its interpreter (TRITON_INTERPRET=1, for the "
                    "request's CPU points); ask for CUDA points of Triton backends in a request "
                    "of their own")


def sdpa(q, k, v, causal):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


class AttentionGrid:
    """The request's backends: the user's loaded once, the Python ones built
    once, and each gate run once per (backend, precision, device)."""

    def __init__(self, request):
        self.points = request.get("points", [])
        self.user = None
        self.python_backends = {}  # name -> PythonBackend, or the reason it cannot run
        self.gates = {}
        self.head_dims = {}  # gate key -> the head dims its points ask for
        target = request.get("py_attention", "") or ""
        if target:
            if any(point.get("device", "cpu") == "cpu" for point in self.points):
                triton_mode.prepare_for("cpu")  # before the user's Triton kernels are decorated
            self.user = load_user_attention(target, request.get("py_path", "") or "",
                                            request.get("py_attention_name", "") or "")
        if any(point.get("backend") == backends.FLASH_TRITON and
               point.get("device", "cpu") == "cpu" for point in self.points):
            triton_mode.prepare_for("cpu")
        for point in self.points:
            if self.is_gated(point.get("backend")) and not self.unavailable_reason(point):
                key = self.gate_key(point)
                self.head_dims.setdefault(key, set()).add(int(point["d"]))

    @property
    def backend_names(self):
        return BACKENDS + ((self.user.name,) if self.user else ())

    def is_gated(self, name):
        return name in backends.OURS or (self.user is not None and name == self.user.name)

    @staticmethod
    def gate_key(point):
        return point["backend"], point.get("precision", "fp32"), point.get("device", "cpu")

    def unavailable_reason(self, point):
        if point.get("backend") not in self.backend_names:
            return (f"backend: '{point.get('backend')}' is not served by the PyTorch worker; "
                    f"allowed: {', '.join(self.backend_names)}")
        if point.get("precision", "fp32") not in DTYPES:
            return (f"precision: '{point.get('precision')}' is not served; allowed: "
                    f"{', '.join(DTYPES)}")
        device = point.get("device", "cpu")
        if device not in ("cpu", "cuda"):
            return f"device: '{device}' is not served; allowed: cpu, cuda"
        if device == "cuda" and not torch.cuda.is_available():
            return ("device: 'cuda' was asked for, but this torch sees no CUDA device; "
                    "allowed: cpu")
        if point["backend"] == backends.FLASH_TRITON and device == "cuda" and \
                triton_mode.interpreting():
            return INTERPRETER_ONLY
        return None

    def python_backend(self, name):
        """The PythonBackend called `name`, or a string saying why there is none."""
        if name not in self.python_backends:
            if self.user is not None and name == self.user.name:
                self.python_backends[name] = backends.users(self.user)
            else:
                try:
                    self.python_backends[name] = backends.ours(name)
                except RuntimeError as error:
                    self.python_backends[name] = str(error)
        return self.python_backends[name]

    def gate(self, point, backend):
        key = self.gate_key(point)
        if key not in self.gates:
            self.gates[key] = run_gate(backend, key[1], sorted(self.head_dims[key]), key[2])
        return self.gates[key]

    def measure_point(self, point):
        """The point's `point` event fields; a failure is the point's status, not the command's."""
        reason = self.unavailable_reason(point)
        if reason:
            return point_event(point, "unavailable", reason)
        name = point["backend"]
        if not self.is_gated(name):
            attend = compiled_naive() if name == "compiled" else \
                {"naive": naive_attention, "sdpa": sdpa}[name]
            return timed_point(point, attend, shape_of(point), KERNELS[name])
        backend = self.python_backend(name)
        if isinstance(backend, str):
            return point_event(point, "unavailable", backend, kernel="")
        gate = self.gate(point, backend)
        gated = {"kernel": backend.kernel, "gate": gate.fields()}
        if gate.raised:
            return point_event(point, "failed", f"{gate.message}\n{gate.traceback}", **gated)
        if not gate.ok:
            return point_event(point, "incorrect", gate.message, **gated)
        if backend.triton or gate.triton_launches:
            if point.get("device", "cpu") == "cpu":
                return point_event(point, "unavailable", triton_mode.NOT_TIMED_ON_CPU, **gated)
            if triton_mode.interpreting():
                return point_event(point, "unavailable", INTERPRETER_ONLY, **gated)
        return timed_point(point, backend.call, backend.shape(*shape_of(point)), **gated)


def point_event(point, status, message="", forward_ms=None, backward_ms=None, peak_bytes=None,
                kernel=None, gate=None):
    backend = point.get("backend")
    return {"backend": backend, "kernel": KERNELS.get(backend, "") if kernel is None else kernel,
            "d": point.get("d"), "seq": point.get("seq"), "batch": point.get("batch"),
            "heads": point.get("heads"), "precision": point.get("precision"),
            "causal": point.get("causal", True), "status": status, "message": message,
            "forward_ms": forward_ms, "backward_ms": backward_ms, "peak_bytes": peak_bytes,
            "gate": gate}


def shape_of(point):
    return int(point["batch"]), int(point["heads"]), int(point["seq"]), int(point["d"])


def compiled_naive():
    torch._dynamo.reset()  # a fresh compile for this shape, not a dynamic-shape reuse
    return compile_function(naive_attention, dynamic=False)


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def timed_ms(function, device):
    synchronize(device)
    start = time.perf_counter()
    result = function()
    synchronize(device)
    return result, (time.perf_counter() - start) * 1e3


def measure(point, attend, shape):
    """(forward_ms, backward_ms, peak_bytes) of one point, q, k and v of `shape`."""
    device = point.get("device", "cpu")
    causal = bool(point.get("causal", True))
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(int(point.get("seed", 0)))
    options = {"device": device, "dtype": DTYPES[point.get("precision", "fp32")]}
    q, k, v = (torch.randn(shape, **options).requires_grad_() for _ in range(3))
    grad_out = torch.randn(shape, **options)
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


def timed_point(point, attend, shape, kernel=None, gate=None):
    try:
        forward_ms, backward_ms, peak = measure(point, attend, shape)
    except Exception as error:  # the grid goes on after a point that fails
        if is_out_of_memory(error):
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            return point_event(point, "oom", str(error).strip().splitlines()[0], kernel=kernel,
                               gate=gate)
        return point_event(point, "failed", with_traceback_tail(first_line(error), error),
                           kernel=kernel, gate=gate)
    return point_event(point, "ok", forward_ms=forward_ms, backward_ms=backward_ms,
                       peak_bytes=peak, kernel=kernel, gate=gate)


def run_attention(request, events, cancelled):
    """Emits one `point` per point; returns (status, message) for `finished`."""
    grid = AttentionGrid(request)
    for done, point in enumerate(grid.points):
        if cancelled():
            return "cancelled", f"cancelled after {done} of {len(grid.points)} points"
        events.emit("point", **grid.measure_point(point))
    return "ok", ""
