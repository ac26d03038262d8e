"""The user's own attention (py_attention) in the attention grid and in the
reference model, and the gate that checks every Python backend before it is
timed. The users' modules are written here, into the test's tmp dir.

Grid requests run in this process through the worker's own command (fast);
one grid and the model runs go through a real `python -m stepscope.worker`,
as the C++ client starts it.
"""
import textwrap

import pytest
import torch

from conftest import run_config, run_model, run_worker
from stepscope.attention import triton_mode
from stepscope.events import CollectedEvents
from stepscope.worker import serve_request

USER_MODULE = "stepscope_test_user_attention"
USER_SOURCE = textwrap.dedent('''
    """A student's attention: one correct, one off by a scale, one that raises."""
    import math

    import torch


    def causal_scores(q, k, is_causal):
        scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(q.shape[-1])
        if is_causal:
            future = torch.ones(scores.shape[-2:], dtype=torch.bool, device=q.device).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        return scores


    def forward(ctx, q, k, v, is_causal, lse_shift):
        scores = causal_scores(q, k, is_causal)
        lse = torch.logsumexp(scores, dim=-1)
        out = (torch.exp(scores - lse[..., None]) @ v.float()).to(q.dtype)
        ctx.save_for_backward(q, k, v, out, lse + lse_shift)
        ctx.is_causal, ctx.lse_shift = is_causal, lse_shift
        return out


    def backward(ctx, grad_out):
        q, k, v, out, lse = ctx.saved_tensors
        scale = 1 / math.sqrt(q.shape[-1])
        p = torch.exp(causal_scores(q, k, ctx.is_causal) - (lse - ctx.lse_shift)[..., None])
        grad_out = grad_out.float()
        grad_v = p.transpose(-2, -1) @ grad_out
        grad_p = grad_out @ v.float().transpose(-2, -1)
        grad_s = p * (grad_p - (grad_out * out.float()).sum(-1, keepdim=True))
        return ((grad_s @ k.float() * scale).to(q.dtype),
                (grad_s.transpose(-2, -1) @ q.float() * scale).to(k.dtype),
                grad_v.to(v.dtype), None)


    class CourseFlash(torch.autograd.Function):
        """Not tiled, but the course's convention: L saved, recompute in backward."""

        @staticmethod
        def forward(ctx, q, k, v, is_causal=False):
            return forward(ctx, q, k, v, is_causal, 0.0)

        backward = staticmethod(backward)


    class ShiftedLogsumexp(torch.autograd.Function):
        """Right output and gradients, but the L it saves is off by 0.5."""

        @staticmethod
        def forward(ctx, q, k, v, is_causal=False):
            return forward(ctx, q, k, v, is_causal, 0.5)

        backward = staticmethod(backward)


    def off_by_a_scale(q, k, v, is_causal):
        """Forgot 1/sqrt(d)."""
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=is_causal,
                                                                scale=1.0)


    def raises(q, k, v, is_causal):
        raise NotImplementedError("the backward pass is next week")


    class NotAFunction:
        pass
    ''')


TRITON_MODULE = "stepscope_test_user_triton"
TRITON_SOURCE = textwrap.dedent('''
    """A student's FlashAttention in Triton (here: StepScope's own kernels)."""
    from stepscope.attention.flash_triton import FlashAttentionTriton
    from stepscope.attention.triton_kernels import flash_forward_kernel  # noqa: F401


    class StudentTriton(FlashAttentionTriton):
        pass
    ''')


@pytest.fixture(autouse=True)
def interpreter_choice_stays_in_the_test(monkeypatch):
    """A grid on the CPU sets TRITON_INTERPRET in this process: undone after each test."""
    monkeypatch.delenv(triton_mode.INTERPRET_VARIABLE, raising=False)


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("user_attention")
    (directory / f"{USER_MODULE}.py").write_text(USER_SOURCE)
    (directory / f"{TRITON_MODULE}.py").write_text(TRITON_SOURCE)
    return str(directory)


