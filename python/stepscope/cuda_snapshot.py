"""PyTorch's own memory snapshot of a run (stepscope-record --snapshot): the
CUDA caching allocator's history, recorded around the run and written beside
its run file, so that the two views of the same steps can be compared figure
by figure (stepscope-cli memory RUN --against SNAPSHOT)."""
import contextlib
import os
import sys
import tempfile

import torch

# Events the allocator keeps (the oldest are dropped past it): a few steps of
# the largest preset at the longest context fit.
MAX_ENTRIES = 1_000_000


@contextlib.contextmanager
def recorded_snapshot(path):
    """Records the allocator's history while the body runs, with Python
    stacks only (C++ stacks take minutes to symbolize at the dump), then
    writes it to `path` whole or not at all; also after a failed run, where
    a snapshot is wanted most."""
    if not path:
        yield
        return
    memory = torch.cuda.memory
    memory._record_memory_history(max_entries=MAX_ENTRIES, stacks="python")
    run_failed = False
    try:
        yield
    except BaseException:
        run_failed = True
        raise
    finally:
        try:
            dump_whole(path)
        except Exception as error:
            if not run_failed:
                raise
            # The run's own error is the one to see; this one is said beside it.
            print(f"stepscope-record: --snapshot: cannot write '{path}': {error}",
                  file=sys.stderr)
        finally:
            memory._record_memory_history(enabled=None)


def dump_whole(path):
    """_dump_snapshot into a temporary file beside `path`, renamed over it
    once written: never a half-written snapshot."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".stepscope-", suffix=".pickle.tmp",
                                         dir=directory)
    os.close(handle)
    try:
        torch.cuda.memory._dump_snapshot(temporary)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as an ordinary file; mkstemp makes it private
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
