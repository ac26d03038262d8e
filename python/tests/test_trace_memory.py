"""The memory object from a hand-made profiler tree: the C++ tracker's
category rules, the device filter and the columns, event by event."""
from types import SimpleNamespace

import torch
from torch._C._profiler import RecordScope, _EventType

from stepscope.timeline import Timeline, mark_range_name
from stepscope.trace_memory import (ACTIVATIONS, GRADIENTS, OTHER, PARAMETERS, TEMPORARIES,
                                    memory_object)

CUDA = torch.device("cuda", 0)


def op(name, start, end, children=(), scope=RecordScope.FUNCTION):
    event = SimpleNamespace(name=name, tag=_EventType.TorchOp, start_time_ns=start,
                            end_time_ns=end, children=list(children), parent=None,
                            extra_fields=SimpleNamespace(scope=scope))
    for child in event.children:
        child.parent = event
    return event


def allocation(time, ptr, size, device=CUDA, total=0, reserved=0):
    return SimpleNamespace(name="[memory]", tag=_EventType.Allocation, start_time_ns=time,
                           children=[], parent=None,
                           extra_fields=SimpleNamespace(ptr=ptr, alloc_size=size,
                                                        total_allocated=total,
                                                        total_reserved=reserved,
                                                        device=device))


def rng(name, start, end, children=()):
    return op(name, start, end, children, scope=RecordScope.USER_SCOPE)


def run_tree():
    """Setup: a parameter at 0x100 (marked). Step 0: forward keeps 0x200 past
    backward's start and frees 0x300 in forward; backward makes a gradient at
    0x400 (marked) and frees 0x200. A CPU allocation is not the run's device."""
    forward = rng("forward", 100, 200, [
        op("aten::matmul", 110, 150, [allocation(120, 0x200, 4096, total=4608),
                                       allocation(130, 0x300, 512, total=5120)]),
        allocation(140, 0x900, 64, device=torch.device("cpu")),
        op("aten::relu", 160, 170, [allocation(165, 0x300, -512, total=4608)]),
    ])
    node = op("MmBackward0", 210, 240, [allocation(220, 0x400, 512, total=5120),
                                        allocation(230, 0x200, -4096, total=1024)],
              scope=RecordScope.BACKWARD_FUNCTION)
    backward = rng("backward", 205, 250, [op(
        "autograd::engine::evaluate_function: MmBackward0", 208, 245, [node])])
    return [allocation(10, 0x100, 512, total=512, reserved=2048), rng(mark_range_name(0), 20, 21),
            rng("step 0", 90, 300, [forward, backward, rng(mark_range_name(1), 260, 261)])]


def test_categories_follow_the_engines_rules():
    roots = run_tree()
    marks = {0: (PARAMETERS, {0x100}), 1: (GRADIENTS, {0x400})}
    memory = memory_object(roots, Timeline(roots), marks, CUDA, "cuda:0", peaks=(9000, 9100))
    assert memory["address"] == [0x100, 0x200, 0x300, 0x300, 0x400, 0x200]
    assert memory["bytes"] == [512, 4096, 512, -512, 512, -4096]
    assert memory["category"] == [PARAMETERS, ACTIVATIONS, TEMPORARIES, TEMPORARIES, GRADIENTS,
                                  ACTIVATIONS]
    assert memory["phase"] == [0, 1, 1, 1, 2, 2]
    assert memory["step"] == [-1, 0, 0, 0, 0, 0]
    assert memory["time_us"] == [0, 0.11, 0.12, 0.155, 0.21, 0.22]
    assert memory["allocated"] == [512, 4608, 5120, 4608, 5120, 1024]
    assert memory["reserved"][0] == 2048
    ops = [memory["paths"][i] if i >= 0 else None for i in memory["op"]]
    assert ops == [None, "aten::matmul", "aten::matmul", "aten::relu", "MmBackward0",
                   "MmBackward0"]
    paths = [memory["paths"][i] if i >= 0 else None for i in memory["path"]]
    assert paths == [None, None, None, None, "MmBackward0", "MmBackward0"]
    assert memory["phases"] == [[1, 0, 0.09, 0.19], [2, 0, 0.195, 0.24]]
    assert (memory["device"], memory["clock_origin_us"]) == ("cuda:0", 0.01)
    assert (memory["device_peak_allocated"], memory["device_peak_reserved"]) == (9000, 9100)


def test_forward_allocations_are_temporaries_or_other_without_a_backward():
    roots = [rng("step 0", 0, 100, [rng("forward", 10, 50, [
        allocation(20, 0x10, 256), allocation(30, 0x20, 256), allocation(40, 0x10, -256)])])]
    memory = memory_object(roots, Timeline(roots), {}, CUDA, "cuda:0")
    assert memory["category"] == [TEMPORARIES, OTHER, TEMPORARIES]
    assert memory["allocated"] == [256, 512, 256]  # the running sum where none is reported
