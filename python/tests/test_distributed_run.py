"""A worker's run on 2 gloo ranks started by torchrun (docs/worker-protocol.md,
"Distributed runs"): per-rank steps with their collectives, the gate before
the run, and the ways a run ends (incorrect, a rank that raises, a rank that
dies, SIGTERM). Each scenario is one launch of a tiny model, made once."""
import atexit
import json
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import DATA_DIR, run_config, start_worker
from stepscope import run_config as worker_config
from stepscope.outcome import Finish

RANKS = 2
# This module's launches keep their ranks' work folders here, so that the
# ranks it looks for are its own: under `ctest -j2` another suite's may run.
WORK_ROOT = tempfile.mkdtemp(prefix="stepscope-test-distributed-run-")
atexit.register(shutil.rmtree, WORK_ROOT, True)
STRATEGIES = str(DATA_DIR / "strategies")
TINY = {"d_model": 32, "d_ff": 64, "layers": 1, "heads": 2, "vocab": 128, "max_context": 16}


def distributed_config(**changes):
    return run_config(**{"model": TINY, "ctx": 8, "batch": 4, "warmup": 1, "steps": 2,
                         "ranks": RANKS, "parallel": "naive", **changes})


class Launch:
    """A worker's events, each with the time it was read."""

    def __init__(self, config, stop_after_steps=None):
        process = start_worker({"command": "run", "config": config}, {"TMPDIR": WORK_ROOT})
        self.events, self.times = [], []
        for line in process.stdout:
            self.events.append(json.loads(line))
            self.times.append(time.monotonic())
            if stop_after_steps and len(self.of("step")) == stop_after_steps:
                process.send_signal(signal.SIGTERM)
                stop_after_steps = None
        self.returncode = process.wait(timeout=60)
        self.stderr = process.stderr.read()

    def of(self, kind, rank=None):
        return [e for e in self.events if e["event"] == kind and rank in (None, e.get("rank"))]

    @property
    def finished(self):
        assert [e["event"] for e in self.events].count("finished") == 1
        assert self.events[-1]["event"] == "finished" and self.returncode == 0, self.stderr[-3000:]
        return self.events[-1]


def leftover_processes():
    """Ranks of this module's launches still running (their work folder is
    under WORK_ROOT, which their command line names)."""
    found = subprocess.run(["pgrep", "-f", "stepscope.distributed.rank_main " + WORK_ROOT + "/"],
                           capture_output=True, text=True)
    return found.stdout.split()


@pytest.fixture(scope="module")
def launches():
    made = {}

    def launch(name, **changes):
        if name not in made:
            stop = changes.pop("stop_after_steps", None)
            made[name] = Launch(distributed_config(**changes), stop)
            assert leftover_processes() == [], name
        return made[name]
    return launch


def ok_run(launches, parallel):
    return launches(parallel, parallel=parallel)


# --- a run on 2 ranks ----------------------------------------------------------

@pytest.mark.parametrize("parallel", ["naive", "fsdp"])
def test_every_rank_reports_its_steps_after_a_passing_gate(launches, parallel):
    run = ok_run(launches, parallel)
    assert run.finished == {"event": "finished", "status": "ok", "message": ""}
    started = run.of("started")
    assert len(started) == 1 and started[0]["ranks"] == RANKS
    assert started[0]["parallel"] == parallel and started[0]["backend"] == "gloo"
    (gate,) = run.of("gate")
    assert gate["ok"] and gate["max_rel_error"] <= gate["tolerance"] == 1e-5
    kinds = [e["event"] for e in run.events]
    assert kinds.index("started") < kinds.index("gate") < kinds.index("step")
    for rank in range(RANKS):
        steps = run.of("step", rank)
        assert [s["index"] for s in steps] == [0, 1, 2]
        assert [s["warmup"] for s in steps] == [True, False, False]
        for step in steps:
            assert [p["phase"] for p in step["phases"]] == ["forward", "backward", "comm_wait",
                                                            "optimizer"]
            assert step["comm_wait_ms"] >= 0 and step["loss"] > 0
            assert step["start_us"] <= step["phases"][0]["start_us"]
            assert all(c["bytes"] > 0 and c["end_us"] >= c["start_us"]
                       for c in step["collectives"])


