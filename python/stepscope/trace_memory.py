"""Every allocation and free of a run on its device, as the run file's
`memory` object (core/results/run_file.cpp memoryJson, memory_trace.h).

The events are torch.profiler's Allocation events (profile_memory=True):
address, size (negative for a free), the allocator's totals after it, and
the operator on the stack. Categories follow the C++ MemoryTracker: the
worker marks the storages that are parameters, inputs, gradients and
optimizer state when they are (a mark range on the profiler's clock names
the allocation live at each address then); the rest is activations (forward
allocations still alive when that step's backward starts), temporaries
(freed in the phase and step that allocated them) or other.
"""
from dataclasses import dataclass, field
from typing import Optional

from torch._C._profiler import _EventType, RecordScope

from .timeline import walk
from .trace_ops import AUTOGRAD_PREFIX

PARAMETERS, GRADIENTS, OPTIMIZER_STATE, ACTIVATIONS, TEMPORARIES, INPUTS, OTHER = range(7)
FORWARD, BACKWARD = 1, 2


@dataclass
class Instance:
    """One allocation, from its event to its free."""
    phase: int
    step: int
    fact: Optional[int] = None  # a marked category
    free_phase: int = -1
    free_step: int = -1


class NameTable:
    def __init__(self):
        self.names = []
        self._index = {}

    def index(self, name):
        if name is None:
            return -1
        if name not in self._index:
            self._index[name] = len(self.names)
            self.names.append(name)
        return self._index[name]


def producing_op(event):
    """(op, autograd node) on the allocation's stack: the innermost ATen op, or
    in backward the autograd node being evaluated (which then is both)."""
    innermost = None
    node = event.parent
    while node is not None:
        if node.tag == _EventType.TorchOp:
            scope = node.extra_fields.scope
            if scope == RecordScope.BACKWARD_FUNCTION:
                return node.name, node.name
            if node.name.startswith(AUTOGRAD_PREFIX):
                name = node.name[len(AUTOGRAD_PREFIX):]
                return name, name
            if innermost is None and scope == RecordScope.FUNCTION:
                innermost = node.name
        node = node.parent
    return innermost, None


def on_device(event, device):
    allocation_device = event.extra_fields.device
    if allocation_device.type != device.type:
        return False
    return device.index is None or allocation_device.index in (None, device.index)


def allocation_events(roots, device):
    events = [event for event in walk(roots)
              if event.tag == _EventType.Allocation and on_device(event, device)]
    events.sort(key=lambda event: event.start_time_ns)
    return events


@dataclass
class Columns:
    time_us: list = field(default_factory=list)
    address: list = field(default_factory=list)
    bytes: list = field(default_factory=list)
    phase: list = field(default_factory=list)
    step: list = field(default_factory=list)
    path: list = field(default_factory=list)
    op: list = field(default_factory=list)
    allocated: list = field(default_factory=list)
    reserved: list = field(default_factory=list)


class MemoryTraceBuilder:
    def __init__(self, timeline, facts):
        """facts: [(time_ns, category, addresses)], the marks in time order."""
        self.timeline = timeline
        self.facts = sorted(facts, key=lambda fact: fact[0])
        self.columns = Columns()
        self.names = NameTable()
        self.instances = []
        self.instance_of_event = []  # index into instances, or -1: allocated before tracing
        self._live = {}  # address -> index into instances
        self._running_total = 0

    def build(self, events, device_name, origin_ns, peaks):
        next_fact = 0
        for event in events:
            while next_fact < len(self.facts) and self.facts[next_fact][0] <= event.start_time_ns:
                self._apply_fact(*self.facts[next_fact][1:])
                next_fact += 1
            self._add(event, origin_ns)
        for fact in self.facts[next_fact:]:
            self._apply_fact(*fact[1:])
        return self._memory_object(device_name, origin_ns, peaks)

    def _apply_fact(self, category, addresses):
        for address in addresses:
            if address in self._live:
                self.instances[self._live[address]].fact = category

    def _add(self, event, origin_ns):
        fields, c, time_ns = event.extra_fields, self.columns, event.start_time_ns
        phase_range = self.timeline.phase_at(time_ns)
        phase = phase_range.number if phase_range else 0
        step = self.timeline.step_at(time_ns)
        op, node = producing_op(event)
        self._running_total += fields.alloc_size
        c.time_us.append((time_ns - origin_ns) / 1e3)
        c.address.append(fields.ptr)
        c.bytes.append(fields.alloc_size)
        c.phase.append(phase)
        c.step.append(step)
        c.path.append(self.names.index(node))
        c.op.append(self.names.index(op))
        c.allocated.append(fields.total_allocated if fields.total_allocated > 0
                           else self._running_total)
        c.reserved.append(max(fields.total_reserved, 0))
        self._pair(fields.ptr, fields.alloc_size, phase, step)

    def _pair(self, address, size, phase, step):
        if size > 0:
            self._live[address] = len(self.instances)
            self.instance_of_event.append(len(self.instances))
            self.instances.append(Instance(phase, step))
        elif address in self._live:
            index = self._live.pop(address)
            self.instances[index].free_phase = phase
            self.instances[index].free_step = step
            self.instance_of_event.append(index)
        else:
            self.instance_of_event.append(-1)

    def _categories(self):
        backward_starts = {phase.step for phase in self.timeline.phases
                           if phase.number == BACKWARD}
        categories = [category_of(instance, backward_starts) for instance in self.instances]
        return [categories[i] if i >= 0 else OTHER for i in self.instance_of_event]

    def _memory_object(self, device_name, origin_ns, peaks):
        c = self.columns
        phases = [[phase.number, phase.step, (phase.start_ns - origin_ns) / 1e3,
                   (phase.end_ns - origin_ns) / 1e3] for phase in self.timeline.phases]
        return {"device": device_name, "clock_origin_us": origin_ns / 1e3,
                "paths": self.names.names, "time_us": c.time_us, "address": c.address,
                "bytes": c.bytes, "category": self._categories(), "phase": c.phase,
                "step": c.step, "path": c.path, "op": c.op, "allocated": c.allocated,
                "reserved": c.reserved, "phases": phases,
                "device_peak_allocated": peaks[0], "device_peak_reserved": peaks[1]}


def category_of(instance, steps_with_backward):
    if instance.fact is not None:
        return instance.fact
    freed_in_own_phase = (instance.free_phase == instance.phase
                          and instance.free_step == instance.step)
    if instance.phase == FORWARD and instance.step in steps_with_backward \
            and not freed_in_own_phase:
        return ACTIVATIONS
    if instance.phase > 0 and freed_in_own_phase:
        return TEMPORARIES
    return OTHER


def memory_object(roots, timeline, marks, device, device_name, peaks=(None, None)):
    """The run file's memory object, or None when nothing was allocated.

    marks: {mark index: (category, addresses)}, their times in the timeline."""
    events = allocation_events(roots, device)
    if not events:
        return None
    facts = [(timeline.mark_times[index], category, addresses)
             for index, (category, addresses) in marks.items() if index in timeline.mark_times]
    origin_ns = events[0].start_time_ns
    return MemoryTraceBuilder(timeline, facts).build(events, device_name, origin_ns, peaks)
