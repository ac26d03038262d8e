"""The recorder (`python -m stepscope`, installed as stepscope-record) on the
CPU with the nano model: its flags, the run file it writes, and how it ends.

Expected values come from here: the keys the C++ writer writes
(core/results/run_file.cpp), the reference model's parameters and its
FLOPs as torch's FlopCounterMode counts them, the steps' own numbers.
tests/tst_recorder.cpp reads the same files with the C++ reader.
"""
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from conftest import DATA_DIR, PYTHON_DIR, worker_env
from stepscope import model as reference
from stepscope.categories import kernel_category, operator_category
from stepscope import cuda_snapshot
from stepscope.record import main as recorder_main, record as record_in_process
from stepscope.record_flags import parse_config, snapshot_problems
from stepscope.run_events import RunEvents
from stepscope.run_file import write_run_file

RECORDER = [sys.executable, "-m", "stepscope"]
QUICK = ["--model", "nano", "--vocab", "1000", "--ctx", "16", "--batch", "2", "--warmup", "1",
         "--steps", "2", "--threads", "1"]

# The C++ writer's keys (runResultToJson, configJson), every one of them.
TOP_KEYS = {"format", "version", "status", "message", "config", "model", "environment", "steps",
            "compile_ms", "operators", "kernels", "flop_groups", "timeline", "memory", "summary"}
CONFIG_KEYS = {"model", "ctx", "batch", "mode", "precision", "tf32", "warmup", "steps", "device",
               "seed", "attention", "activation_checkpoint", "loss", "loss_chunk", "optimizer",
               "cuda_graph", "threads", "force", "trace_ops", "trace_kernels", "trace_memory", "engine",
               "compile_mode", "py_model", "py_path", "weights", "tokens"}
MODEL_KEYS = {"name", "d_model", "d_ff", "layers", "heads", "vocab", "max_context", "rope_theta"}
ENVIRONMENT_KEYS = {"stepscope_version", "libtorch_version", "cuda_version", "device_name",
                    "cpu_model", "cpu_threads", "hostname", "started_at", "python",
                    "python_torch_version", "pid", "isolated", "slurm"}
STEP_KEYS = {"index", "warmup", "total_ms", "forward_ms", "backward_ms", "optimizer_ms", "loss"}
ROW_KEYS = {"name", "category", "phase", "calls", "total_ms"}
SUMMARY_KEYS = {"total_ms", "forward_ms", "backward_ms", "optimizer_ms", "tokens_per_second",
                "flops_per_step", "achieved_flops_per_second", "device_peak_flops_per_second",
                "mfu"}
STATS_KEYS = {"count", "mean", "std", "median", "min", "max", "cv"}
# A distributed run's (rankJson, addDistributed): what the ranks measured.
RANK_KEYS = {"rank", "host", "steps", "phases", "collectives", "memory"}
PHASE_KEYS = {"step", "phase", "start_us", "end_us"}
COLLECTIVE_KEYS = {"op", "group", "seq", "bytes", "dtype", "phase", "thread", "step", "async",
                   "start_us", "end_us"}
RANK_MEMORY_KEYS = {"peak_bytes", "after_init_bytes", "before_optimizer_bytes",
                    "after_optimizer_bytes", "by_category"}
GATE_KEYS = {"ok", "max_rel_error", "worst_parameter", "tolerance"}
MEMORY_KEYS = {"device", "clock_origin_us", "paths", "time_us", "address", "bytes", "category",
               "phase", "step", "path", "op", "allocated", "reserved", "phases",
               "device_peak_allocated", "device_peak_reserved"}


def record(*flags, timeout=300):
    return subprocess.run(RECORDER + list(flags), capture_output=True, text=True,
                          env=worker_env(), timeout=timeout)


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """A traced train-step recording: (its file's object, the recorder's --json output)."""
    path = tmp_path_factory.mktemp("recorded") / "nano.json"
    done = record(*QUICK, "--ops", "--memory", "--out", str(path), "--json")
    assert done.returncode == 0, done.stderr
    with open(path, encoding="utf-8") as file:
        return json.load(file), json.loads(done.stdout)