@pytest.mark.parametrize("parallel", ["naive", "fsdp"])
def test_the_ith_collective_of_a_group_is_the_same_on_every_rank(launches, parallel):
    run = ok_run(launches, parallel)
    for index in range(3):
        seen = [[(c["group"], c["seq"], c["op"], c["bytes"], c["dtype"], c["phase"])
                 for c in run.of("step", rank)[index]["collectives"]] for rank in range(RANKS)]
        assert seen[0] == seen[1] and seen[0]
        sequence = [seq for _, seq, *_ in seen[0]]
        assert sequence == list(range(sequence[0], sequence[0] + len(sequence)))


def test_naive_ddp_all_reduces_each_gradient_after_backward_exposed(launches):
    run = ok_run(launches, "naive")
    step = run.of("step", 0)[-1]
    parameters = run.of("started")[0]["parameters"]
    assert {c["op"] for c in step["collectives"]} == {"all_reduce"}
    assert {c["phase"] for c in step["collectives"]} == {"comm_wait"}
    assert sum(c["bytes"] for c in step["collectives"]) == parameters * 4  # fp32 gradients
    # Blocking all-reduces, each within the wait after backward.
    (wait,) = [p for p in step["phases"] if p["phase"] == "comm_wait"]
    for collective in step["collectives"]:
        assert not collective["async"]
        assert wait["start_us"] <= collective["start_us"] <= collective["end_us"] <= wait["end_us"]


def test_fsdp_gathers_in_forward_and_backward_and_holds_half_the_weights(launches):
    naive, fsdp = ok_run(launches, "naive"), ok_run(launches, "fsdp")
    gathered_in = {c["phase"] for c in fsdp.of("step", 0)[-1]["collectives"]
                   if c["op"] == "all_gather_into_tensor"}
    assert gathered_in == {"forward", "backward"}
    for rank in range(RANKS):
        whole = naive.of("rank_summary", rank)[0]["memory"]["by_category"]["parameters"]
        held = fsdp.of("rank_summary", rank)[0]["memory"]["by_category"]["parameters"]
        assert whole == naive.of("started")[0]["parameters"] * 4
        assert held < 0.6 * whole  # the norms stay whole


def test_each_rank_sums_up_its_measured_steps(launches):
    run = ok_run(launches, "naive")
    assert [e["host"] for e in run.of("rank_started")] == [socket.gethostname()] * RANKS
    for rank in range(RANKS):
        (summary,) = run.of("rank_summary", rank)
        assert summary["steps"] == len([s for s in run.of("step", rank) if not s["warmup"]]) == 2
        memory = summary["memory"]
        categories = memory["by_category"]
        # AdamW: two moments per parameter, after its first step.
        assert categories["optimizer_state"] >= 2 * categories["parameters"]
        assert memory["after_init_bytes"] == categories["parameters"]
        assert memory["after_optimizer_bytes"] == memory["peak_bytes"] == sum(
            categories[k] for k in ("parameters", "gradients", "optimizer_state"))


# --- torch's DDP, stopped ---------------------------------------------------

@pytest.fixture(scope="module")
def cancelled_torch_ddp(launches):
    return launches("torch-ddp", parallel="torch-ddp", steps=400, stop_after_steps=6)


def test_sigterm_ends_every_rank_after_the_same_step_keeping_them(cancelled_torch_ddp):
    run = cancelled_torch_ddp
    finished = run.finished
    counts = [len(run.of("step", rank)) for rank in range(RANKS)]
    assert finished["status"] == "cancelled" and counts[0] == counts[1] >= 3
    assert finished["message"] == f"cancelled after {counts[0]} of 401 steps"
    assert len(run.of("rank_summary")) == RANKS


