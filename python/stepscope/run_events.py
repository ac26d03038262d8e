"""The worker's events of one run, kept for its run file: what the C++
client (core/engines/python_worker.cpp WorkerRun) keeps of them, here for a
run made in this process. A distributed run's events carry a `rank`: each
rank's steps, spans and memory are kept as its record, and the run's own
steps are rank 0's."""
from .categories import with_categories

# What the run file keeps of a `step` event (stepFrom), and of `gate` (gateOf).
STEP_KEYS = ("index", "warmup", "total_ms", "forward_ms", "backward_ms", "optimizer_ms", "loss")
GATE_KEYS = ("ok", "max_rel_error", "worst_parameter", "tolerance")
MEMORY_MARKS = ("peak_bytes", "after_init_bytes", "before_optimizer_bytes",
                "after_optimizer_bytes")


def step_record(fields):
    step = {key: fields.get(key) for key in STEP_KEYS}
    if fields.get("comm_wait_ms") is not None:  # a distributed step with backward
        step["comm_wait_ms"] = fields["comm_wait_ms"]
    return step


def memory_record(memory):
    """A rank's memory as the client keeps it (memoryOf): the marks, null
    where unknown, and `by_category` an object, empty where unknown."""
    return {**{key: memory.get(key) for key in MEMORY_MARKS},
            "by_category": memory.get("by_category") or {}}


def rank_record(rank):
    """A rank's record before it has said anything."""
    return {"rank": rank, "host": "", "steps": [], "phases": [], "collectives": [],
            "memory": memory_record({})}


class RunEvents:
    """An event sink for the worker's RunCommand; `on_step(step)`, if given,
    hears each of the run's steps as it comes."""

    def __init__(self, on_step=None):
        self.on_step = on_step
        self.started = {}  # the `started` event's fields: torch, device, threads, parameters
        self.steps = []
        self.compile_ms = None
        self.operators = []
        self.kernels = []
        self.memory = None
        self.ranks = None  # a distributed run's: rank -> its record, as the ranks speak
        self.gate = None
        self.status = None  # from `finished`
        self.message = ""

    def emit(self, event, **fields):
        if event == "started":
            self.started = fields
        elif event == "compiled":
            self.compile_ms = fields["compile_ms"]
        elif event == "step":
            self._step(fields)
        elif event == "gate":
            self._rank_records()
            self.gate = {key: fields.get(key) for key in GATE_KEYS}
        elif event == "rank_summary":
            self._rank(fields["rank"])["memory"] = memory_record(fields.get("memory") or {})
        elif event == "rank_started":
            self._rank(fields["rank"])["host"] = fields.get("host", "")
        elif event == "operators":
            self.operators = with_categories(fields["rows"], kernels=False)
        elif event == "kernels":
            self.kernels = with_categories(fields["rows"], kernels=True)
        elif event == "memory":
            self.memory = fields["memory"]
        elif event == "finished":
            self.status, self.message = fields["status"], fields["message"]

    def _step(self, fields):
        step = step_record(fields)
        if "rank" in fields:
            rank = self._rank(fields["rank"])
            rank["steps"].append(step)
            # The spans as the ranks sent them (the run file's keys), with their step.
            rank["phases"] += [{"step": step["index"], **phase} for phase in fields["phases"]]
            rank["collectives"] += [{**span, "step": step["index"]}
                                    for span in fields["collectives"]]
            if fields["rank"] != 0:
                return
        self.steps.append(step)
        if self.on_step:
            self.on_step(step)

    def _rank_records(self):
        if self.ranks is None:
            self.ranks = {}
        return self.ranks

    def _rank(self, rank):
        return self._rank_records().setdefault(rank, rank_record(rank))

    def rank_records(self, ranks):
        """Every rank's record in order, up to `ranks`: one that never spoke
        keeps its place (as the client's finish() does); None for a run
        that is not distributed."""
        if self.ranks is None:
            return None
        return [self.ranks.get(rank) or rank_record(rank) for rank in range(ranks)]