def point(backend, **changes):
    fields = {"backend": backend, "d": 16, "seq": 24, "batch": 1, "heads": 2,
              "precision": "fp32", "causal": True, "device": "cpu", "warmup": 1, "repeats": 1,
              "seed": 0}
    fields.update(changes)
    return fields


def grid(points, **request):
    """The events of one attention request, served in this process."""
    events = CollectedEvents()
    serve_request({"command": "attention", "points": points, **request}, events, lambda: False)
    return events.events


def user_grid(user_dir, name, precisions=("fp32",)):
    return grid([point(name, precision=p) for p in precisions],
                py_attention=f"{USER_MODULE}:{name}", py_path=user_dir)


# --- the gate ------------------------------------------------------------------

def test_a_correct_users_attention_passes_the_gate_and_is_timed(user_dir):
    *points, finished = user_grid(user_dir, "CourseFlash", ("fp32", "bf16"))
    assert finished == {"event": "finished", "status": "ok", "message": ""}
    for event in points:
        assert event["status"] == "ok", event
        assert event["backend"] == "CourseFlash"
        assert event["kernel"] == f"{USER_MODULE}:CourseFlash"
        assert event["forward_ms"] > 0 and event["backward_ms"] > 0
        gate = event["gate"]
        assert gate["ok"] and gate["max_rel_error"] <= gate["tolerance"]
        assert gate["message"].startswith("correct: worst")
    assert [e["gate"]["tolerance"] for e in points] == [1e-4, 2e-2]


def test_an_attention_off_by_a_scale_is_incorrect_and_not_timed(user_dir):
    event, finished = user_grid(user_dir, "off_by_a_scale")
    assert event["status"] == "incorrect"
    assert event["forward_ms"] is None and event["backward_ms"] is None
    assert event["gate"]["ok"] is False and event["gate"]["max_rel_error"] > 1e-2
    assert event["message"].startswith("incorrect: relative error")
    assert "exceeds the fp32 tolerance 1e-04" in event["message"]
    assert "L not checked: the output comes from no autograd Function" in event["message"]
    assert finished["status"] == "ok"  # an incorrect backend is a result, not a failure


def test_an_attention_that_raises_is_a_failed_point_with_its_message(user_dir):
    event, finished = user_grid(user_dir, "raises")
    assert event["status"] == "failed"
    first = event["message"].splitlines()[0]
    assert first == ("raises raised NotImplementedError: the backward pass is next week "
                     "(d 16, seq 77, causal, fp32)")
    assert f"{USER_MODULE}.py" in event["message"]  # the traceback's tail names the user's file
    assert event["gate"] == {"ok": False, "max_rel_error": None, "tolerance": 1e-4,
                             "message": first}
    assert finished["status"] == "ok"


@pytest.mark.parametrize("target, first_line", [
    ("stepscope_no_such_attention:Flash",
     "py_attention: cannot import module 'stepscope_no_such_attention': ModuleNotFoundError: "
     "No module named 'stepscope_no_such_attention'"),
    (f"{USER_MODULE}:Missing", f"py_attention: module '{USER_MODULE}' has no attribute "
                               "'Missing'"),
    (f"{USER_MODULE}:NotAFunction", f"py_attention: '{USER_MODULE}:NotAFunction' is the class "
                                    "NotAFunction, not a torch.autograd.Function"),
    (f"{USER_MODULE}", f"py_attention: '{USER_MODULE}' is not MODULE:NAME"),
])
def test_an_attention_that_cannot_be_loaded_fails_the_request_naming_py_attention(
        user_dir, target, first_line):
    events = grid([point("Flash")], py_attention=target, py_path=user_dir)
    assert [e["event"] for e in events] == ["finished"]  # no point is measured
    assert events[0]["status"] == "failed"
    assert events[0]["message"].splitlines()[0].startswith(first_line)


def test_a_users_backend_cannot_take_one_of_our_names(user_dir):
    events = grid([point("naive")], py_attention=f"{USER_MODULE}:CourseFlash",
                  py_path=user_dir, py_attention_name="naive")
    assert events[-1]["message"] == ("py_attention: the backend name 'naive' is StepScope's "
                                     "own; give yours another (py_attention_name)")


