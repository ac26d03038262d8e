"""Operator and kernel rows from a hand-made profiler tree (no GPU needed):
the CUDA attribution rules checked where no CUDA device is at hand."""
from types import SimpleNamespace

from torch._C._profiler import RecordScope, _EventType
from torch.autograd import DeviceType

from stepscope.timeline import Timeline
from stepscope.trace_ops import kernel_rows, operator_rows


def node(name, start, end, children=(), scope=RecordScope.FUNCTION, correlation=0):
    return SimpleNamespace(name=name, tag=_EventType.TorchOp, start_time_ns=start,
                           end_time_ns=end, duration_time_ns=end - start,
                           children=list(children), correlation_id=correlation,
                           extra_fields=SimpleNamespace(scope=scope))


def user_range(name, start, end, children=()):
    return node(name, start, end, children, scope=RecordScope.USER_SCOPE)


def device_event(name, start, duration, linked=0, annotation=False):
    return SimpleNamespace(name=lambda: name, start_ns=lambda: start,
                           duration_ns=lambda: duration, device_type=lambda: DeviceType.CUDA,
                           linked_correlation_id=lambda: linked,
                           is_user_annotation=lambda: annotation)


def step(index, base, backward_thread_ops=()):
    """Step `index` from time base: forward [base+10, base+50], backward [base+60, base+90]."""
    mm = node("aten::matmul", base + 12, base + 30, correlation=100 * index + 1,
              children=[node("aten::mm", base + 13, base + 29, correlation=100 * index + 2)])
    forward = user_range("forward", base + 10, base + 50, [mm])
    backward = user_range("backward", base + 60, base + 90)
    return user_range(f"step {index}", base, base + 100, [forward, backward])


def tree():
    # Backward's autograd node runs on another thread: a root of its own, inside
    # backward's range by time only.
    autograd = node("autograd::engine::evaluate_function: MmBackward0", 165, 180,
                    correlation=201,
                    children=[node("MmBackward0", 166, 179, scope=RecordScope.BACKWARD_FUNCTION,
                                   correlation=202)])
    return [step(0, 0), step(1, 100), autograd]


def test_operators_are_top_level_named_like_the_engine_and_placed_by_time():
    roots = tree()
    rows = operator_rows(roots, Timeline(roots), first_measured_step=1)
    assert rows == [{"name": "aten::matmul", "phase": "forward", "calls": 1, "total_ms": 18e-6},
                    {"name": "MmBackward0", "phase": "backward", "calls": 1,
                     "total_ms": 15e-6}]


def test_kernels_take_their_launching_operators_phase():
    roots = tree()
    events = [
        device_event("gemm_forward", 400, 7, linked=102),  # launched by step 1's aten::mm
        device_event("gemm_backward", 185, 5, linked=202),  # runs after backward's range ends
        device_event("gemm_warmup", 20, 9, linked=2),  # step 0: warm-up
        device_event("orphan", 170, 3),  # no operator: its own start, in backward
        device_event("backward", 160, 30, annotation=True),  # a range, not a kernel
    ]
    rows = kernel_rows(roots, events, Timeline(roots), first_measured_step=1)
    by_name = {row["name"]: (row["phase"], row["calls"], row["total_ms"]) for row in rows}
    assert by_name == {"gemm_forward": ("forward", 1, 7e-6),
                       "gemm_backward": ("backward", 1, 5e-6),
                       "orphan": ("backward", 1, 3e-6)}
