"""The PyTorch worker: `python -m stepscope.worker` (docs/worker-protocol.md).

Reads one JSON request from stdin and answers with JSON-line events on
stdout, the last of them always one `finished`. Commands:

- `run`: steps a model with PyTorch eager (engine `pytorch`) or
  torch.compile (`pytorch-compile`) as the C++ engine steps its own, and
  traces operators, kernels and memory when asked; with a `parallel`
  strategy, on `ranks` processes started by torchrun
  (stepscope.distributed.launch).
- `attention`: times attention points: naive, sdpa, torch.compile of naive,
  and the Python backends (flash-pytorch, flash-triton, the user's
  py_attention), each checked by the correctness gate before it is timed.

SIGTERM asks the worker to stop after the step (or point) under way; it
then reports `cancelled`. The exit status is 0 whenever `finished` was sent:
the status in it is the result.
"""
import json
import platform
import signal
import sys
import time

import torch

from .attention_points import run_attention
from .distributed.launch import run_distributed
from .events import EventStream
from .outcome import Finish, failed, first_line, is_out_of_memory, outcome_of
from .run_config import parse_run_config
from .run_state import build_run_state
from .steps import Step, make_timer, run_step, run_untimed_step
from .tracing import Tracer


class CancelFlag:
    """Set by SIGTERM; read between steps."""

    def __init__(self):
        self.set = False

    def install(self, signals=(signal.SIGTERM,)):
        for number in signals:
            signal.signal(number, self._on_signal)
        return self

    def _on_signal(self, signum, frame):
        self.set = True

    def __call__(self):
        return self.set


def cpu_model_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_name(device):
    return torch.cuda.get_device_name() if device == "cuda" else cpu_model_name()


def started_fields(spec, state):
    return {"torch_version": torch.__version__, "cuda_version": torch.version.cuda or "",
            "device_name": device_name(spec.device), "cpu_threads": torch.get_num_threads(),
            "python": sys.executable, "parameters": state.parameter_count}


def configure_torch(spec):
    if spec.threads > 0:
        torch.set_num_threads(spec.threads)
    if spec.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = spec.tf32
        torch.backends.cudnn.allow_tf32 = spec.tf32
        torch.cuda.reset_peak_memory_stats()


class RunCommand:
    """The `run` command: setup, the compiled first call, the steps, the traces."""

    def __init__(self, spec, events, cancelled):
        self.spec = spec
        self.events = events
        self.cancelled = cancelled
        self.tracer = Tracer(spec)

    def progress(self, step, warmup, phase):
        self.events.emit("progress", step=step, total_steps=self.spec.total_steps,
                         warmup=warmup, phase=phase)

    def run(self):
        """Returns (status, message); the traces are sent before, also after a failure."""
        spec = self.spec
        configure_torch(spec)
        self.progress(0, spec.warmup > 0, "setup")
        if spec.trace_memory:
            self.tracer.start()  # parameters and inputs are allocated in setup
        try:
            outcome = self._setup_and_steps()
        except BaseException:
            self._stop_and_emit_traces(operators=False)
            raise
        self._stop_and_emit_traces(operators=True)
        return outcome

    def _setup_and_steps(self):
        spec = self.spec
        state = build_run_state(spec)
        self.tracer.after_build(state)
        self.events.emit("started", **started_fields(spec, state))
        step = Step(state, spec)
        if spec.compiled and not self.cancelled():
            self._compile(step)
        if spec.traced and not self.tracer.recording:
            self.tracer.start()
        timer = make_timer(spec.device)
        for index in range(spec.total_steps):
            if self.cancelled():
                return "cancelled", f"cancelled after {index} of {spec.total_steps} steps"
            fields = run_step(step, index, timer, self.tracer, self.progress)
            self.events.emit("step", **fields)
        return "ok", ""

    def _compile(self, step):
        """torch.compile's first call: one whole step, timed, kept out of the steps."""
        self.progress(0, self.spec.warmup > 0, "compile")
        start = time.perf_counter()
        try:
            run_untimed_step(step)
        except Finish:
            raise
        except Exception as error:
            if is_out_of_memory(error):
                raise
            raise failed(f"pytorch-compile: the first compiled call failed: "
                         f"{first_line(error)}", error) from error
        self.events.emit("compiled", compile_ms=(time.perf_counter() - start) * 1e3)

    def _stop_and_emit_traces(self, operators):
        try:
            self.tracer.stop()
            self.tracer.emit_traces(self.events, operators=operators)
        except Exception as error:  # a trace that cannot be read must not hide the run's end
            print(f"stepscope.worker: the traces could not be read: {first_line(error)}",
                  file=sys.stderr)


def run_request(request, events, cancelled):
    """Serves one request; returns (status, message) for `finished`."""
    command = request.get("command") if isinstance(request, dict) else None
    if command == "run":
        spec = parse_run_config(request.get("config"))
        if spec.distributed:
            return run_distributed(request["config"], spec, events, cancelled)
        return RunCommand(spec, events, cancelled).run()
    if command == "attention":
        return run_attention(request, events, cancelled)
    return "failed", f"unknown command '{command}'; the worker serves run, attention"


def serve(request_text, events, cancelled):
    """Runs the request and always ends with exactly one `finished` event."""
    try:
        request = json.loads(request_text)
    except json.JSONDecodeError as error:
        events.emit("finished", status="failed", message=f"the request is not JSON: {error}")
        return "failed"
    return serve_request(request, events, cancelled)


def serve_request(request, events, cancelled):
    """serve() for a request already parsed (the recorder's, made in this process)."""
    try:
        status, message = run_request(request, events, cancelled)
    except BaseException as error:  # SystemExit from a user's model too: finished comes last
        status, message = outcome_of(error)
    events.emit("finished", status=status, message=message)
    return status


def main():
    events = EventStream.take_stdout()
    cancelled = CancelFlag().install()
    serve(sys.stdin.read(), events, cancelled)
    return 0


if __name__ == "__main__":
    sys.exit(main())