# --- the file ----------------------------------------------------------------

def test_the_file_has_every_key_of_the_cpp_writer_and_its_format_version(traced):
    run, printed = traced
    assert run == printed  # --json prints what the file holds
    assert set(run) == TOP_KEYS
    assert (run["format"], run["version"], run["status"], run["message"]) == \
        ("stepscope-run", 1, "ok", "")
    assert set(run["config"]) == CONFIG_KEYS and set(run["config"]["model"]) == MODEL_KEYS
    assert set(run["environment"]) == ENVIRONMENT_KEYS
    assert all(set(step) == STEP_KEYS for step in run["steps"])
    assert run["operators"] and all(set(row) == ROW_KEYS for row in run["operators"])
    assert set(run["memory"]) == MEMORY_KEYS
    assert set(run["summary"]) == SUMMARY_KEYS
    assert all(set(run["summary"][key]) == STATS_KEYS
               for key in ("total_ms", "forward_ms", "backward_ms", "optimizer_ms"))
    assert run["timeline"] == {"step": -1, "clock_origin_us": 0.0, "spans": []}
    assert run["flop_groups"] == [] and run["kernels"] == [] and run["compile_ms"] is None


def test_the_config_is_the_flags(traced):
    config = traced[0]["config"]
    assert config["model"] == {"name": "nano", "d_model": 64, "d_ff": 256, "layers": 2,
                               "heads": 4, "vocab": 1000, "max_context": 2048,
                               "rope_theta": 10000.0}
    assert (config["ctx"], config["batch"], config["warmup"], config["steps"]) == (16, 2, 1, 2)
    assert (config["mode"], config["precision"], config["device"], config["engine"]) == \
        ("train-step", "fp32", "cpu", "pytorch")
    assert (config["trace_ops"], config["trace_memory"], config["trace_kernels"]) == \
        (True, True, False)
    assert (config["activation_checkpoint"], config["loss"]) == ("off", "full")


def test_steps_and_summary_agree_and_parameters_are_the_models(traced):
    run = traced[0]
    steps = run["steps"]
    assert [(s["index"], s["warmup"]) for s in steps] == [(0, True), (1, False), (2, False)]
    measured = [s["total_ms"] for s in steps if not s["warmup"]]
    total = run["summary"]["total_ms"]
    assert total["count"] == 2 and total["mean"] == pytest.approx(statistics.mean(measured))
    assert total["std"] == pytest.approx(statistics.stdev(measured))
    assert run["summary"]["tokens_per_second"] == pytest.approx(2 * 16 / (total["mean"] / 1e3))
    model = reference.TransformerLM(1000, 64, 256, 2, 4)
    assert run["model"]["parameters"] == sum(p.numel() for p in model.parameters())
    assert run["environment"]["python_torch_version"] == torch.__version__
    assert run["environment"]["cpu_threads"] == 1 and run["environment"]["slurm"] is None


def counted_flops(mode):
    """torch's own count of the reference model's matmul FLOPs for one step."""
    model = reference.TransformerLM(1000, 64, 256, 2, 4)
    tokens = torch.randint(1000, (2, 17))
    with FlopCounterMode(display=False) as counter:
        loss = reference.next_token_loss(model, tokens)
        if mode != "forward":
            loss.backward()
    return counter.get_total_flops()


@pytest.mark.parametrize("mode", ["forward", "forward-backward"])
def test_flops_per_step_are_what_torch_counts(mode):
    config, _ = parse_config(QUICK + ["--mode", mode, "--warmup", "0", "--steps", "1"])
    run = record_in_process(config, cancelled=lambda: False)  # quicker than a child
    assert run["status"] == "ok"
    assert run["summary"]["flops_per_step"] == counted_flops(mode)


