"""One torch.profiler session for a run's traces (operators, kernels,
memory), the ranges that give the run its structure, and the rows and
memory object made from it afterwards."""
import contextlib
import os
import warnings

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from . import trace_memory, trace_ops
from .timeline import Timeline, mark_range_name, step_range_name

warnings.filterwarnings("ignore", message=".*Profiler clears events at the end of each cycle.*")


def storage_addresses(tensors):
    return {t.untyped_storage().data_ptr() for t in tensors if t is not None and t.numel()}


def gradients_of(module):
    return [p.grad for p in module.parameters() if p.grad is not None]


def optimizer_state_of(optimizer):
    return [value for state in optimizer.state.values() for value in state.values()
            if isinstance(value, torch.Tensor)]


def memory_device(spec):
    if spec.device == "cuda":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


class Tracer:
    """Profiles while started; step and phase ranges go to the profiler only
    while it records, so untraced work has no ranges to pay for."""

    def __init__(self, spec):
        self.spec = spec
        self._profile = None
        self._marks = {}  # mark index -> (category, addresses)
        self.results = None  # the profiler's results once stopped

    @property
    def recording(self):
        return self._profile is not None

    def start(self):
        if not torch.cuda.is_available():
            # A CUDA build of torch on a machine without a driver: Kineto
            # still asks for the GPUs and logs "gpuGetDeviceCount failed" as
            # an error, though nothing is wrong. It reads this on first use;
            # a level the user set is kept.
            os.environ.setdefault("KINETO_LOG_LEVEL", "5")
        activities = [ProfilerActivity.CPU]
        if self.spec.trace_kernels:
            activities.append(ProfilerActivity.CUDA)
        self._profile = profile(activities=activities, profile_memory=self.spec.trace_memory)
        self._profile.start()

    def stop(self):
        if self._profile is None:
            return
        profiler, self._profile = self._profile, None
        profiler.stop()
        self.results = profiler.profiler.kineto_results

    def _range(self, name):
        return record_function(name) if self.recording else contextlib.nullcontext()

    def step_range(self, index):
        return self._range(step_range_name(index))

    def phase_range(self, name):
        return self._range(name)

    def mark(self, category, tensors):
        """These tensors' storages are of `category` from now until freed."""
        if not (self.recording and self.spec.trace_memory):
            return
        index = len(self._marks)
        with record_function(mark_range_name(index)):
            self._marks[index] = (category, storage_addresses(tensors))

    def after_build(self, state):
        self.mark(trace_memory.PARAMETERS, list(state.module.parameters()))
        self.mark(trace_memory.INPUTS, [state.tokens])

    def after_phase(self, name, state):
        if name == "backward":
            self.mark(trace_memory.GRADIENTS, gradients_of(state.module))
        elif name == "optimizer":
            self.mark(trace_memory.OPTIMIZER_STATE, optimizer_state_of(state.optimizer))

    def operator_rows(self, roots, timeline):
        return trace_ops.operator_rows(roots, timeline, self.spec.warmup)

    def kernel_rows(self, roots, timeline):
        return trace_ops.kernel_rows(roots, self.results.events(), timeline, self.spec.warmup)

    def memory(self, roots, timeline):
        device = memory_device(self.spec)
        peaks = (None, None)
        if device.type == "cuda":
            peaks = (torch.cuda.max_memory_allocated(device),
                     torch.cuda.max_memory_reserved(device))
        name = f"{device.type}:{device.index or 0}"  # as the C++ engine names it: "cpu:0"
        return trace_memory.memory_object(roots, timeline, self._marks, device, name, peaks)

    def emit_traces(self, events, operators=True):
        """Sends the operators, kernels and memory events the config asked for;
        `operators=False` keeps only the memory (a run that failed)."""
        if self.results is None:
            return
        roots = self.results.experimental_event_tree()
        timeline = Timeline(roots)
        if operators and (self.spec.trace_ops or self.spec.trace_kernels):
            events.emit("operators", rows=self.operator_rows(roots, timeline))
        if operators and self.spec.trace_kernels:
            events.emit("kernels", rows=self.kernel_rows(roots, timeline))
        if self.spec.trace_memory:
            memory = self.memory(roots, timeline)
            if memory is not None:
                events.emit("memory", memory=memory)
