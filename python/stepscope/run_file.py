"""The run file the recorder writes: the same format, version and keys as
the C++ writer's (core/results/run_file.cpp runResultToJson), so that
`stepscope-cli show` and the desktop app open it like any other run. A
distributed run's file holds what the ranks measured (their steps, spans and
memory, the gate); what matching their collectives says (each rank's
`communication`, the matched `collectives`, `unmatched_collectives`, the
`straggler`) is left to the readers, which compute it again on open anyway."""
import json
import os
import socket
import sys
import tempfile
import time

import torch

from . import __version__
from .model import parameter_count
from .run_summary import device_peak_flops, phase_stats, run_summary
from .worker import cpu_model_name, device_name

FORMAT = "stepscope-run"
VERSION = 1  # kRunFileVersion
SLURM_VARIABLES = {"job_id": "SLURM_JOB_ID", "array_job_id": "SLURM_ARRAY_JOB_ID",
                   "array_task_id": "SLURM_ARRAY_TASK_ID", "node": "SLURMD_NODENAME"}
# What a PyTorch-engine run has none of: FLOP groups and the step timeline
# come from the C++ engine's own tracer.
NO_TIMELINE = {"step": -1, "clock_origin_us": 0.0, "spans": []}


def utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def slurm_environment():
    """Where a Slurm task ran; None outside Slurm."""
    found = {key: os.environ.get(variable, "") for key, variable in SLURM_VARIABLES.items()}
    return found if any(found.values()) else None


def environment(config, started, started_at):
    """`started`: the worker's `started` event (empty when the model was never built)."""
    return {
        "stepscope_version": __version__,
        # This process's LibTorch is the one inside torch.
        "libtorch_version": torch.__version__.split("+")[0],
        "cuda_version": torch.version.cuda or "",
        "device_name": started.get("device_name") or device_name_or_empty(config["device"]),
        "cpu_model": cpu_model_name(),
        "cpu_threads": started.get("cpu_threads", torch.get_num_threads()),
        "hostname": socket.gethostname(),
        "started_at": started_at,
        "python": sys.executable,
        "python_torch_version": torch.__version__,
        "pid": os.getpid(),
        "isolated": False,
        "slurm": slurm_environment(),
    }


def device_name_or_empty(device):
    try:
        return device_name(device)
    except Exception:  # a run refused for want of CUDA names no device
        return ""


def parameters_of(config, started):
    if "parameters" in started:
        return started["parameters"]
    m = config["model"]
    # A user's model that was never built has no count; ours has one in closed form.
    return 0 if config["py_model"] else parameter_count(m["vocab"], m["d_model"], m["d_ff"],
                                                        m["layers"])


def run_document(config, events, started_at):
    """The run file's object for `config` run into `events` (a RunEvents)."""
    env = environment(config, events.started, started_at)
    peak = device_peak_flops(env["device_name"], config["precision"], config["tf32"])
    document = {
        "format": FORMAT,
        "version": VERSION,
        "status": events.status,
        "message": events.message,
        "config": config,
        "model": {"name": config["model"]["name"],
                  "parameters": parameters_of(config, events.started)},
        "environment": env,
        "steps": events.steps,
        "compile_ms": events.compile_ms,
        "operators": events.operators,
        "kernels": events.kernels,
        "flop_groups": [],
        "timeline": NO_TIMELINE,
        "memory": events.memory,
        "summary": run_summary(events.steps, config, peak),
    }
    ranks = events.rank_records(config.get("ranks", 1))
    if ranks is not None:
        document["ranks"] = ranks
        if events.gate is not None:
            document["gate"] = events.gate
        document["summary"]["comm_wait_ms"] = phase_stats(events.steps, "comm_wait_ms")
    return document


def run_json(document):
    """As the C++ writer lays it out: keys sorted, two-space indent."""
    return json.dumps(document, indent=2, sort_keys=True, allow_nan=False) + "\n"


def write_run_file(document, path):
    """Atomically: a temporary file beside `path`, renamed over it once whole."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".stepscope-", suffix=".tmp", dir=directory)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(handle, 0o666 & ~umask)  # as an ordinary file; mkstemp makes it private
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(run_json(document))
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
