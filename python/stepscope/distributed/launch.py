"""A distributed run from the worker's side: torchrun starts the ranks
(rank_main), each writes its events to a file of its own, and these are
read as they grow and sent on as the worker's events with a `rank` field:
each rank's `rank_started` (its node), `started` once (when every rank has
built its model), `gate` once (the ranks' verdicts together), each rank's
`step` and `rank_summary` as they come, rank 0's `progress`. The run's
status is decided here, once torchrun has exited: `finished` is the
worker's, as ever.

torchrun's `--standalone` rendezvous takes a free port, so runs can go at
once; across the nodes of a Slurm allocation srun starts a torchrun a node
(torchrun.py), and the events' folder is on the shared file system. When a
rank fails, torchrun stops the others (SIGTERM, then SIGKILL; srun those of
the other nodes); the rank named is the one that failed first on its own,
not one whose collective lost its peer. SIGTERM to the worker is passed to
torchrun (srun), which passes it to the ranks; they agree to stop after
the same step.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque

from .torchrun import shared_work_root, torchrun_command

POLL_S = 0.02
STDERR_LINES = 60
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rank_command(spec, request_path, events_dir):
    return torchrun_command(spec.ranks, spec.nodes,
                            ["stepscope.distributed.rank_main", request_path, events_dir])


def rank_environment(spec):
    env = dict(os.environ)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = PACKAGE_PARENT + (os.pathsep + path if path else "")
    # Each rank's intra-op threads; N ranks of all cores each only thrash.
    env["OMP_NUM_THREADS"] = str(spec.threads or 1)
    return env


def stderr_descriptor():
    """Where the ranks' prints go: stderr, as the worker's own (stdout is events)."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):
        return None