def test_rows_carry_the_engines_categories(traced):
    for row in traced[0]["operators"]:
        assert row["category"] == operator_category(row["name"], row["phase"])
    assert {row["category"] for row in traced[0]["operators"]} >= {"matmul", "optimizer"}


def test_categories_follow_the_engines_rules():
    assert operator_category("aten::mm", "forward") == "matmul"
    assert operator_category("aten::mm", "optimizer") == "optimizer"
    assert operator_category("LogSoftmaxBackward0", "backward") == "reduction"
    assert operator_category("aten::_softmax", "forward") == "softmax"
    assert operator_category("aten::lerp", "forward") == "other"
    assert kernel_category("ampere_sgemm_128x64_nn", "", "forward") == "matmul"
    assert kernel_category("softmax_warp_forward", "reduction", "forward") == "reduction"
    assert kernel_category("memcpy HtoD", "", "optimizer") == "copy/cast"
    assert kernel_category("vectorized_elementwise_kernel", "", "backward") == "elementwise"


def test_memory_is_the_workers_trace(traced):
    memory = traced[0]["memory"]
    assert memory["device"] == "cpu:0"
    n = len(memory["time_us"])
    assert n > 0 and all(len(memory[key]) == n for key in
                         ("address", "bytes", "category", "phase", "step", "path", "op",
                          "allocated", "reserved"))
    assert 0 in memory["category"]  # the parameters, marked in setup


# --- distributed steps (--ranks --parallel) ------------------------------------

TWO_RANKS = ["--model", "nano", "--vocab", "1000", "--ctx", "32", "--batch", "4", "--warmup", "1",
             "--steps", "2", "--threads", "1", "--ranks", "2"]
STRATEGIES = str(DATA_DIR / "strategies")


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    """A 2-rank overlap recording: (its file's object, its path, the recorder's output)."""
    path = tmp_path_factory.mktemp("ranks") / "overlap.json"
    done = record(*TWO_RANKS, "--parallel", "overlap", "--out", str(path))
    assert done.returncode == 0, done.stderr
    with open(path, encoding="utf-8") as file:
        return json.load(file), path, done


def test_a_distributed_recording_keeps_what_each_rank_measured(two_ranks):
    run, _, done = two_ranks
    # The derived parts (collectives, straggler, communication) are the readers'.
    assert set(run) == TOP_KEYS | {"ranks", "gate"}
    assert (run["status"], run["config"]["ranks"], run["config"]["parallel"]) == \
        ("ok", 2, "overlap")
    assert set(run["gate"]) == GATE_KEYS and run["gate"]["ok"]
    assert [rank["rank"] for rank in run["ranks"]] == [0, 1]
    for rank in run["ranks"]:
        assert set(rank) == RANK_KEYS
        assert rank["host"] == socket.gethostname()
        assert [(s["index"], s["warmup"]) for s in rank["steps"]] == \
            [(0, True), (1, False), (2, False)]
        assert all(set(step) == STEP_KEYS | {"comm_wait_ms"} for step in rank["steps"])
        assert [(p["step"], p["phase"]) for p in rank["phases"]] == [
            (step, phase) for step in range(3)
            for phase in ("forward", "backward", "comm_wait", "optimizer")]
        assert all(set(phase) == PHASE_KEYS for phase in rank["phases"])
        assert rank["collectives"] and all(set(c) == COLLECTIVE_KEYS for c in rank["collectives"])
        assert {c["step"] for c in rank["collectives"]} == {0, 1, 2}
        assert set(rank["memory"]) == RANK_MEMORY_KEYS and rank["memory"]["peak_bytes"] > 0
    assert run["steps"] == run["ranks"][0]["steps"]
    measured = [s["comm_wait_ms"] for s in run["steps"] if not s["warmup"]]
    assert run["summary"]["comm_wait_ms"]["mean"] == pytest.approx(statistics.mean(measured))
    # Progress and the report: rank 0's steps, and the wait for communication.
    assert [line.split(":")[1] for line in done.stderr.splitlines()
            if line.startswith("stepscope-record: ") and " ms" in line] == \
        [" warm-up 0", " step 1", " step 2"]
    assert "comm wait" in done.stdout and "2 ranks, overlap" in done.stdout


