"""The worker against docs/worker-protocol.md, on the CPU, with tiny models.

Each run is a real `python -m stepscope.worker` child; expected values come
from computations made here (the reference model's loss, parameter counts
from the dims, the structure of the model's matmuls), not from the worker.
"""
import json
import math
import shutil
import signal
import subprocess
import time

import pytest
import torch
from torch import nn

from conftest import (DATA_DIR, NANO, PYTHON_DIR, TRACED, run_config, run_model, run_worker,
                      start_worker)
from stepscope import model as reference

PHASES_OF_MODE = {
    "inference": ("forward",),
    "forward": ("forward",),
    "forward-backward": ("forward", "backward"),
    "train-step": ("forward", "backward", "optimizer"),
}
PHASE_FIELDS = {"forward": "forward_ms", "backward": "backward_ms", "optimizer": "optimizer_ms"}


def nano_reference(seed, attention="naive"):
    torch.manual_seed(seed)
    return reference.TransformerLM(NANO["vocab"], NANO["d_model"], NANO["d_ff"], NANO["layers"],
                                   NANO["heads"], NANO["max_context"], attention=attention)


def loss_of(model, tokens):
    logits = model(tokens[:, :-1])
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                       tokens[:, 1:].reshape(-1)).item()


@pytest.fixture(scope="module")
def saved_batch(tmp_path_factory):
    """A reference model's state dict, a training checkpoint of it, and a batch."""
    directory = tmp_path_factory.mktemp("weights")
    model = nano_reference(seed=7)
    generator = torch.Generator().manual_seed(11)
    tokens = torch.randint(0, NANO["vocab"], (2, 17), generator=generator)
    paths = {name: str(directory / f"{name}.pt")
             for name in ("state_dict", "checkpoint", "tokens")}
    torch.save(model.state_dict(), paths["state_dict"])
    compiled_names = {"_orig_mod." + k: v for k, v in model.state_dict().items()}
    torch.save({"model_state_dict": compiled_names, "iteration": 3}, paths["checkpoint"])
    torch.save(tokens, paths["tokens"])
    return model, tokens, paths


# --- the stream ------------------------------------------------------------

@pytest.fixture(scope="module")
def mode_runs():
    """One run per mode, 1 warm-up and 2 measured steps, made when first asked for."""
    runs = {}

    def run(mode):
        if mode not in runs:
            runs[mode] = run_model(mode=mode, warmup=1, steps=2)
        return runs[mode]
    return run


def test_events_come_in_protocol_order_and_end_with_one_finished(mode_runs):
    result = mode_runs("train-step")
    kinds = [event["event"] for event in result.events]
    assert result.returncode == 0
    assert kinds[0] == "progress" and result.events[0]["phase"] == "setup"
    assert kinds.index("started") < kinds.index("step")
    assert kinds.count("finished") == 1 and kinds[-1] == "finished"
    assert result.finished == {"event": "finished", "status": "ok", "message": ""}
    assert [(s["index"], s["warmup"]) for s in result.steps] == [(0, True), (1, False),
                                                                 (2, False)]
    phases = [(e["step"], e["phase"]) for e in result.of("progress")][1:]
    assert phases == [(i, p) for i in range(3) for p in ("forward", "backward", "optimizer")]
    started = result.one("started")
    assert started["torch_version"] == torch.__version__
    assert started["cpu_threads"] == 1
    assert started["device_name"]


@pytest.mark.parametrize("mode", list(PHASES_OF_MODE))
def test_each_mode_times_its_phases_and_only_those(mode_runs, mode):
    result = mode_runs(mode)
    assert result.finished["status"] == "ok", result.finished
    for step in result.steps:
        for phase, field in PHASE_FIELDS.items():
            if phase in PHASES_OF_MODE[mode]:
                assert step[field] > 0
            else:
                assert step[field] is None
        phase_sum = sum(step[PHASE_FIELDS[p]] for p in PHASES_OF_MODE[mode])
        assert step["total_ms"] == pytest.approx(phase_sum, rel=1e-6)
        assert math.isfinite(step["loss"])


def test_prints_from_a_users_model_reach_stderr_not_the_stream():
    result = run_model(py_model="user_lms:chatty_lm", py_path=str(DATA_DIR), warmup=0, steps=1)
    assert result.finished["status"] == "ok", result.finished
    assert all(line.startswith("{") for line in result.lines)  # each parsed as an event
    assert "chatty: building" in result.stderr
    assert "chatty: raw write to fd 1" in result.stderr


# --- the model ---------------------------------------------------------------

