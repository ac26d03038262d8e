"""How a worker command ends: the `finished` event's status and message."""
import traceback

import torch

TRACEBACK_LINES = 15


class Finish(Exception):
    """Ends the command with `status` and `message` (unavailable, failed, cancelled)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def unavailable(field, why, allowed=None):
    """The config asks for something this worker cannot serve."""
    message = f"{field}: {why}"
    if allowed:
        message += "; allowed: " + ", ".join(allowed)
    return Finish("unavailable", message)


def failed(headline, error=None):
    """A failure whose message is `headline`, then the tail of `error`'s traceback."""
    return Finish("failed", with_traceback_tail(headline, error))


def first_line(error):
    text = str(error).strip()
    text = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def traceback_tail(error, lines=TRACEBACK_LINES):
    """The traceback's last lines, without the import machinery's frozen frames."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if not frame.filename.startswith("<frozen")]
    text = "".join(traceback.format_list(frames) +
                   traceback.format_exception_only(type(error), error))
    return "\n".join(["Traceback (most recent call last):"] +
                     text.rstrip("\n").splitlines()[-(lines - 1):])


def with_traceback_tail(headline, error=None):
    if error is None:
        return headline
    return headline + "\n" + traceback_tail(error)


def is_out_of_memory(error):
    """CUDA's allocator raises OutOfMemoryError; the CPU's says it in a RuntimeError."""
    if isinstance(error, torch.OutOfMemoryError):
        return True
    return isinstance(error, RuntimeError) and "can't allocate memory" in str(error)


def outcome_of(error):
    """(status, message) for an exception that ended a command."""
    if isinstance(error, Finish):
        return error.status, error.message
    if is_out_of_memory(error):
        return "oom", str(error).strip().splitlines()[0] if str(error).strip() else "out of memory"
    return "failed", with_traceback_tail(first_line(error), error)