def test_the_cpp_reader_computes_what_matching_the_ranks_says(two_ranks):
    cli = next(iter(sorted((PYTHON_DIR.parent / "build").glob("*/app/stepscope-cli"))),
               None) or shutil.which("stepscope-cli")
    if not cli:
        pytest.skip("no stepscope-cli built: the C++ reader is not here to open the file")
    shown = subprocess.run([str(cli), "show", str(two_ranks[1]), "--json"], capture_output=True,
                           text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    run = json.loads(shown.stdout)
    per_rank = len(two_ranks[0]["ranks"][0]["collectives"]) * 2 // 3  # the measured steps'
    assert len(run["collectives"]) == per_rank and run["unmatched_collectives"] == 0
    assert all(len(c["wait_us"]) == 2 for c in run["collectives"])
    assert run["straggler"]["rank"] in (0, 1)
    for rank in run["ranks"]:
        assert rank["communication"]["collectives"] == per_rank
        assert rank["communication"]["time_us"] > 0
    assert run["steps"] == two_ranks[0]["steps"] and run["gate"] == two_ranks[0]["gate"]


def test_a_strategy_the_gate_refuses_exits_2_and_writes_no_file(tmp_path):
    path = tmp_path / "summing.json"
    done = record(*TWO_RANKS, "--parallel", "naive", "--py-ddp", "students:SummingDDP",
                  "--py-path", STRATEGIES, "--out", str(path), "--json")
    assert done.returncode == 2, done.stderr
    assert "stepscope-record: error: --py-ddp: 'students:SummingDDP' fails the correctness " \
           "gate before the run" in done.stderr
    assert not path.exists() and done.stdout == ""


def test_a_rank_that_never_spoke_keeps_its_place():
    events = RunEvents()
    events.emit("gate", ok=True, max_rel_error=0.0, worst_parameter="w", tolerance=1e-5,
                strategy="naive", checked="parallel")
    events.emit("rank_summary", rank=0, steps=0, memory={"peak_bytes": 8, "by_category": None})
    events.emit("finished", status="failed", message="rank 1 exited with status 3")
    assert events.gate == {"ok": True, "max_rel_error": 0.0, "worst_parameter": "w",
                           "tolerance": 1e-5}
    first, second = events.rank_records(2)
    assert first["memory"] == {"peak_bytes": 8, "after_init_bytes": None,
                               "before_optimizer_bytes": None, "after_optimizer_bytes": None,
                               "by_category": {}}
    assert second == {"rank": 1, "host": "", "steps": [], "phases": [], "collectives": [],
                      "memory": dict.fromkeys(RANK_MEMORY_KEYS - {"by_category"}, None) |
                      {"by_category": {}}}
    assert RunEvents().rank_records(2) is None  # one process: no ranks


# --- how it ends ---------------------------------------------------------------

def test_a_cpu_machine_without_numpy_gets_no_warning_or_gpu_error(tmp_path):
    """Issue 33: a fresh venv (torch, no NumPy) on a CPU machine printed torch's
    NumPy warning and Kineto's "gpuGetDeviceCount failed" on every recording."""
    hide_numpy = ("import runpy, sys; sys.modules['numpy'] = None; "
                  "sys.argv[0] = 'stepscope'; runpy.run_module('stepscope', run_name='__main__')")
    env = worker_env()
    env.pop("KINETO_LOG_LEVEL", None)
    done = subprocess.run([sys.executable, "-c", hide_numpy, *QUICK, "--ops", "--memory",
                           "--out", str(tmp_path / "nano.json")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "NumPy" not in done.stderr and "gpuGetDeviceCount" not in done.stderr, done.stderr
    assert "stepscope-record: run file written" in done.stderr


def test_a_failed_run_is_written_and_exits_3(tmp_path):
    path = tmp_path / "failed.json"
    done = record(*QUICK, "--py-model", "user_lms:raises_lm", "--py-path", str(DATA_DIR),
                  "--out", str(path))
    assert done.returncode == 3
    with open(path, encoding="utf-8") as file:
        run = json.load(file)
    assert run["status"] == "failed" and run["message"].startswith("py_model:")
    assert run["steps"] == [] and run["model"]["parameters"] == 0
    assert "run failed: py_model:" in done.stderr


def test_json_keeps_a_models_prints_off_stdout(tmp_path):
    done = record(*QUICK, "--steps", "1", "--py-model", "user_lms:chatty_lm", "--py-path",
                  str(DATA_DIR), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "ok"
    assert "chatty: building" in done.stderr


@pytest.mark.parametrize("flags, says", [
    (["--mode", "sideways"], ["--mode", "inference", "forward-backward", "train-step"]),
    (["--attention", "flash"], ["--attention", "'naive'", "'sdpa'"]),
    (["--engine", "libtorch"], ["--engine", "pytorch-compile"]),
    (["--model", "huge"], ["--model", "nano", "2.7B"]),
    (["--d-model", "64"], ["--d-ff, --layers, --heads missing"]),
    (["--ctx", "4096"], ["--ctx", "allowed: 1..2048"]),
    (["--heads", "3", "--d-model", "64", "--d-ff", "256", "--layers", "2"],
     ["--heads", "divisor of d_model"]),
    (["--steps", "0"], ["--steps", "at least 1"]),
    (["--kernels"], ["--kernels", "--device cuda"]),
    (["--memory", "--snapshot", "s.pickle"], ["--snapshot", "--device cuda and --memory"]),
    (["--compile-mode", "max-autotune"], ["--compile-mode", "--engine pytorch-compile"]),
    (["--py-model", "my-model.py"], ["--py-model", "MODULE:CALLABLE"]),
    (["--batch", "two"], ["--batch", "invalid int value"]),
    (["--ranks", "2", "--parallel", "overlap", "--batch", "3"],
     ["--batch", "batch 3 does not divide by ranks 2"]),
    (["--ranks", "2"], ["--parallel", "2 need a strategy"]),
    (["--parallel", "overlap"], ["--parallel", "give --ranks 2 or more"]),
    (["--ranks", "2", "--parallel", "naive", "--ops"], ["--ops", "distributed run"]),
    (["--no-such-flag"], ["unrecognized arguments: --no-such-flag"]),
    (["--ste", "2"], ["unrecognized arguments: --ste"]),  # no abbreviations: the CLI has none
])
def test_a_bad_flag_exits_2_naming_it_and_writes_nothing(flags, says, tmp_path, capsys):
    path = tmp_path / "never.json"
    with pytest.raises(SystemExit) as exited:
        recorder_main(list(flags) + ["--out", str(path)])  # in this process: no torch import
    assert exited.value.code == 2
    said = capsys.readouterr()
    for text in says:
        assert text in said.err
    assert not path.exists() and said.out == ""


def test_config_from_a_run_file_reproduces_the_run(traced, tmp_path):
    source = tmp_path / "source.json"
    source.write_text(json.dumps(traced[0]))
    again = tmp_path / "again.json"
    done = record("--config", str(source), "--out", str(again))
    assert done.returncode == 0, done.stderr
    with open(again, encoding="utf-8") as file:
        assert json.load(file)["config"] == traced[0]["config"]



def test_config_runs_the_code_it_names_only_with_trust_code(tmp_path):
    """Issue 45: a received file naming py_model and py_path imported its
    sender's module without a word."""
    (tmp_path / "evilmod.py").write_text(
        "import pathlib\n"
        "pathlib.Path(__file__).with_name('MARKER').write_text('imported')\n"
        "def build(**kwargs):\n"
        "    raise SystemExit('evilmod ran')\n")
    marker = tmp_path / "MARKER"
    source = tmp_path / "sent.json"
    source.write_text(json.dumps({"engine": "pytorch", "py_model": "evilmod:build",
                                  "py_path": str(tmp_path), "steps": 1, "warmup": 0}))
    refused = record("--config", str(source))
    assert refused.returncode == 2, refused.stderr
    assert "py_model 'evilmod:build'" in refused.stderr and "--trust-code" in refused.stderr
    assert not marker.exists()
    trusted = record("--config", str(source), "--trust-code")
    assert marker.exists(), trusted.stderr


def test_config_takes_no_other_config_flag(tmp_path, capsys):
    source = tmp_path / "config.json"
    source.write_text("{}")
    with pytest.raises(SystemExit) as exited:
        recorder_main(["--config", str(source), "--ctx", "8"])
    assert exited.value.code == 2
    assert "--ctx: cannot be given with --config" in capsys.readouterr().err


def test_a_file_is_never_half_written(tmp_path):
    path = tmp_path / "run.json"
    path.write_text("the earlier file\n")
    with pytest.raises(ValueError):
        write_run_file({"format": "stepscope-run", "bad": float("nan")}, str(path))
    assert path.read_text() == "the earlier file\n"
    assert os.listdir(tmp_path) == ["run.json"]  # no temporary left behind


def test_ctrl_c_ends_the_run_after_its_step_and_writes_it_cancelled(tmp_path):
    path = tmp_path / "cancelled.json"
    process = subprocess.Popen(RECORDER + QUICK + ["--steps", "1000", "--out", str(path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=worker_env())
    for line in process.stderr:
        if "step 1:" in line:  # measured steps are under way
            process.send_signal(signal.SIGINT)
            break
    process.communicate(timeout=120)
    assert process.returncode == 3
    with open(path, encoding="utf-8") as file:
        run = json.load(file)
    assert run["status"] == "cancelled" and run["message"].startswith("cancelled after")
    assert 2 <= len(run["steps"]) < 1001


def test_an_out_folder_that_is_not_there_exits_2_before_running(tmp_path, capsys):
    assert recorder_main(QUICK + ["--out", str(tmp_path / "missing" / "run.json")]) == 2
    assert "--out: the directory" in capsys.readouterr().err


def test_weights_alone_give_the_models_shape(tmp_path):
    model = reference.TransformerLM(1000, 64, 256, 2, 4)
    torch.save(model.state_dict(), tmp_path / "nano.pt")
    config, _ = parse_config(["--weights", str(tmp_path / "nano.pt")])
    assert config["model"] == {"name": "nano", "d_model": 64, "d_ff": 256, "layers": 2,
                               "heads": 4, "vocab": 1000, "max_context": 2048,
                               "rope_theta": 10000.0}
    folder = tmp_path / "pretrained"
    folder.mkdir()
    torch.save(model.state_dict(), folder / "model.pt")
    (folder / "model_config.json").write_text(json.dumps(
        {"vocab_size": 1000, "context_length": 64, "d_model": 64, "num_layers": 2,
         "num_heads": 4, "d_ff": 256, "rope_theta": 10000.0}))
    config, _ = parse_config(["--weights", str(folder), "--ctx", "16"])
    assert (config["model"]["name"], config["model"]["max_context"]) == \
        ("custom-d64-ff256-l2-h4", 64)
    assert config["weights"] == str(folder / "model.pt")
    run = record_in_process(config, cancelled=lambda: False)
    assert run["status"] == "ok", run["message"]


# --- PyTorch's own snapshot beside the run file (--snapshot) --------------------

def test_the_snapshot_is_written_whole_after_the_run_even_a_failed_one(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(torch.cuda.memory, "_record_memory_history",
                        lambda enabled="all", **kw: calls.append(("record", enabled, kw)))

    def dump(path):
        calls.append(("dump",))
        with open(path, "wb") as file:
            file.write(b"the snapshot")
    monkeypatch.setattr(torch.cuda.memory, "_dump_snapshot", dump)
    path = tmp_path / "run.pickle"
    with pytest.raises(RuntimeError):
        with cuda_snapshot.recorded_snapshot(str(path)):
            calls.append(("run",))
            raise RuntimeError("out of memory")
    assert [call[0] for call in calls] == ["record", "run", "dump", "record"]
    assert calls[0][2] == {"max_entries": cuda_snapshot.MAX_ENTRIES, "stacks": "python"}
    assert calls[-1][1] is None  # recording stopped
    assert path.read_bytes() == b"the snapshot"
    assert os.listdir(tmp_path) == ["run.pickle"]  # no temporary left behind

    def failing_dump(path):
        with open(path, "wb") as file:
            file.write(b"half")
        raise OSError("disk full")
    monkeypatch.setattr(torch.cuda.memory, "_dump_snapshot", failing_dump)
    with pytest.raises(OSError):
        with cuda_snapshot.recorded_snapshot(str(path)):
            pass
    assert path.read_bytes() == b"the snapshot"  # the earlier file, not a half-written one
    assert os.listdir(tmp_path) == ["run.pickle"]
    # A failed run's own error is the one raised, the snapshot's said beside it.
    with pytest.raises(RuntimeError, match="out of memory"):
        with cuda_snapshot.recorded_snapshot(str(path)):
            raise RuntimeError("out of memory")
    assert path.read_bytes() == b"the snapshot"


def test_the_snapshot_and_the_run_file_are_not_one_file():
    config = {"device": "cuda", "trace_memory": True}
    found = snapshot_problems(config, "x.pickle", "./x.pickle")
    assert found and found[0][0] == "--snapshot" and "same file as --out" in found[0][1]
    assert snapshot_problems(config, "x.pickle", "x.json") == []


def snapshot_peak(snapshot, device):
    """The peak of allocated bytes the way memory_viz's Active Memory Timeline
    counts it: blocks alive before the trace began from its first instant."""
    trace = snapshot["device_traces"][device]
    allocated = set()
    alive = 0
    for event in trace:
        if event["action"] == "alloc":
            allocated.add(event["addr"])
        elif event["action"] in ("free_completed", "free") and event["addr"] not in allocated:
            alive += event["size"]
    for segment in snapshot["segments"]:
        for block in segment["blocks"]:
            if block["state"] == "active_allocated" and block["addr"] not in allocated:
                alive += block["size"]
    peak = current = alive
    for event in trace:
        if event["action"] == "alloc":
            current += event["size"]
        elif event["action"] in ("free_completed", "free"):
            current -= event["size"]
        peak = max(peak, current)
    return peak


@pytest.mark.skipif(not torch.cuda.is_available(), reason="PyTorch's memory snapshot records "
                    "the CUDA caching allocator: no CUDA device here")
def test_the_snapshot_and_the_run_file_see_the_same_peak(tmp_path):
    run, snapshot = tmp_path / "run.json", tmp_path / "run.pickle"
    done = record(*QUICK, "--device", "cuda", "--memory", "--out", str(run),
                  "--snapshot", str(snapshot))
    assert done.returncode == 0, done.stderr
    import pickle
    with open(snapshot, "rb") as file:
        taken = pickle.load(file)  # written by this test's own recording
    with open(run, encoding="utf-8") as file:
        memory = json.load(file)["memory"]
    device = int(memory["device"].split(":")[1])
    peak = snapshot_peak(taken, device)
    assert abs(peak - memory["device_peak_allocated"]) <= 0.01 * memory["device_peak_allocated"]