def test_torch_ddp_all_reduces_come_from_backward_through_its_comm_hook(cancelled_torch_ddp):
    run = cancelled_torch_ddp
    (gate,) = run.of("gate")
    assert gate["ok"] and gate["strategy"] == "torch-ddp"
    for rank in range(RANKS):
        collectives = run.of("step", rank)[1]["collectives"]
        assert collectives and all(c["op"] == "all_reduce" and c["async"] and
                                   c["phase"] == "backward" for c in collectives)


# --- refused, failed, killed --------------------------------------------------

def test_a_wrong_user_strategy_is_refused_by_the_gate_and_not_timed(launches):
    run = launches("summing", py_ddp="students:SummingDDP", py_path=STRATEGIES)
    finished = run.finished
    assert finished["status"] == "incorrect"
    assert finished["message"].startswith("py_ddp: 'students:SummingDDP' fails the "
                                          "correctness gate before the run: parameter '")
    assert "beyond the fp32 tolerance 1e-05; not timed" in finished["message"]
    (gate,) = run.of("gate")
    assert not gate["ok"] and gate["max_rel_error"] > 0.1 and gate["checked"] == "py_ddp"
    assert f"'{gate['worst_parameter']}'" in finished["message"]
    assert run.of("step") == []


def test_a_user_strategy_that_raises_names_the_ranks_and_its_message(launches):
    run = launches("raising", py_ddp="students:RaisingDDP", py_path=STRATEGIES)
    finished = run.finished
    headline = finished["message"].splitlines()[0]
    assert finished["status"] == "failed"
    assert headline == ("ranks 0 and 1: py_ddp: 'students:RaisingDDP' raised RuntimeError: my "
                        "all-reduce is not written yet in the correctness gate before the run")
    assert run.of("step") == []


def test_a_rank_that_dies_ends_the_run_within_seconds_naming_it(launches):
    run = launches("exiting", py_ddp="misbehaving:ExitingDDP", py_path=STRATEGIES, steps=50)
    finished = run.finished
    assert finished["status"] == "failed"
    assert finished["message"].startswith("rank 1 exited with status 3 without saying why, "
                                          "after 1 of 51 steps")
    last_step = max(t for e, t in zip(run.events, run.times) if e["event"] == "step")
    assert run.times[-1] - last_step < 10
    assert leftover_processes() == []


# --- the config, checked before anything starts -----------------------------

@pytest.mark.parametrize("changes,status,message", [
    ({"batch": 6, "ranks": 4}, "failed",
     "batch: batch 6 does not divide by ranks 4 (the global batch is split evenly)"),
    ({"parallel": "none"}, "failed", "parallel: ranks 2 need a strategy; allowed: naive, flat, "
     "overlap, bucketed, sharded-optimizer, fsdp, torch-ddp, torch-fsdp"),
    ({"bucket_mb": 0}, "failed", "bucket_mb: must be above 0, got 0"),
    ({"parallel": "fsdp", "py_ddp": "m:C"}, "failed", "py_ddp: takes the place of ours with "
     "parallel naive or flat or overlap or bucketed or sharded-optimizer, not 'fsdp'"),
    ({"engine": "pytorch-compile"}, "unavailable", "engine: a distributed run (parallel) steps "
     "with the pytorch engine only for now; allowed: pytorch"),
    ({"trace_memory": True}, "unavailable", "trace_memory: not traced in a distributed run "
     "(parallel) for now; the ranks' communication and memory are measured without it"),
    ({"backend": "nccl"}, "unavailable", "backend: nccl needs device cuda; allowed: gloo"),
])
def test_a_distributed_config_that_cannot_run_is_refused_naming_the_field(changes, status,
                                                                          message):
    with pytest.raises(Finish) as finished:
        worker_config.parse_run_config(distributed_config(**changes))
    assert (finished.value.status, finished.value.message) == (status, message)


def test_the_distributed_keys_default_to_one_process():
    spec = worker_config.parse_run_config(run_config())
    assert (spec.ranks, spec.parallel, spec.backend, spec.bucket_mb) == (1, "none", "gloo", 25.0)
    assert not spec.distributed
    assert worker_config.parse_run_config(distributed_config(bucket_mb=0.5)).bucket_mb == 0.5
