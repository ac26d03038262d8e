"""The step loop, as the C++ engine runs it (core/engines/runner.cpp runStep).

A step: zero the gradients (modes with backward), forward and loss under
autocast (and inference_mode for inference), mark; backward, mark;
optimizer step, mark. On the CPU the marks are perf_counter readings; on
CUDA they are events on the current stream, read after one synchronisation
at the end of the step.
"""
import contextlib
import time

import torch
from torch import nn

from .events import finite_or_none
from .user_model import check_logits


class ClockTimer:
    def start(self):
        self._marks = [time.perf_counter()]

    def mark(self):
        self._marks.append(time.perf_counter())

    def finish(self):
        """Milliseconds of each phase marked since start(), then the total."""
        marks = self._marks
        phases = [(b - a) * 1e3 for a, b in zip(marks, marks[1:])]
        return phases + [(marks[-1] - marks[0]) * 1e3]


class CudaEventTimer:
    def start(self):
        self._events = []
        self.mark()

    def mark(self):
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        self._events.append(event)

    def finish(self):
        events = self._events
        events[-1].synchronize()
        phases = [a.elapsed_time(b) for a, b in zip(events, events[1:])]
        return phases + [events[0].elapsed_time(events[-1])]


def make_timer(device):
    return CudaEventTimer() if device == "cuda" else ClockTimer()


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


class Step:
    """One step's phases on a RunState; the loss passes from forward to backward."""

    def __init__(self, state, spec):
        self.state = state
        self.spec = spec
        self.loss = None
        self._logits_checked = False

    def zero_grad(self):
        if self.spec.has_backward:
            self.state.module.zero_grad(set_to_none=True)

    def forward_context(self):
        stack = contextlib.ExitStack()
        if self.spec.mode == "inference":
            stack.enter_context(torch.inference_mode())
        dtype = self.spec.autocast_dtype
        if dtype is not None:
            stack.enter_context(torch.autocast(device_type=self.spec.device, dtype=dtype))
        return stack

    def forward(self):
        inputs, targets = self.state.inputs, self.state.targets
        with self.forward_context():
            logits = self.state.model(inputs)
            if not self._logits_checked:
                check_logits(logits, inputs, self.spec.dims.vocab)
                self._logits_checked = True
            self.loss = nn.functional.cross_entropy(logits.flatten(0, 1).float(),
                                                    targets.flatten())

    def backward(self):
        self.loss.backward()

    def optimizer(self):
        self.state.optimizer.step()

    def run_phase(self, name):
        getattr(self, name)()

    def take_loss(self):
        """The loss as a number; the tensor (and in forward mode its graph) goes."""
        loss, self.loss = self.loss, None
        return finite_or_none(loss.item())


def run_step(step, index, timer, trace, report_progress):
    """Runs step `index` and returns its `step` event's fields. `trace` gives
    the step and phase ranges and hears when a phase ends (tracing.Tracer)."""
    spec = step.spec
    warmup = index < spec.warmup
    with trace.step_range(index):
        timer.start()
        for number, phase in enumerate(spec.phases):
            report_progress(index, warmup, phase)
            if number == 0:
                step.zero_grad()
            with trace.phase_range(phase):
                step.run_phase(phase)
            timer.mark()
            trace.after_phase(phase, step.state)
        times = timer.finish()
        loss = step.take_loss()
    phase_ms = dict(zip(spec.phases, times))
    return {"index": index, "warmup": warmup, "total_ms": times[-1],
            "forward_ms": phase_ms.get("forward"), "backward_ms": phase_ms.get("backward"),
            "optimizer_ms": phase_ms.get("optimizer"), "loss": loss}


def run_untimed_step(step):
    """One whole step of the mode, synchronised: torch.compile's first call."""
    step.zero_grad()
    for phase in step.spec.phases:
        step.run_phase(phase)
    synchronize(step.spec.device)
    step.take_loss()
