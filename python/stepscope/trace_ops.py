"""Operator and kernel rows of the measured steps, from torch.profiler.

Operators as the C++ engine's tracer counts them: top-level calls only (an
operator inside another operator on its thread is part of its caller's
time), autograd nodes under the name the engine gives them ("MmBackward0",
not "autograd::engine::evaluate_function: MmBackward0"), each row a
(phase, name) pair. Kernels: device time per kernel name and phase, the
phase of the operator that launched the kernel (profiler correlation), or
of the kernel's own start where no operator is known.
"""
from collections import defaultdict

from torch._C._profiler import RecordScope
from torch.autograd import DeviceType

from .timeline import is_torch_op, walk

OPERATOR_SCOPES = (RecordScope.FUNCTION, RecordScope.BACKWARD_FUNCTION)
AUTOGRAD_PREFIX = "autograd::engine::evaluate_function: "


def is_operator(event):
    return is_torch_op(event) and event.extra_fields.scope in OPERATOR_SCOPES


def operator_name(name):
    return name[len(AUTOGRAD_PREFIX):] if name.startswith(AUTOGRAD_PREFIX) else name


def top_level_operators(roots):
    """Operators with no operator above them on their thread; ranges are looked through."""
    stack = list(reversed(roots))
    while stack:
        event = stack.pop()
        if is_operator(event):
            yield event
        else:
            stack.extend(reversed(event.children))


class RowTable:
    """calls and total time per (phase, name)."""

    def __init__(self):
        self._calls = defaultdict(int)
        self._ns = defaultdict(int)

    def add(self, phase, name, duration_ns):
        self._calls[(phase, name)] += 1
        self._ns[(phase, name)] += duration_ns

    def rows(self):
        rows = [{"name": name, "phase": phase, "calls": calls,
                 "total_ms": self._ns[(phase, name)] / 1e6}
                for (phase, name), calls in self._calls.items()]
        return sorted(rows, key=lambda row: row["total_ms"], reverse=True)


def measured_phase(timeline, time_ns, first_measured_step):
    phase = timeline.phase_at(time_ns)
    if phase is None or phase.step < first_measured_step:
        return None
    return phase


def operator_rows(roots, timeline, first_measured_step):
    table = RowTable()
    for op in top_level_operators(roots):
        phase = measured_phase(timeline, op.start_time_ns, first_measured_step)
        if phase is not None:
            table.add(phase.name, operator_name(op.name), op.duration_time_ns)
    return table.rows()


def kernel_rows(roots, device_events, timeline, first_measured_step):
    """`device_events`: the profiler's KinetoEvents (kineto_results.events())."""
    op_start = {event.correlation_id: event.start_time_ns
                for event in walk(roots) if is_operator(event)}
    table = RowTable()
    for event in device_events:
        # Ranges mirrored on the GPU timeline ("gpu_user_annotation") are not kernels.
        if event.device_type() != DeviceType.CUDA or event.is_user_annotation():
            continue
        start_ns = op_start.get(event.linked_correlation_id(), event.start_ns())
        phase = measured_phase(timeline, start_ns, first_measured_step)
        if phase is not None:
            table.add(phase.name, event.name(), event.duration_ns())
    return table.rows()
