"""The worker's event stream: one JSON object per line on the real stdout.

The worker takes stdout for itself before anything runs: the events go to a
duplicate of the original stdout descriptor, and descriptor 1 and sys.stdout
are pointed at stderr, so whatever torch, the compiler or a user's model
prints (from Python or from C++) ends up on stderr and never in the stream.
"""
import json
import math
import os
import sys


def finite_or_none(value):
    """A float JSON can carry: NaN and infinities (a diverged fp16 loss) become null."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def take_stdout():
    """The real stdout as a file of its own; descriptor 1 and sys.stdout then
    write to stderr, so nothing else printed can get into what it carries."""
    sys.stdout.flush()
    kept_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(kept_fd, "w", encoding="utf-8")


class EventStream:
    def __init__(self, file):
        self._file = file

    @classmethod
    def take_stdout(cls):
        """Moves everything else printed to stderr and keeps stdout for events."""
        return cls(take_stdout())

    def emit(self, event, **fields):
        line = json.dumps({"event": event, **fields}, allow_nan=False, separators=(",", ":"))
        self._file.write(line + "\n")
        self._file.flush()


class CollectedEvents:
    """An in-memory stream for calling the worker's functions from Python."""

    def __init__(self):
        self.events = []

    def emit(self, event, **fields):
        self.events.append({"event": event, **fields})
