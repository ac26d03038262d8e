"""One rank of a distributed run:
`python -m stepscope.distributed.rank_main REQUEST EVENTS_DIR`, started by
torchrun (launch.py), which sets RANK, WORLD_SIZE, LOCAL_RANK and the
rendezvous.

The rank builds the run's model as the single-process worker does (the same
seed on every rank: the same model and global batch; the wrapper still
broadcasts rank 0's), takes its share of the batch, checks the strategy with
the gate on a small model, then steps: forward, backward, the wait for
communication (finish_gradient_synchronization), optimizer. It writes
JSON-line events to EVENTS_DIR/rank<r>.jsonl, the last an `end`; the
worker merges them. Before each step the ranks agree whether to stop (an
all-reduce of a stop flag, MAX), so a SIGTERM to any rank (torchrun passes
the worker's on) ends every rank after the same step.
"""
import gc
import json
import os
import signal
import socket
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

from ..events import EventStream, finite_or_none
from ..model import TransformerLM
from ..outcome import Finish, failed, first_line, outcome_of, with_traceback_tail
from ..run_config import parse_run_config
from ..run_state import RunState, build_run_state
from ..steps import Step, make_timer
from ..worker import CancelFlag
from .collectives import CollectiveRecorder, now_us, raised_by_a_collective
from .gate import check_strategy, rank_share
from .rank_memory import RankMemory
from .strategies import UserStrategies, prepare

# A collective whose peer neither answers nor goes away ends after this,
# so no rank hangs; torchrun stops the others long before, when one fails.
PROCESS_GROUP_TIMEOUT = timedelta(seconds=60)
# The gate's small model: the reference LM's classes (FSDP finds its Linear
# and Embedding), two rows per rank, three steps.
GATE_MODEL = {"vocab": 48, "d_model": 16, "d_ff": 32, "layers": 1, "heads": 2}
GATE_CONTEXT, GATE_ROWS_PER_RANK, GATE_STEPS = 6, 2, 3
TIMED_OPTIMIZER = (torch.optim.AdamW, {"lr": 1e-3, "weight_decay": 0.01, "foreach": False})


def user_strategy_fields(spec):
    return [key for key in ("py_ddp", "py_fsdp", "py_sharded_optimizer") if getattr(spec, key)]


def strategy_label(spec):
    """How messages name what the gate checks: the user's flag, or ours."""
    users = user_strategy_fields(spec)
    if users:
        return ", ".join(users), " + ".join(f"'{getattr(spec, key)}'" for key in users)
    return "parallel", f"'{spec.parallel}'"



