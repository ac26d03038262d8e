"""The correctness gate: a Python attention backend is checked before it is
timed.

The backend runs forward and backward on small shapes (a ragged length,
causal and not, each head dim asked for) in one precision, against
reference_attention in float64 on the same (rounded) inputs and output
gradient. Compared: O, L (where the backend's autograd Function saves
exactly one tensor of the logsumexp's shape (batch[, heads], seq_q)), dQ,
dK and dV.

The error of a tensor x against its reference r is relative to the
reference's scale, max|x - r| / max|r| over the whole tensor (0 where both
are 0), so a small entry's noise is measured against the tensor's size, as
a reader of a bf16 kernel's output would. A backend is correct when its
worst error over every tensor and shape is within TOLERANCES[precision].
A backend that raises is a result (raised, with its message), never a crash.
"""
import math
from dataclasses import dataclass
from typing import Optional

import torch

from ..outcome import first_line, traceback_tail
from .reference import reference_attention
from .triton_mode import counting_interpreted_launches

TOLERANCES = {"fp32": 1e-4, "bf16": 2e-2, "fp16": 2e-2}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
TOLERANCE_RULE = "max|x - ref| / max|ref| against float64"

# Small shapes: a length that is no multiple of any power-of-two tile from 2
# up (so the last tile of every size is ragged), long enough for several 16-
# and 32-row tiles; two batch entries and two heads.
GATE_BATCH, GATE_HEADS, GATE_SEQ = 2, 2, 77
DEFAULT_HEAD_DIMS = (32,)
SEED = 1234


@dataclass(frozen=True)
class GateCase:
    d: int
    causal: bool
    seq: int = GATE_SEQ
    batch: int = GATE_BATCH
    heads: int = GATE_HEADS

    def describe(self):
        return f"d {self.d}, seq {self.seq}, {'causal' if self.causal else 'not causal'}"


def gate_cases(head_dims=DEFAULT_HEAD_DIMS, seq=GATE_SEQ):
    return [GateCase(d=int(d), causal=causal, seq=seq)
            for d in sorted(set(head_dims)) for causal in (True, False)]


@dataclass(frozen=True)
class GateResult:
    ok: bool
    max_rel_error: Optional[float]  # None where the backend raised (or nothing finite came)
    message: str
    precision: str
    raised: bool = False  # the backend raised: the grid's status is failed, not incorrect
    triton_launches: int = 0  # kernels it launched in Triton's interpreter
    traceback: str = ""  # where the backend raised: the last lines of its traceback

    @property
    def tolerance(self):
        return TOLERANCES[self.precision]

    def fields(self):
        """The point event's `gate` object."""
        error = self.max_rel_error
        return {"ok": self.ok,
                "max_rel_error": error if error is not None and math.isfinite(error) else None,
                "tolerance": self.tolerance, "message": self.message}


class Incorrect(Exception):
    """The backend ran but gave something that cannot be compared (a wrong shape)."""


def relative_error(value, reference):
    """max|x - r| / max|r|; inf where x holds NaN or inf."""
    value = value.detach().double()
    if not torch.isfinite(value).all():
        return math.inf
    scale = reference.abs().max().item()
    difference = (value - reference).abs().max().item()
    if scale == 0:
        return 0.0 if difference == 0 else math.inf
    return difference / scale


def saved_logsumexps(out, expected_shape):
    """The tensors of the logsumexp's shape an autograd Function saved for
    backward (read before backward frees them); None for anything else."""
    node = out.grad_fn
    try:
        saved = node.saved_tensors if node is not None else None
    except (AttributeError, RuntimeError):
        return None
    if saved is None:
        return None
    return [tensor for tensor in saved if tuple(tensor.shape) == expected_shape]


