"""A profiled run's structure, read from torch.profiler's event tree.

The worker wraps each step in a record_function range "step N" and each
phase in a range named after it, directly inside the step's range, like the
C++ engine's trace ranges. Everything traced is placed by time on the
profiler's clock: autograd may run backward on another thread (CUDA), so
parentage does not say which phase an operator belongs to, time does.
"""
import bisect
import re
from dataclasses import dataclass

from torch._C._profiler import _EventType

PHASE_NUMBERS = {"setup": 0, "forward": 1, "backward": 2, "optimizer": 3}
STEP_RANGE = re.compile(r"step (\d+)$")
MARK_PREFIX = "stepscope.mark "


def step_range_name(index):
    return f"step {index}"


def mark_range_name(index):
    return f"{MARK_PREFIX}{index}"


@dataclass(frozen=True)
class PhaseRange:
    name: str
    step: int
    start_ns: int
    end_ns: int

    @property
    def number(self):
        return PHASE_NUMBERS[self.name]


def walk(roots):
    """Every event of the tree, parents before children."""
    stack = list(reversed(roots))
    while stack:
        event = stack.pop()
        yield event
        stack.extend(reversed(event.children))


def is_torch_op(event):
    return event.tag == _EventType.TorchOp


class Timeline:
    """Steps, phases and mark times of one profiled run."""

    def __init__(self, roots):
        self.step_starts = []  # (start_ns, step), by start
        self.phases = []  # PhaseRange, by start
        self.mark_times = {}  # mark index -> time_ns
        for event in walk(roots):
            if is_torch_op(event):
                self._read_range(event)
        self.step_starts.sort()
        self.phases.sort(key=lambda phase: phase.start_ns)
        self._phase_starts = [phase.start_ns for phase in self.phases]

    def _read_range(self, event):
        step = STEP_RANGE.match(event.name)
        if step:
            index = int(step.group(1))
            self.step_starts.append((event.start_time_ns, index))
            for child in event.children:
                if is_torch_op(child) and child.name in PHASE_NUMBERS:
                    self.phases.append(PhaseRange(child.name, index, child.start_time_ns,
                                                  child.end_time_ns))
        elif event.name.startswith(MARK_PREFIX):
            self.mark_times[int(event.name[len(MARK_PREFIX):])] = event.start_time_ns

    def phase_at(self, time_ns):
        """The phase range under way at time_ns, or None outside the phases."""
        i = bisect.bisect_right(self._phase_starts, time_ns) - 1
        if i >= 0 and time_ns <= self.phases[i].end_ns:
            return self.phases[i]
        return None

    def step_at(self, time_ns):
        """The step started last by time_ns; -1 before the first."""
        i = bisect.bisect_right(self.step_starts, (time_ns, float("inf"))) - 1
        return self.step_starts[i][1] if i >= 0 else -1
