"""Runs the worker as the C++ client does: `python -m stepscope.worker` in a
child process, one JSON request on stdin, JSON-line events on stdout."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

PYTHON_DIR = Path(__file__).resolve().parents[1]
DATA_DIR = Path(__file__).resolve().parent / "data"
if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))  # the tests import stepscope.model too

# Triton's kernels run in its interpreter where there is no GPU; Triton reads
# TRITON_INTERPRET when its language module is imported, and test modules
# import it at collection (torch.utils.flop_counter does), so it is set here.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

# Tiny and quick on two shared cores: one intra-op thread, a small vocab.
NANO = {"name": "nano", "d_model": 64, "d_ff": 256, "layers": 2, "heads": 4, "vocab": 1000,
        "max_context": 32, "rope_theta": 10000.0}


def pytest_configure(config):
    config.addinivalue_line("markers", "compile: runs torch.compile (tens of seconds on a CPU)")


def run_config(**changes):
    """A run request's config (the run file's shape) for the nano model, changed."""
    config = {"model": dict(NANO), "ctx": 16, "batch": 2, "mode": "train-step",
              "precision": "fp32", "tf32": False, "warmup": 1, "steps": 2, "device": "cpu",
              "seed": 0, "attention": "naive", "threads": 1, "force": False,
              "trace_ops": False, "trace_kernels": False, "trace_memory": False,
              "engine": "pytorch", "compile_mode": "default", "py_model": "", "py_path": "",
              "weights": "", "tokens": ""}
    model_changes = changes.pop("model", {})
    config["model"].update(model_changes)
    config.update(changes)
    return config


def worker_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PYTHON_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


WORKER = [sys.executable, "-m", "stepscope.worker"]


def start_worker(request, environment=None):
    """A running worker that has its request; read its stdout line by line.
    `environment` adds to (or overrides) the worker's variables."""
    process = subprocess.Popen(WORKER, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               env={**worker_env(), **(environment or {})})
    process.stdin.write(json.dumps(request) + "\n")
    process.stdin.close()
    return process


class WorkerResult:
    def __init__(self, lines, stderr, returncode):
        self.lines = lines
        self.events = [json.loads(line) for line in lines]  # every stdout line is an event
        self.stderr = stderr
        self.returncode = returncode

    def of(self, kind):
        return [event for event in self.events if event["event"] == kind]

    def one(self, kind):
        found = self.of(kind)
        assert len(found) == 1, f"{len(found)} '{kind}' events in {self.events}"
        return found[0]

    @property
    def finished(self):
        return self.events[-1]

    @property
    def steps(self):
        return self.of("step")


def run_worker(request, timeout=300):
    done = subprocess.run(WORKER, input=json.dumps(request) + "\n", capture_output=True,
                          text=True, env=worker_env(), timeout=timeout)
    return WorkerResult(done.stdout.splitlines(), done.stderr, done.returncode)


def run_model(timeout=300, **changes):
    return run_worker({"command": "run", "config": run_config(**changes)}, timeout)


# The traced run's model: wide enough that operators, not Python, fill a phase.
TRACED = dict(NANO, d_model=128, d_ff=512)


@pytest.fixture(scope="session")
def traced_train_step():
    """A train-step run traced for operators and memory, shared by their tests."""
    return run_model(model=TRACED, mode="train-step", warmup=1, steps=2, trace_ops=True,
                     trace_memory=True)