def this_node():
    """The node a rank runs on: Slurm's name for it inside an allocation
    (what squeue and sinfo say), else the host's name."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname()

class RankRun:
    def __init__(self, request, events, stop, recorder):
        self.request = request
        self.events = events
        self.stop = stop
        self.recorder = recorder
        self.rank = int(os.environ["RANK"])
        self.where = "setup"  # for a failure's message

    # --- setup ---------------------------------------------------------------

    def init(self):
        spec = self.spec = parse_run_config(self.request.get("config"))
        torch.set_num_threads(spec.threads or 1)
        if spec.device == "cuda":
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
            torch.backends.cuda.matmul.allow_tf32 = spec.tf32
            torch.backends.cudnn.allow_tf32 = spec.tf32
            torch.cuda.reset_peak_memory_stats()
        self.comm_device = torch.device("cuda" if spec.backend == "nccl" else "cpu")
        dist.init_process_group(spec.backend, timeout=PROCESS_GROUP_TIMEOUT)
        self.users = UserStrategies(ddp=spec.py_ddp, fsdp=spec.py_fsdp,
                                    sharded_optimizer=spec.py_sharded_optimizer,
                                    py_path=spec.py_path)

    def agree_max(self, value):
        """The largest of every rank's value: an all-reduce no step counts."""
        tensor = torch.tensor([value], dtype=torch.float64, device=self.comm_device)
        self.recorder.original("all_reduce")(tensor, op=dist.ReduceOp.MAX)
        return tensor.item()

    def progress(self, step, warmup, phase):
        if self.rank == 0:  # one rank's progress is the run's
            self.events.emit("progress", step=step, total_steps=self.spec.total_steps,
                             warmup=warmup, phase=phase)

    def run(self):
        """(status, message) of this rank."""
        self.init()
        spec = self.spec
        self.progress(0, spec.warmup > 0, "setup")
        state = build_run_state(spec)  # the same seed on every rank: one model, one batch
        state.optimizer = None
        from ..worker import started_fields  # the single-process worker's, as they are
        self.events.emit("started", **started_fields(spec, state), pid=os.getpid(),
                         host=this_node())
        self.where = "gate"
        self.progress(0, spec.warmup > 0, "gate")
        verdict = self.gate()
        if verdict:
            return "incorrect", verdict
        self.where = "setup"
        return self.steps(state)

    # --- the gate ------------------------------------------------------------

    def gate(self):
        """None when the strategy trains as one process would; else the message."""
        spec = self.spec
        device = spec.device
        generator = torch.Generator().manual_seed(spec.seed)
        rows = GATE_ROWS_PER_RANK * dist.get_world_size()
        batches = [torch.randint(0, GATE_MODEL["vocab"], (rows, GATE_CONTEXT + 1),
                                 generator=generator).to(device) for _ in range(GATE_STEPS)]

        def make_model():
            torch.manual_seed(spec.seed)
            with torch.device(device):
                return TransformerLM(**GATE_MODEL, max_context=GATE_CONTEXT)

        field, named = strategy_label(spec)
        try:
            result = check_strategy(spec.parallel, make_model, batches,
                                    bucket_mb=spec.bucket_mb, users=self.users)
        except Finish:
            raise
        except Exception as error:
            if raised_by_a_collective(error):
                raise  # a peer's failure, named by the worker
            raise failed(f"{field}: {named} raised {first_line(error)} in the correctness gate "
                         "before the run", error) from error
        error = result.max_rel_error if result.max_rel_error == result.max_rel_error \
            else float("inf")  # NaN: the worst
        worst_anywhere = self.agree_max(error)
        ok = worst_anywhere <= result.tolerance
        self.events.emit("gate", ok=ok, max_rel_error=finite_or_none(error),
                         worst_parameter=result.worst_parameter, tolerance=result.tolerance,
                         strategy=spec.parallel, checked=field)
        gc.collect()  # the gate's wrappers hold hooks and the group
        if ok:
            return None
        return (f"{field}: {named} fails the correctness gate before the run: parameter "
                f"'{result.worst_parameter}' is off by a relative error of {error:.1e} from "
                f"single-process training on the whole batch ({GATE_STEPS} steps, "
                f"{dist.get_world_size()} ranks), beyond the fp32 tolerance "
                f"{result.tolerance:.0e}; not timed")

    # --- the steps -------------------------------------------------------------

    def steps(self, state):
        spec = self.spec
        optimizer_cls, kwargs = TIMED_OPTIMIZER
        prepared = prepare(spec.parallel, state.module, optimizer_cls, kwargs,
                           spec.bucket_mb, None, self.users)
        if spec.parallel == "torch-ddp":
            # Its reducer calls the group from C++; torch's own Python hook
            # (the same average) passes through the recorder.
            from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
            prepared.model.register_comm_hook(None, allreduce_hook)
        self.prepared = prepared
        share = rank_share(state.tokens)
        step_state = RunState(module=state.module, model=prepared.model,
                              optimizer=prepared.optimizer, tokens=share,
                              inputs=share[:, :-1], targets=share[:, 1:])
        step = Step(step_state, spec)
        self.memory = RankMemory(spec.device)
        self.memory.after_init(prepared.model, prepared.optimizer)
        phases = list(spec.phases)
        if spec.has_backward:
            phases.insert(phases.index("backward") + 1, "comm_wait")
        timer = make_timer(spec.device)
        measured, status, message = [], "ok", ""
        for index in range(spec.total_steps):
            if self.agree_max(1.0 if self.stop.set else 0.0) > 0:
                status = "cancelled"
                message = f"cancelled after {index} of {spec.total_steps} steps"
                break
            self.where = f"step {index}"
            fields = self.step(step, phases, index, timer)
            self.events.emit("step", **fields)
            measured += [] if fields["warmup"] else [index]
        self.where = "the end"
        # Communication figures (exposed, overlap, waits) are the client's,
        # from these spans: core/results/rank_communication, one definition.
        self.events.emit("rank_summary", steps=len(measured), memory=self.memory.summary())
        return status, message

    def run_phase(self, step, phase):
        if phase == "comm_wait":
            self.prepared.finish_gradient_synchronization()
        else:
            step.run_phase(phase)

    def step(self, step, phases, index, timer):
        spec, memory, recorder = self.spec, self.memory, self.recorder
        warmup = index < spec.warmup
        spans = []
        recorder.recording = True
        timer.start()
        for number, phase in enumerate(phases):
            self.progress(index, warmup, phase)
            self.where = f"step {index}, {phase}"
            if number == 0:
                step.zero_grad()
            recorder.phase = phase
            if phase == "optimizer":
                memory.before_optimizer()
            elif phase == "forward":
                memory.before_forward()
            start = now_us()
            self.run_phase(step, phase)
            timer.mark()
            spans.append({"phase": phase, "start_us": start, "end_us": now_us()})
            if phase == "forward":
                memory.after_forward()
            elif phase == "optimizer":
                memory.after_optimizer()
        times = timer.finish()
        loss = step.take_loss()
        recorder.recording = False
        recorder.phase = "between steps"
        collectives = recorder.take()
        memory.after_step(self.prepared.model, self.prepared.optimizer, spec.has_optimizer)
        phase_ms = dict(zip(phases, times))
        return {"index": index, "warmup": warmup, "total_ms": times[-1],
                "forward_ms": phase_ms.get("forward"), "backward_ms": phase_ms.get("backward"),
                "comm_wait_ms": phase_ms.get("comm_wait"),
                "optimizer_ms": phase_ms.get("optimizer"), "loss": loss,
                "start_us": spans[0]["start_us"], "end_us": spans[-1]["end_us"],
                "phases": spans, "collectives": collectives}


