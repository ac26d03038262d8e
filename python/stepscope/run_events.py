"""The worker's events of one run, kept for its run file: what the C++
client (core/engines/python_worker.cpp WorkerRun) keeps of them, here for a
run made in this process."""
from .categories import with_categories


class RunEvents:
    """An event sink for the worker's RunCommand; `on_step(fields)`, if given,
    hears each step as it comes."""

    def __init__(self, on_step=None):
        self.on_step = on_step
        self.started = {}  # the `started` event's fields: torch, device, threads, parameters
        self.steps = []
        self.compile_ms = None
        self.operators = []
        self.kernels = []
        self.memory = None
        self.status = None  # from `finished`
        self.message = ""

    def emit(self, event, **fields):
        if event == "started":
            self.started = fields
        elif event == "compiled":
            self.compile_ms = fields["compile_ms"]
        elif event == "step":
            self.steps.append(fields)
            if self.on_step:
                self.on_step(fields)
        elif event == "operators":
            self.operators = with_categories(fields["rows"], kernels=False)
        elif event == "kernels":
            self.kernels = with_categories(fields["rows"], kernels=True)
        elif event == "memory":
            self.memory = fields["memory"]
        elif event == "finished":
            self.status, self.message = fields["status"], fields["message"]