def test_the_config_can_name_the_users_backend(user_dir):
    event, _ = grid([point("mine")], py_attention=f"{USER_MODULE}:CourseFlash",
                    py_path=user_dir, py_attention_name="mine")
    assert (event["backend"], event["status"]) == ("mine", "ok")


def test_the_gate_checks_the_saved_logsumexp(user_dir):
    """Right O and gradients, a wrong L: incorrect, and L is what the message names."""
    event, _ = user_grid(user_dir, "ShiftedLogsumexp")
    assert event["status"] == "incorrect"
    assert "(L at d 16, seq 77" in event["message"]


# --- the grid through the worker, as the C++ client sees it -------------------------

def test_the_grid_holds_a_users_triton_backend_beside_ours(user_dir):
    """On the CPU, Triton kernels (the user's and ours) are checked in Triton's
    interpreter and not timed; the others are timed."""
    result = run_worker({"command": "attention", "py_attention": f"{TRITON_MODULE}:StudentTriton",
                         "py_path": user_dir, "points": [
                             point("StudentTriton"), point("flash-pytorch"),
                             point("flash-triton"), point("sdpa")]})
    assert result.returncode == 0
    user, flash_pytorch, flash_triton, sdpa = result.of("point")
    for event in (flash_pytorch, sdpa):
        assert event["status"] == "ok" and event["forward_ms"] > 0, event
    assert flash_pytorch["gate"]["ok"] and sdpa["gate"] is None
    for event in (user, flash_triton):
        assert event["status"] == "unavailable", event
        assert event["message"] == ("Triton on CPU runs in its interpreter: correctness "
                                    "checked (gate ok), not timed")
        assert event["gate"]["ok"] and event["forward_ms"] is None
    assert flash_triton["kernel"] == "triton-interpreter"
    assert result.finished["status"] == "ok"


def test_a_users_triton_kernels_are_found_in_their_module(user_dir):
    from stepscope.attention.user_attention import load_user_attention

    assert load_user_attention(f"{TRITON_MODULE}:StudentTriton", user_dir).triton_kernels
    assert not load_user_attention(f"{USER_MODULE}:CourseFlash", user_dir).triton_kernels


# --- the model ---------------------------------------------------------------------

def run_here(**changes):
    """A run request served in this process: (step losses, finished event)."""
    events = CollectedEvents()
    serve_request({"command": "run", "config": run_config(threads=0, **changes)}, events,
                  lambda: False)
    return [e["loss"] for e in events.events if e["event"] == "step"], events.events[-1]


def test_the_model_with_the_users_attention_has_the_naive_models_loss(user_dir):
    naive_losses, _ = run_here(mode="train-step", warmup=0, steps=2, seed=3)
    user = run_model(mode="train-step", warmup=0, steps=2, seed=3,
                     py_attention=f"{USER_MODULE}:CourseFlash", py_path=user_dir)
    assert user.finished["status"] == "ok", user.finished
    # The second step's loss follows the first step's gradients through the user's backward.
    assert [s["loss"] for s in user.steps] == pytest.approx(naive_losses, abs=1e-4)


def test_a_model_run_whose_attention_cannot_be_loaded_fails_naming_py_attention(user_dir):
    losses, finished = run_here(warmup=0, steps=1, py_attention=f"{USER_MODULE}:Missing",
                                py_path=user_dir)
    assert finished["status"] == "failed"
    assert finished["message"] == (f"py_attention: module '{USER_MODULE}' has no attribute "
                                   "'Missing'")
    assert losses == []


def test_py_attention_and_py_model_cannot_be_given_together(user_dir):
    _, finished = run_here(py_attention=f"{USER_MODULE}:CourseFlash", py_model="m:build")
    assert finished["status"] == "unavailable"
    assert finished["message"].startswith("py_attention: the reference model calls it; a "
                                          "py_model brings its own attention")