def test_step_zero_loss_is_the_reference_models_loss_on_the_saved_weights(saved_batch):
    model, tokens, paths = saved_batch
    expected = loss_of(model, tokens)
    for weights in (paths["state_dict"], paths["checkpoint"]):
        result = run_model(mode="inference", warmup=0, steps=1, weights=weights,
                           tokens=paths["tokens"])
        assert result.finished["status"] == "ok", result.finished
        assert result.steps[0]["loss"] == pytest.approx(expected, abs=1e-5), weights


def test_train_steps_follow_adamw_with_the_engines_settings(saved_batch):
    model, tokens, paths = saved_batch
    model = nano_reference(seed=0)
    model.load_state_dict(torch.load(paths["state_dict"]))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    expected = []
    for _ in range(2):
        optimizer.zero_grad()
        loss = reference.next_token_loss(model, tokens)
        expected.append(loss.item())
        loss.backward()
        optimizer.step()
    result = run_model(mode="train-step", warmup=0, steps=2, weights=paths["state_dict"],
                       tokens=paths["tokens"])
    assert [s["loss"] for s in result.steps] == pytest.approx(expected, abs=1e-5)


def reference_loss_on_the_workers_random_batch(seed):
    """The worker seeds, builds the model, then draws the batch: so does this."""
    model = nano_reference(seed)
    tokens = torch.randint(NANO["vocab"], (2, 17))
    with torch.no_grad():
        return loss_of(model, tokens)


def test_sdpa_and_naive_attention_give_the_same_model():
    tokens = torch.randint(0, NANO["vocab"], (2, 16))
    naive, sdpa = nano_reference(3, "naive"), nano_reference(3, "sdpa")
    with torch.no_grad():
        assert torch.allclose(naive(tokens), sdpa(tokens), atol=1e-5)
    result = run_model(mode="forward", warmup=0, steps=1, attention="sdpa", seed=3)
    assert result.steps[0]["loss"] == pytest.approx(
        reference_loss_on_the_workers_random_batch(3), abs=1e-5)


def test_a_users_model_from_a_file_runs_and_counts_its_parameters():
    result = run_model(py_model="user_lms:tied_gru_lm", py_path=str(DATA_DIR), mode="train-step",
                       warmup=0, steps=2)
    assert result.finished["status"] == "ok", result.finished
    v, d, layers = NANO["vocab"], NANO["d_model"], NANO["layers"]
    # The tied embedding and head: V·d. A GRU layer: 3 gates, each with d×d input
    # and d×d hidden weights and two biases of d.
    assert result.one("started")["parameters"] == v * d + layers * (3 * (2 * d * d) + 2 * 3 * d)
    first, second = (s["loss"] for s in result.steps)
    assert second < first  # it trains


@pytest.mark.parametrize("py_model, first_line", [
    ("broken_lm:build", "py_model: cannot import module 'broken_lm': ModuleNotFoundError: "
                        "No module named 'stepscope_no_such_module'"),
    ("user_lms:no_such_lm", "py_model: module 'user_lms' has no attribute 'no_such_lm'"),
    ("user_lms:not_callable", "py_model: 'user_lms:not_callable' is a int, not callable"),
    ("user_lms:wrong_vocab_lm", "py_model: output shape (2, 16, 5) but expected "
                                "(batch, seq, vocab) = (2, 16, 1000)"),
    ("user_lms:raises_lm", "py_model: user_lms:raises_lm(...) raised ValueError: "
                           "this model refuses to be built"),
    ("no_colon", "py_model: 'no_colon' is not MODULE:CALLABLE"),
])
def test_a_users_model_that_cannot_run_fails_saying_why(py_model, first_line):
    result = run_model(py_model=py_model, py_path=str(DATA_DIR), warmup=0, steps=1)
    message = result.finished["message"]
    assert result.finished["status"] == "failed"
    assert message.splitlines()[0] == first_line
    assert result.steps == []
    if py_model == "broken_lm:build":  # Python's own words follow: the traceback's tail
        assert message.splitlines()[1] == "Traceback (most recent call last):"
        assert "broken_lm.py" in message and len(message.splitlines()) <= 16


def test_a_users_model_with_the_wrong_signature_names_the_course_arguments():
    result = run_model(py_model="user_lms:no_kwargs_lm", py_path=str(DATA_DIR))
    message = result.finished["message"]
    assert result.finished["status"] == "failed"
    assert message.startswith("py_model: user_lms:no_kwargs_lm does not take the course's "
                              "keyword arguments (vocab_size, context_length, d_model, "
                              "num_layers, num_heads, d_ff, rope_theta)")


def test_out_of_memory_is_oom_and_keeps_the_memory_trace():
    result = run_model(py_model="user_lms:oom_lm", py_path=str(DATA_DIR), trace_memory=True)
    assert result.finished["status"] == "oom"
    assert result.finished["message"].startswith("CUDA out of memory. Tried to allocate 1.00 TiB")
    memory = result.one("memory")["memory"]
    assert 4 * 1024 * 1024 in memory["bytes"]  # the forward's last allocation


