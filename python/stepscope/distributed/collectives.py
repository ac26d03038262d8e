"""Every collective a rank issues, as a span: op, process group and its
sequence number, bytes, dtype, start and end on the machine's clock, the
phase and thread it was issued from.

Recorded where every Python caller goes through: the collective functions
of torch.distributed (ours, the user's strategies, FSDP2's all call them by
attribute). Why there and not elsewhere:
- a TorchDispatchMode sees the c10d ops of C++ callers too, but it puts
  Python in front of every aten op: a nano train step takes 2.5x as long;
- the profiler's gloo spans carry no sequence number and are read only
  when a profiling cycle ends, not per step;
- c10d's own hooks are NCCL's (ProcessGroup._register_on_completion_hook
  refuses gloo), and the flight recorder has no completion times on gloo.
torch's DistributedDataParallel calls its process group from C++; the rank
gives it torch's own Python comm hook (allreduce_hook: the same average),
whose all-reduce comes through here.

Times are time.time_ns(), the wall clock every rank of a machine shares.
A blocking call ends when it returns (gloo's wait returns once the data
has arrived); an async one when its future completes (a callback on the
backend's thread). With NCCL both are the host's view: the call enqueues
the kernel, and its end on the GPU is not seen here.
"""
import inspect
import threading
import time

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

# function -> (the argument whose bytes count, how); the bytes are the
# collective's whole buffer, as nccl-tests' size column counts them: an
# all-gather's output, a reduce-scatter's input.
OBSERVED = {
    "all_reduce": ("tensor", "tensor"),
    "broadcast": ("tensor", "tensor"),
    "reduce": ("tensor", "tensor"),
    "all_gather_into_tensor": ("output_tensor", "tensor"),
    "reduce_scatter_tensor": ("input", "tensor"),
    "all_gather": ("tensor_list", "list"),
    "reduce_scatter": ("input_list", "list"),
    "all_to_all_single": ("input", "tensor"),
    "all_reduce_coalesced": ("tensors", "list"),
    "_all_gather_base": ("output_tensor", "tensor"),
    "_reduce_scatter_base": ("input", "tensor"),
}


def tensor_bytes(value, how):
    tensors = [value] if how == "tensor" else list(value or [])
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


def dtype_name(value, how):
    tensor = value if how == "tensor" else next(iter(value or []), None)
    return str(tensor.dtype).replace("torch.", "") if isinstance(tensor, torch.Tensor) else ""


def thread_name():
    return "main" if threading.current_thread() is threading.main_thread() else \
        f"thread {threading.get_native_id()}"


def now_us():
    return time.time_ns() // 1000


class CollectiveRecorder:
    """Installs itself in front of torch.distributed's collectives; records
    while `recording` is set, tagged with `phase`; take() hands the spans of
    a step over once each has ended."""

    def __init__(self):
        self.recording = False
        self.phase = "setup"
        self._spans = []
        self._pending = 0
        self._ended = threading.Condition()
        self._own_seq = {}
        self._originals = {}

    def install(self):
        for name, (argument, how) in OBSERVED.items():
            original = getattr(c10d, name, None)
            if original is None or name in self._originals:
                continue
            self._originals[name] = original
            wrapped = self._wrap(name, original, argument, how)
            setattr(c10d, name, wrapped)
            if getattr(dist, name, None) is original:
                setattr(dist, name, wrapped)
        return self

    def uninstall(self):
        for name, original in self._originals.items():
            if getattr(dist, name, None) is getattr(c10d, name):
                setattr(dist, name, original)
            setattr(c10d, name, original)
        self._originals.clear()

    def original(self, name):
        """The function itself: for the rank's own agreements, never a step's."""
        return self._originals.get(name) or getattr(c10d, name)

    def _wrap(self, name, original, argument, how):
        signature = inspect.signature(original)
        recorder = self

        def observed(*args, **kwargs):
            if not recorder.recording:
                return original(*args, **kwargs)
            try:
                bound = signature.bind(*args, **kwargs).arguments
            except TypeError:  # torch says what is wrong with the call
                return original(*args, **kwargs)
            group = bound.get("group") or c10d._get_default_group()
            span = {"op": name, "group": str(getattr(group, "group_name", "")), "seq": None,
                    "bytes": tensor_bytes(bound.get(argument), how),
                    "dtype": dtype_name(bound.get(argument), how),
                    "async": bool(bound.get("async_op", False)), "phase": recorder.phase,
                    "thread": thread_name(), "start_us": now_us(), "end_us": None}
            try:
                result = original(*args, **kwargs)
            except Exception as error:
                error._stepscope_collective = name  # a peer that failed, most likely
                raise
            span["seq"] = recorder._seq_of(group)
            recorder._spans.append(span)
            if span["async"] and result is not None:
                recorder._end_when_done(span, result)
            else:
                span["end_us"] = now_us()
            return result

        observed.__wrapped__ = original
        observed.__name__ = original.__name__
        observed.__doc__ = original.__doc__
        return observed

    def _seq_of(self, group):
        """torch's count of the group's collectives (the i-th is i on every rank)."""
        try:
            return int(group._get_sequence_number_for_group())
        except Exception:  # a backend without one: ours, in the same order
            key = str(getattr(group, "group_name", id(group)))
            self._own_seq[key] = self._own_seq.get(key, 0) + 1
            return self._own_seq[key]

    def _end_when_done(self, span, work):
        with self._ended:
            self._pending += 1

        def ended(_future):
            span["end_us"] = now_us()
            with self._ended:
                self._pending -= 1
                self._ended.notify_all()
        try:
            work.get_future().add_done_callback(ended)
        except Exception:  # a Work without a future: its end is unknown
            ended(None)

    def take(self, timeout_s=1.0):
        """The spans since the last take(), once their ends are in (a
        completed work's callback may still be on its way)."""
        with self._ended:
            self._ended.wait_for(lambda: self._pending == 0, timeout=timeout_s)
        spans, self._spans = self._spans, []
        for span in spans:
            if span["end_us"] is None:
                span["end_us"] = span["start_us"]
        return spans


def raised_by_a_collective(error):
    """Whether the error came out of communication, as a rank's does when a
    peer has gone: the rank that failed first is elsewhere."""
    if getattr(error, "_stepscope_collective", None):
        return True
    if isinstance(error, getattr(dist, "DistError", ())):
        return True
    text = str(error)
    return any(sign in text for sign in ("Connection closed by peer", "Connection reset by peer",
                                         "gloo/transport", "NCCL", "Broken pipe"))