def failure_message(error, where):
    """The first line names where it failed; a Finish's message is already
    one clear line and a traceback."""
    status, message = outcome_of(error)
    if isinstance(error, Finish):
        return status, message
    headline = f"{first_line(error)} (at {where})"
    return status, with_traceback_tail(headline, error)


def main(argv):
    request_path, events_dir = argv[1], argv[2]
    rank = int(os.environ["RANK"])
    # JSON lines to the rank's own file, flushed as they happen.
    events = EventStream(open(os.path.join(events_dir, f"rank{rank}.jsonl"), "a",
                              encoding="utf-8"))
    stop = CancelFlag().install((signal.SIGTERM, signal.SIGINT))
    events.emit("hello", pid=os.getpid(), time_us=now_us())
    # Before the user's strategies are imported: a `from torch.distributed
    # import all_reduce` of theirs takes the recorded one.
    recorder = CollectiveRecorder().install()
    run = None
    try:
        with open(request_path, encoding="utf-8") as file:
            request = json.load(file)
        run = RankRun(request, events, stop, recorder)
        status, message = run.run()
    except BaseException as error:  # SystemExit from a user's code too
        status, message = failure_message(error, run.where if run else "setup")
        # A rank that failed leaves at once: a peer may be gone, so no
        # barrier or destroy that could wait for it.
        events.emit("end", status=status, message=message, time_us=now_us(),
                    peer=raised_by_a_collective(error))
        leave(1)
    events.emit("end", status=status, message=message, time_us=now_us(), peer=False)
    # Wrappers sit in reference cycles (hooks, bound forwards) and hold the
    # process group; freed at interpreter exit, gloo's threads abort it.
    run.prepared = None
    gc.collect()
    try:
        dist.barrier()
        dist.destroy_process_group()
    except Exception as error:  # the run's end is written; leave anyway
        print(f"stepscope rank {rank}: leaving the process group: {first_line(error)}",
              file=sys.stderr)
    return 0


def leave(code):
    """Ends the process without the interpreter's teardown, which takes
    seconds with torch and gloo's threads loaded (and can hang on them): the
    events are written, the group is left."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    leave(main(sys.argv))
