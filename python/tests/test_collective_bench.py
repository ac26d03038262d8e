"""The ranks' side of `stepscope-cli collective` (docs/collective-benchmark.md),
started as the client starts it: torchrun on 2 gloo ranks running
`-m stepscope.distributed.collective_bench REQUEST.json`, JSON lines from
rank 0 on stdout. Each launch is made once; the request's checks, the sizes
and the result check are also tried in this process, without ranks."""
import json
import signal
import subprocess
import time

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402

from stepscope.distributed import collective_bench as bench  # noqa: E402

if not (dist.is_available() and dist.is_gloo_available()):
    pytest.skip("torch.distributed with gloo is needed", allow_module_level=True)

RANKS = 2
HUGE = 10**15  # bytes: far beyond any machine's memory guard


class Launch:
    """torchrun on RANKS ranks for one request, read to its end."""

    def __init__(self, tmp_path, request, timeout=120, stop_after=None):
        path = tmp_path / "request.json"
        path.write_text(json.dumps(request))
        process = subprocess.Popen(bench.launch_command(RANKS, str(path)),
                                   env=bench.launch_environment(), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        self.lines, self.stopped_at = [], None
        for line in process.stdout:
            self.lines.append(line)
            if stop_after and json.loads(line)["event"] == stop_after and not self.stopped_at:
                time.sleep(0.5)  # into the timed calls
                process.send_signal(signal.SIGTERM)  # as the client cancels: torchrun's
                self.stopped_at = time.monotonic()
        self.returncode = process.wait(timeout=timeout)
        self.ended_at = time.monotonic()
        self.stderr = process.stderr.read()
        self.events = [json.loads(line) for line in self.lines]

    def of(self, kind):
        return [event for event in self.events if event["event"] == kind]

    @property
    def rows(self):
        return self.of("row")


def leftover_ranks(root):
    """Ranks of this module's launches still running: their request is under
    `root` (pytest's folder for this run), which their command line names.
    Under `ctest -j2` another suite's collective benchmark may be running."""
    found = subprocess.run(["pgrep", "-f", f"stepscope.distributed.collective_bench {root}/"],
                           capture_output=True, text=True)
    return found.stdout.split()


@pytest.fixture(scope="module")
def launches(tmp_path_factory):
    made = {}

    def launch(name, request, **options):
        if name not in made:
            made[name] = Launch(tmp_path_factory.mktemp(name), request, **options)
            assert leftover_ranks(tmp_path_factory.getbasetemp()) == [], name
        return made[name]
    launch.root = tmp_path_factory.getbasetemp()
    return launch


def measured(launches):
    return launches("measured", {"ops": list(bench.OPS), "sizes_bytes": [4096, HUGE, 65536],
                                 "backend": "gloo", "dtype": "fp32", "device": "cpu",
                                 "warmup": 1, "repeats": 3})


def checked(launches):
    # bf16, an odd element count (4098 bytes: 2049 elements), no warm-up
    # beyond the checked first call.
    return launches("checked", {"ops": list(bench.OPS), "sizes_bytes": [4098, 65536],
                                "dtype": "bf16", "warmup": 0, "repeats": 2, "check": True})


# --- on 2 ranks ----------------------------------------------------------------------

def test_rank_0_says_it_started_then_a_row_and_progress_per_op_and_size(launches):
    run = measured(launches)
    assert run.returncode == 0, run.stderr[-3000:]
    started = run.events[0]
    assert started["event"] == "started"
    assert (started["ranks"], started["world"], started["total"]) == (RANKS, RANKS, 12)
    assert started["torch"] == torch.__version__ and started["cores"] >= 1
    assert [(r["op"], r["requested_bytes"]) for r in run.rows] == [
        (op, size) for op in bench.OPS for size in (4096, HUGE, 65536)]
    assert [p["done"] for p in run.of("progress")] == list(range(13))
    assert {p["total"] for p in run.of("progress")} == {12}
    assert run.events[-1] == {"event": "finished", "status": "ok", "message": "", "done": 12,
                              "total": 12}
    kinds = [e["event"] for e in run.events]
    assert kinds == ["started", "progress"] + ["row", "progress"] * 12 + ["finished"]


def test_every_size_that_fits_is_timed_on_every_rank(launches):
    run = measured(launches)
    timed = [row for row in run.rows if row["requested_bytes"] != HUGE]
    assert len(timed) == 8
    for row in timed:
        assert row["status"] == "ok" and row["message"] == "", row
        assert (row["ranks"], row["backend"], row["dtype"], row["device"]) == (
            RANKS, "gloo", "fp32", "cpu")
        assert len(row["times_us"]) == RANKS
        assert all(len(times) == 3 and all(t > 0 for t in times) for times in row["times_us"])
        assert row["size_bytes"] == row["requested_bytes"]
        assert row["oversubscribed"] is (RANKS > bench.usable_cores())


def test_split_sizes_divide_by_the_ranks_and_gloo_reduce_scatter_says_all_reduce(launches):
    run = measured(launches)
    for row in run.rows:
        if row["op"] in ("all_gather", "reduce_scatter"):
            assert row["size_bytes"] % (RANKS * 4) == 0
        assert row["emulated"] == ("all_reduce" if row["op"] == "reduce_scatter" else None)
    calls = {row["op"]: row["call"] for row in run.rows}
    assert calls["all_reduce"] == "all_reduce" and calls["broadcast"] == "broadcast"
    assert calls["all_gather"] in ("all_gather_into_tensor", "all_gather")
    assert calls["reduce_scatter"] in ("reduce_scatter_tensor", "all_reduce")


def test_a_size_beyond_the_memory_guard_is_an_oom_row_and_the_run_goes_on(launches):
    run = measured(launches)
    huge = [row for row in run.rows if row["requested_bytes"] == HUGE]
    assert [row["op"] for row in huge] == list(bench.OPS)
    for row in huge:
        assert row["status"] == "oom" and row["times_us"] == []
        assert row["message"].startswith("rank 0: needs ")
        assert "of host memory" in row["message"] and "not run" in row["message"]
    assert run.rows[-1]["status"] == "ok"  # the size after it, on the last op


def test_only_rank_0_prints_json_lines_and_stderr_is_quiet(launches):
    run = measured(launches)
    assert len(run.of("started")) == 1 and len(run.of("finished")) == 1
    assert "stepscope collective" not in run.stderr


def test_the_checked_first_call_gives_what_each_op_should(launches):
    run = checked(launches)
    assert run.returncode == 0, run.stderr[-3000:]
    assert len(run.rows) == 8
    for row in run.rows:
        assert row["status"] == "ok", row["message"]
        assert row["dtype"] == "bf16"
        assert [len(times) for times in row["times_us"]] == [2, 2]
    sizes = {(row["op"], row["requested_bytes"]): row["size_bytes"] for row in run.rows}
    assert sizes[("all_reduce", 4098)] == sizes[("broadcast", 4098)] == 4098
    assert sizes[("all_gather", 4098)] == sizes[("reduce_scatter", 4098)] == 4096


def test_a_bad_request_fails_before_the_ranks_meet_naming_the_field(launches):
    run = launches("bad", {"ops": ["all_reduce", "alltoall"], "sizes_bytes": [4096]})
    assert run.returncode != 0
    message = ("ops: 'alltoall' is not one of ours; allowed: all_reduce, all_gather, "
               "reduce_scatter, broadcast")
    assert f"stepscope collective: {message}" in run.stderr
    assert run.events == [{"event": "finished", "status": "failed", "message": message,
                           "done": 0, "total": 0}]


def test_sigterm_stops_every_rank_after_the_same_call_within_seconds(launches):
    run = launches("stopped", {"ops": ["all_reduce"], "sizes_bytes": [4096, 8192],
                               "warmup": 0, "repeats": 1_000_000}, stop_after="progress")
    assert run.returncode != 0
    assert run.ended_at - run.stopped_at < 10
    assert run.events[-1] == {"event": "finished", "status": "cancelled",
                              "message": "stopped by SIGTERM after 0 of 2 rows", "done": 0,
                              "total": 2}
    assert run.rows == []
    assert leftover_ranks(launches.root) == []


# --- in this process -------------------------------------------------------------------

def request(**changes):
    return {"ops": ["all_reduce"], "sizes_bytes": [4096], **changes}


def test_a_request_takes_defaults_for_what_it_leaves_out():
    parsed = bench.parse_request(request())
    assert (parsed.backend, parsed.dtype, parsed.device, parsed.warmup, parsed.repeats,
            parsed.check, parsed.timeout_s) == ("gloo", "fp32", "cpu", 5, 20, False, 60.0)
    assert parsed.element_size == 4 and parsed.total_rows == 1


@pytest.mark.parametrize("changes,message", [
    ({"ops": []}, "ops: must be a non-empty list; allowed: all_reduce, all_gather, "
     "reduce_scatter, broadcast"),
    ({"ops": ["all_reduce", "all_reduce"]}, "ops: each op once, got ['all_reduce', 'all_reduce']"),
    ({"sizes_bytes": [0]}, "sizes_bytes: each a whole number of bytes, at least 1, got 0"),
    ({"sizes_bytes": ["1MB"]}, "sizes_bytes: each a whole number of bytes, at least 1, "
     "got '1MB'"),
    ({"backend": "mpi"}, "backend: 'mpi' is not one of ours; allowed: gloo, nccl"),
    ({"backend": "nccl"}, "backend: nccl needs device cuda; allowed with device cpu: gloo"),
    ({"dtype": "fp64"}, "dtype: 'fp64' is not one of ours; allowed: fp32, bf16, fp16"),
    ({"device": "tpu"}, "device: 'tpu' is not one of ours; allowed: cpu, cuda"),
    ({"warmup": -1}, "warmup: must be a whole number, at least 0, got -1"),
    ({"repeats": 0}, "repeats: must be a whole number, at least 1, got 0"),
    ({"repeats": True}, "repeats: must be a whole number, at least 1, got True"),
    ({"check": 1}, "check: must be true or false, got 1"),
    ({"timeout_s": 0}, "timeout_s: must be a number of seconds above 0, got 0"),
    ({"size": 1}, "size: not a field of the request; allowed: ops, sizes_bytes, backend, "
     "dtype, device, warmup, repeats, check, timeout_s"),
])
def test_a_bad_request_is_refused_naming_the_field(changes, message):
    with pytest.raises(bench.RequestError) as refused:
        bench.parse_request(request(**changes))
    assert str(refused.value) == message


def test_a_request_without_its_sizes_is_refused():
    with pytest.raises(bench.RequestError, match="^sizes_bytes: missing$"):
        bench.parse_request({"ops": ["broadcast"]})


@pytest.mark.parametrize("op,size,world,element_size,used,per_rank_in,per_rank_out", [
    ("all_reduce", 4100, 4, 4, 4100, 1025, 0),
    ("broadcast", 3, 2, 4, 4, 1, 0),              # at least one element
    ("all_gather", 4100, 4, 4, 4096, 256, 1024),  # each rank gives a quarter
    ("reduce_scatter", 4100, 4, 4, 4096, 1024, 256),
    ("reduce_scatter", 6 * 2**20, 6, 2, 6 * 2**20, 3 * 2**20, 2**19),
    ("all_gather", 2, 3, 2, 6, 1, 3),             # at least one element per rank
])
def test_sizes_are_nccl_tests_sizes_in_whole_elements(op, size, world, element_size, used,
                                                      per_rank_in, per_rank_out):
    plan = bench.plan_size(op, size, world, element_size)
    assert plan.size_bytes == used
    assert (plan.input_elements, plan.output_elements) == (per_rank_in, per_rank_out)


def test_the_memory_guard_counts_every_buffer_of_every_rank_with_a_margin():
    gib = 1 << 30
    gather = bench.plan_size("all_gather", gib, 4, 4)
    # Our input (a quarter) and output, and gloo's flat buffer of the output's size.
    assert bench.bytes_per_rank(gather, "gloo") == gib // 4 + 2 * gib
    assert bench.bytes_per_rank(gather, "nccl") == gib // 4 + gib
    scatter = bench.plan_size("reduce_scatter", gib, 4, 4)
    assert bench.bytes_per_rank(scatter, "gloo", "all_reduce") == gib // 4 + 2 * gib
    assert bench.bytes_per_rank(bench.plan_size("all_reduce", gib, 4, 4), "gloo") == gib
    assert bench.memory_refusal(gib, 4, 5 * gib, "host") is None  # 4 of 4.0 usable
    refusal = bench.memory_refusal(gib, 4, 4 * gib, "host")
    assert refusal == ("needs 1.0 GiB per rank x 4 ranks = 4.0 GiB of host memory; 4.0 GiB is "
                       "available, 20% of it kept free; not run")
    assert bench.memory_refusal(gib, 4, None, "host") is None
    assert bench.host_available_bytes() > 0


@pytest.mark.parametrize("op", bench.OPS)
def test_a_wrong_result_is_named_and_a_right_one_passes(op):
    world, rank = 3, 1
    plan = bench.plan_size(op, 3 * 4 * 8, world, 4)
    buffers = bench.allocate(plan, torch.float32, "cpu", own_reduce_scatter=False)
    bench.fill(plan, buffers, rank)
    result = buffers.result
    # What the ranks would have made, written by hand.
    if op == "all_reduce":
        result.fill_(6)
    elif op == "broadcast":
        result.fill_(1)
    elif op == "all_gather":
        for k, chunk in enumerate(result.view(world, -1)):
            chunk.fill_(k + 1)
    else:
        result.fill_((rank + 1) * 6)
    assert bench.verify(plan, buffers, rank, "fp32") is None
    result[-1] += 1  # one element off
    wrong = bench.verify(plan, buffers, rank, "fp32")
    assert wrong.startswith(f"{op} gave a wrong result: on rank 1, ")
    assert wrong.endswith("(3 ranks, 96 bytes, fp32)")