def test_files_that_do_not_fit_the_run_fail_naming_the_file(saved_batch):
    paths = saved_batch[2]
    wider = run_model(model={"d_model": 128}, weights=paths["state_dict"])
    assert wider.finished["status"] == "failed"
    assert wider.finished["message"].startswith(
        f"weights: '{paths['state_dict']}' does not fit the model")
    assert "size mismatch for token_embeddings.weight" in wider.finished["message"]
    longer = run_model(ctx=32, tokens=paths["tokens"])
    assert longer.finished["status"] == "failed"
    assert longer.finished["message"] == (
        "tokens: the file holds a (2, 17) batch; the run asks for batch 2 and ctx 32, "
        "a (2, 33) batch")


@pytest.mark.parametrize("changes, field", [
    ({"attention": "flash"}, "attention: 'flash' is not served by the PyTorch worker; "
                             "allowed: naive, sdpa"),
    ({"precision": "fp8"}, "precision: 'fp8' is not served by the PyTorch worker; "
                           "allowed: fp32, bf16, fp16"),
    ({"trace_kernels": True}, "trace_kernels: kernels are traced on CUDA only"),
])
def test_a_config_the_worker_cannot_serve_is_unavailable_naming_the_field(changes, field):
    result = run_model(**changes)
    assert result.finished["status"] == "unavailable"
    assert result.finished["message"].startswith(field)
    assert len(result.events) <= 2  # at most the setup progress before it


def test_cuda_without_a_device_is_unavailable():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = run_model(device="cuda")
    assert result.finished["status"] == "unavailable"
    assert result.finished["message"].startswith("device: 'cuda' was asked for")


# --- cancellation ------------------------------------------------------------

def test_sigterm_ends_the_run_as_cancelled_after_the_step_under_way():
    process = start_worker({"command": "run", "config": run_config(
        py_model="user_lms:slow_lm", py_path=str(DATA_DIR), mode="forward", warmup=0,
        steps=50)})
    for line in process.stdout:
        if json.loads(line)["event"] == "step":
            break
    process.send_signal(signal.SIGTERM)
    rest = [json.loads(line) for line in process.stdout]
    assert process.wait(timeout=60) == 0
    process.stdout.close()
    process.stderr.close()
    steps = 1 + sum(event["event"] == "step" for event in rest)
    assert rest[-1]["event"] == "finished"
    assert rest[-1]["status"] == "cancelled"
    assert rest[-1]["message"] == f"cancelled after {steps} of 50 steps"
    assert steps < 50


# --- traces ------------------------------------------------------------------

def phase_time(result, phase):
    return sum(s[PHASE_FIELDS[phase]] for s in result.steps if not s["warmup"])


def test_operators_follow_the_models_structure(traced_train_step):
    rows = traced_train_step.one("operators")["rows"]
    calls = {(row["phase"], row["name"]): row["calls"] for row in rows}
    measured = 2
    # Per forward: q, k, v, output, QKᵀ, ·V and three SwiGLU matmuls per layer, and the LM head.
    assert calls[("forward", "aten::matmul")] == measured * (9 * TRACED["layers"] + 1)
    assert calls[("backward", "MmBackward0")] > 0
    assert not any(name.startswith("autograd::") for _, name in calls)
    assert {row["phase"] for row in rows} == {"forward", "backward", "optimizer"}


def test_operator_time_is_most_of_each_phase_and_never_more(traced_train_step):
    rows = traced_train_step.one("operators")["rows"]
    for phase in ("forward", "backward", "optimizer"):
        operators = sum(row["total_ms"] for row in rows if row["phase"] == phase)
        measured = phase_time(traced_train_step, phase)
        assert 0.3 * measured < operators <= measured * 1.001, phase


def alive_by_category(memory):
    """Bytes alive per category after each event, paired by address here."""
    alive, size_at, worst = [0] * 7, {}, [0] * 7
    for address, size, category in zip(memory["address"], memory["bytes"],
                                       memory["category"]):
        if size > 0:
            size_at[address] = size
        elif address not in size_at:
            continue
        else:
            del size_at[address]
        alive[category] += size
        worst[category] = max(worst[category], alive[category])
    return worst


def test_memory_trace_has_the_run_files_columns_and_phases(traced_train_step):
    memory = traced_train_step.one("memory")["memory"]
    n = len(memory["time_us"])
    for column in ("address", "bytes", "category", "phase", "step", "path", "op", "allocated",
                   "reserved"):
        assert len(memory[column]) == n, column
    assert memory["device"] == "cpu:0"
    assert memory["time_us"] == sorted(memory["time_us"]) and memory["time_us"][0] == 0
    assert max(memory["path"] + memory["op"]) < len(memory["paths"])
    assert [p[:2] for p in memory["phases"]] == [[ph, s] for s in range(3) for ph in (1, 2, 3)]
    for phase, step, start, end in memory["phases"]:
        assert 0 < start < end
    assert memory["step"][0] == -1 and memory["phase"][0] == 0
    assert {1, 2, 3} <= set(memory["phase"])