def case_inputs(backend, case, dtype, device):
    generator = torch.Generator().manual_seed(SEED + case.d + 7 * case.causal)
    shape = backend.shape(case.batch, case.heads, case.seq, case.d)
    return [torch.randn(shape, generator=generator).to(device=device, dtype=dtype)
            for _ in range(4)]  # q, k, v and the output gradient


def check_case(backend, case, precision, device):
    """{tensor name: relative error} of one case, and notes on what was not checked."""
    q, k, v, grad_out = case_inputs(backend, case, DTYPES[precision], device)
    q, k, v = (tensor.requires_grad_() for tensor in (q, k, v))
    out = backend.call(q, k, v, case.causal)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"returned a {type(out).__name__}, not the output tensor")
    if out.shape != q.shape:
        raise Incorrect(f"returned shape {tuple(out.shape)} for q of shape {tuple(q.shape)}")
    logsumexps = saved_logsumexps(out, tuple(q.shape[:-1]))
    out.backward(grad_out)
    reference_q, reference_k, reference_v = (
        tensor.detach().double().requires_grad_() for tensor in (q, k, v))
    reference_out, reference_lse = reference_attention(reference_q, reference_k, reference_v,
                                                       case.causal)
    reference_out.backward(grad_out.double())
    errors = {"O": relative_error(out, reference_out.detach())}
    notes = []
    lse_shape = tuple(q.shape[:-1])
    if logsumexps is None:
        notes.append("L not checked: the output comes from no autograd Function")
    elif len(logsumexps) == 1:
        errors["L"] = relative_error(logsumexps[0], reference_lse.detach())
    else:
        notes.append(f"L not checked: {len(logsumexps)} saved tensors have the logsumexp's "
                     f"shape {lse_shape}, the convention is one")
    for name, tensor, reference in (("dQ", q, reference_q), ("dK", k, reference_k),
                                    ("dV", v, reference_v)):
        if tensor.grad is None:
            raise Incorrect(f"no gradient reached {name[1].lower()}: the backward does not "
                            "produce it")
        errors[name] = relative_error(tensor.grad, reference.grad)
    return errors, notes


def run_gate(backend, precision, head_dims=DEFAULT_HEAD_DIMS, device="cpu", seq=GATE_SEQ):
    """The GateResult of `backend` (a backends.PythonBackend) in `precision`."""
    tolerance = TOLERANCES[precision]
    worst, worst_at, notes = 0.0, "", []
    with counting_interpreted_launches() as launches:
        for case in gate_cases(head_dims, seq):
            try:
                errors, case_notes = check_case(backend, case, precision, device)
            except Incorrect as wrong:
                return GateResult(False, None, f"incorrect: {wrong} ({case.describe()})",
                                  precision, triton_launches=launches.launches)
            except Exception as error:  # the backend's own failure is the gate's result
                return GateResult(False, None, f"{backend.name} raised {first_line(error)} "
                                  f"({case.describe()}, {precision})", precision, raised=True,
                                  triton_launches=launches.launches,
                                  traceback=traceback_tail(error))
            notes += [note for note in case_notes if note not in notes]
            for name, error in errors.items():
                if error > worst or not worst_at:
                    worst, worst_at = error, f"{name} at {case.describe()}"
    ok = worst <= tolerance
    if ok:
        message = f"correct: worst {worst:.1e} ({worst_at}) within {tolerance:.0e}"
    elif math.isinf(worst):
        message = f"incorrect: {worst_at.split(' at ')[0]} holds NaN or inf ({worst_at})"
    else:
        message = (f"incorrect: relative error {worst:.1e} ({worst_at}) exceeds the {precision} "
                   f"tolerance {tolerance:.0e} ({TOLERANCE_RULE})")
    if not ok and launches.launches and precision == "bf16":
        message += ("; Triton's interpreter computes bf16 only in loads, stores, casts and "
                    "tl.dot: check it on a GPU")
    if notes:
        message += "; " + "; ".join(notes)
    return GateResult(ok, worst, message, precision, triton_launches=launches.launches)