def die_with_parent():
    """torchrun gets SIGTERM when the worker dies (a client's SIGKILL), so
    it stops its ranks rather than leaving them behind."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class LineTail:
    """The complete JSON lines appended to a file since the last read."""

    def __init__(self, path):
        self.path = path
        self._offset = 0
        self._partial = b""

    def read(self):
        try:
            with open(self.path, "rb") as file:
                file.seek(self._offset)
                data = file.read()
        except FileNotFoundError:
            return []
        self._offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        events = []
        for line in lines:
            try:
                events.append(json.loads(line))
            except ValueError:  # a rank killed mid-write leaves half a line
                continue
        return events


class StderrTail:
    """Passes torchrun's (and the ranks') stderr on, keeping its last lines."""

    def __init__(self, stream):
        self.lines = deque(maxlen=STDERR_LINES)
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream):
        for raw in iter(stream.readline, b""):
            text = raw.decode("utf-8", errors="replace")
            self.lines.append(text.rstrip("\n"))
            sys.stderr.write(text)
            sys.stderr.flush()

    def join(self, timeout_s):
        self._thread.join(timeout_s)

    def exit_codes(self):
        """rank -> exit code from torchrun's failure report (`rank : 1
        (local_rank: 1)` then `exitcode : -9 (pid: …)`)."""
        found = {}
        text = "\n".join(self.lines)
        for rank, code in re.findall(r"rank\s*:\s*(\d+)[^\n]*\n\s*exitcode\s*:\s*(-?\d+)", text):
            found[int(rank)] = int(code)
        return found


def ended_how(code):
    if code is None:
        return "ended"
    if code < 0:
        try:
            return f"was killed by signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


class RankMerge:
    """The ranks' events, merged into the worker's stream as they arrive."""

    def __init__(self, spec, events):
        self.spec = spec
        self.events = events
        self.ranks = spec.ranks
        self.started, self.gates, self.ends = {}, {}, {}
        self.steps = [0] * self.ranks

    def take(self, rank, event):
        kind = event.pop("event", None)
        if kind == "started":
            self.started[rank] = event
            # Where it runs, known from its start: also for a rank that dies.
            self.events.emit("rank_started", rank=rank, host=event.get("host", ""))
            if len(self.started) == self.ranks:
                fields = dict(self.started[0])
                fields.pop("pid", None)
                fields.pop("host", None)
                self.events.emit("started", **fields, ranks=self.ranks,
                                 parallel=self.spec.parallel, backend=self.spec.backend)
        elif kind == "gate":
            self.gates[rank] = event
            if len(self.gates) == self.ranks:
                self.events.emit("gate", **self.combined_gate())
        elif kind == "progress":
            self.events.emit("progress", **event, rank=rank)
        elif kind == "step":
            self.steps[rank] += 1
            self.events.emit("step", rank=rank, **event)
        elif kind == "rank_summary":
            self.events.emit("rank_summary", rank=rank, **event)
        elif kind == "end":
            self.ends[rank] = event

    def worst_gate_rank(self):
        def error(rank):
            value = self.gates[rank]["max_rel_error"]
            return float("inf") if value is None else value
        return max(sorted(self.gates), key=error)

    def combined_gate(self):
        """Every rank's verdict is the same (they agree on the worst error);
        the worst parameter is the rank's with the largest error."""
        worst = self.gates[self.worst_gate_rank()]
        return {"ok": all(g["ok"] for g in self.gates.values()),
                "max_rel_error": worst["max_rel_error"],
                "worst_parameter": worst["worst_parameter"], "tolerance": worst["tolerance"],
                "strategy": worst["strategy"], "checked": worst["checked"]}

    def outcome(self, cancelled, exit_codes):
        """(status, message) of the run."""
        total = self.spec.total_steps
        if cancelled:
            return "cancelled", f"cancelled after {min(self.steps)} of {total} steps"
        failed = {r: e for r, e in self.ends.items()
                  if e["status"] not in ("ok", "cancelled", "incorrect")}
        silent = [r for r in range(self.ranks) if r not in self.ends]
        own = sorted((e["time_us"], r) for r, e in failed.items() if not e.get("peer"))
        if own:
            return self._named_failure(own[0][1], failed)
        if silent:
            rank = silent[0]
            return "failed", (f"rank {rank} {ended_how(exit_codes.get(rank))} without saying "
                              f"why, after {self.steps[rank]} of {total} steps (killed, "
                              "os._exit(), or out of memory)")
        if failed:
            first = min((e["time_us"], r) for r, e in failed.items())[1]
            return self._named_failure(first, failed)
        if any(e["status"] == "incorrect" for e in self.ends.values()):
            worst = self.worst_gate_rank() if self.gates else min(self.ends)
            return "incorrect", self.ends[worst]["message"]
        if any(e["status"] == "cancelled" for e in self.ends.values()):
            return "cancelled", f"cancelled after {min(self.steps)} of {total} steps"
        return "ok", ""

    def _named_failure(self, rank, failed):
        end = failed[rank]
        headline, _, rest = end["message"].partition("\n")
        alike = [r for r, e in failed.items()
                 if r != rank and e["message"].partition("\n")[0] == headline]
        who = f"rank {rank}"
        if alike:  # the same failure on several ranks: a strategy's, not a rank's
            every = sorted(alike + [rank])
            who = f"ranks {', '.join(map(str, every[:-1]))} and {every[-1]}"
        return end["status"], f"{who}: {headline}" + (f"\n{rest}" if rest else "")


def run_distributed(config, spec, events, cancelled):
    """Runs the request on spec.ranks ranks; returns (status, message)."""
    events.emit("progress", step=0, total_steps=spec.total_steps, warmup=spec.warmup > 0,
                phase="setup")
    work_dir = tempfile.mkdtemp(prefix=".stepscope-ranks-", dir=shared_work_root(spec.nodes))
    try:
        return launch_and_merge(config, spec, events, cancelled, work_dir)
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)


def launch_and_merge(config, spec, events, cancelled, work_dir):
    request_path = os.path.join(work_dir, "request.json")
    events_dir = os.path.join(work_dir, "events")
    os.mkdir(events_dir)
    with open(request_path, "w", encoding="utf-8") as file:
        json.dump({"command": "run", "config": config}, file)
    process = subprocess.Popen(
        rank_command(spec, request_path, events_dir), env=rank_environment(spec),
        stdin=subprocess.DEVNULL, stdout=stderr_descriptor(), stderr=subprocess.PIPE,
        start_new_session=True, preexec_fn=die_with_parent)
    stderr = StderrTail(process.stderr)
    tails = [LineTail(os.path.join(events_dir, f"rank{r}.jsonl")) for r in range(spec.ranks)]
    merge = RankMerge(spec, events)
    signalled = False

    def drain():
        for rank, tail in enumerate(tails):
            for event in tail.read():
                merge.take(rank, event)
    try:
        while process.poll() is None:
            if cancelled() and not signalled:
                process.send_signal(signal.SIGTERM)  # torchrun passes it to every rank
                signalled = True
            drain()
            time.sleep(POLL_S)
    except BaseException:
        if process.poll() is None:  # the worker itself is going: take torchrun along
            process.send_signal(signal.SIGTERM)
            process.wait()
        raise
    stderr.join(timeout_s=5)
    drain()
    return merge.outcome(signalled, stderr.exit_codes())