def test_memory_categories_hold_what_the_model_implies(traced_train_step):
    memory = traced_train_step.one("memory")["memory"]
    parameters = traced_train_step.one("started")["parameters"]
    tensors = 3 + 9 * TRACED["layers"]  # embedding, head, final norm; 9 per layer
    worst = alive_by_category(memory)
    assert worst[0] == 4 * parameters  # fp32 parameters
    assert worst[1] == 4 * parameters  # their gradients
    assert worst[2] == 2 * 4 * parameters + 4 * tensors  # AdamW's two moments and step counts
    assert worst[3] > 0  # activations
    assert worst[4] > 0  # temporaries
    assert worst[5] == 2 * 17 * 8  # the int64 (batch, ctx + 1) batch


def test_memory_loads_in_the_cpp_reader(traced_train_step, tmp_path):
    cli = next((p for p in sorted((PYTHON_DIR.parent / "build").glob("*/app/stepscope-cli"))),
               None) or shutil.which("stepscope-cli")
    if not cli:
        pytest.skip("no stepscope-cli built")
    run_file = tmp_path / "run.json"
    subprocess.run([str(cli), "run", "--model", "nano", "--steps", "1", "--warmup", "0",
                    "--memory", "--out", str(run_file)], check=True, capture_output=True)
    run = json.loads(run_file.read_text())
    run["memory"] = traced_train_step.one("memory")["memory"]
    run_file.write_text(json.dumps(run))
    shown = subprocess.run([str(cli), "memory", str(run_file)], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert f"memory on cpu:0: {len(run['memory']['time_us'])} events" in shown.stdout


# --- torch.compile -----------------------------------------------------------

@pytest.mark.compile
def test_pytorch_compile_reports_the_compile_then_steps_with_the_reference_loss():
    compiled = run_model(engine="pytorch-compile", mode="forward", warmup=1, steps=1, seed=5)
    assert compiled.finished["status"] == "ok", compiled.finished
    kinds = [event["event"] for event in compiled.events]
    assert kinds.index("started") < kinds.index("compiled") < kinds.index("step")
    assert compiled.one("compiled")["compile_ms"] > 0
    assert "compile" in [e["phase"] for e in compiled.of("progress")]
    assert [s["index"] for s in compiled.steps] == [0, 1]
    assert compiled.steps[0]["loss"] == pytest.approx(
        reference_loss_on_the_workers_random_batch(5), abs=1e-4)


# --- the attention command -----------------------------------------------------

def attention_point(**changes):
    point = {"backend": "naive", "d": 16, "seq": 32, "batch": 2, "heads": 2,
             "precision": "fp32", "causal": True, "device": "cpu", "warmup": 1, "repeats": 3,
             "seed": 0}
    point.update(changes)
    return point


def test_attention_points_are_timed_one_event_each():
    points = [attention_point(), attention_point(causal=False, precision="bf16"),
              attention_point(backend="tiled")]
    result = run_worker({"command": "attention", "points": points})
    assert [e["event"] for e in result.events] == ["point"] * 3 + ["finished"]
    ok, ok_bf16, tiled = result.of("point")
    for point in (ok, ok_bf16):
        assert point["status"] == "ok" and point["forward_ms"] > 0 and point["backward_ms"] > 0
        assert point["peak_bytes"] is None  # CPU
    assert (ok_bf16["causal"], ok_bf16["precision"]) == (False, "bf16")
    assert tiled["status"] == "unavailable" and "allowed: compiled, naive" in tiled["message"]
    assert result.finished["status"] == "ok"


def test_naive_attention_is_softmax_of_the_masked_scores():
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 2, 8, 4) for _ in range(3))
    scores = q @ k.transpose(-2, -1) / 2.0
    scores = scores.masked_fill(torch.ones(8, 8, dtype=torch.bool).triu(1), float("-inf"))
    expected = torch.softmax(scores, dim=-1) @ v
    assert torch.allclose(reference.naive_attention(q, k, v), expected, atol=1e-6)


@pytest.mark.compile
def test_a_compiled_attention_point_compiles_in_warmup():
    start = time.perf_counter()
    result = run_worker({"command": "attention", "points": [
        attention_point(backend="compiled", warmup=0, repeats=2)]})
    point = result.one("point")
    assert point["status"] == "ok", point
    assert point["kernel"] == "inductor"
    # The compile (seconds) happened in the forced warm-up call, not in the medians.
    assert point["forward_ms"] < (time.perf_counter() - start) * 1e3 / 4
