"""The ranks' side of `stepscope-cli collective`: one collective at a time,
timed on every rank, the times sent to the client as JSON lines.

    python -m torch.distributed.run --standalone --nproc-per-node N \\
        -m stepscope.distributed.collective_bench REQUEST.json

(PYTHONPATH holding the package's parent, OMP_NUM_THREADS=1: what
launch_command() and launch_environment() make, and what
`python -m stepscope.distributed.collective_bench --ranks N [--nodes M]
REQUEST.json` runs; with M nodes of a Slurm allocation, srun starts a
torchrun on each, torchrun.py.) The request:

    {"ops": ["all_reduce", "all_gather", "reduce_scatter", "broadcast"],
     "sizes_bytes": [1048576, ...], "backend": "gloo" | "nccl",
     "dtype": "fp32" | "bf16" | "fp16", "device": "cpu" | "cuda",
     "warmup": 5, "repeats": 20, "check": false, "timeout_s": 60}

ops and sizes_bytes are needed; the rest have those defaults. A size is
nccl-tests' size: the tensor each rank holds for all_reduce and broadcast,
the gathered output for all_gather (each rank gives size/N), the input for
reduce_scatter (each rank gets size/N); element counts are rounded down to a
whole number of elements, divisible by N where the op splits, and the row
carries the size used. For each op, then each size, every rank: agrees that
the buffers fit (a memory guard, then the allocation itself, both agreed
by all ranks, so a size that does not fit is an `oom` row and no rank
hangs); makes one untimed first call (the first warm-up call; one even
with warmup 0), checked against the expected result when the request says
`check` (a mismatch is a `failed` row); the rest of the warm-up calls; then `repeats` timed calls, each `dist.barrier()`, start,
the collective (blocking), `torch.cuda.synchronize()` on CUDA, stop. The
times go to rank 0 after the loop, which prints the row. Only rank 0
prints to stdout; medians, spread, algbw and busbw are the client's.

On gloo, reduce_scatter is an all-reduce: torch (2.3 onwards,
ProcessGroupGloo::reduce_scatter_tensor_coalesced) clones the input,
all-reduces the clone and copies the rank's chunk out; where
reduce_scatter_tensor is refused we do the same ourselves. Either way the
row says `"emulated": "all_reduce"`. all_gather_into_tensor is gloo's
allgather (into a flat buffer of its own, then copied out); where it is
refused, all_gather into the output's chunks.

Stopping: SIGTERM or SIGINT on any rank (torchrun passes its own on) sets a
flag the ranks agree on (an all-reduce, MAX) before every call, outside the
timer, so every rank stops after the same call; rank 0 prints a `finished`
line with status cancelled and every rank exits 143. A failure exits 1 with
its message on stderr; a bad request exits 2, naming the field.
docs/collective-benchmark.md is the contract with the client.
"""
import json
import math
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist

from ..events import EventStream, take_stdout
from ..outcome import first_line, is_out_of_memory, with_traceback_tail
from .launch import PACKAGE_PARENT, die_with_parent
from .torchrun import AllocationError, torchrun_command

OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
BACKENDS = ("gloo", "nccl")
DEVICES = ("cpu", "cuda")
DEFAULTS = {"backend": "gloo", "dtype": "fp32", "device": "cpu", "warmup": 5, "repeats": 20,
            "check": False, "timeout_s": 60}
FIELDS = ("ops", "sizes_bytes") + tuple(DEFAULTS)
# Of the memory a guard sees, this much stays free: the allocator's and the
# backend's own buffers, and whatever else the machine runs meanwhile.
MEMORY_MARGIN = 0.2
# Checked results: the values are small integers, exact in fp32; a wrong
# chunk or a missing rank is off by a factor, far beyond these.
CHECK_RTOL = {"fp32": 1e-6, "bf16": 5e-2, "fp16": 5e-3}
EXIT_FAILED, EXIT_BAD_REQUEST, EXIT_CANCELLED = 1, 2, 128 + signal.SIGTERM
REQUEST_ERROR_GRACE_S = 10  # how long a rank other than 0 waits for torchrun to end it


class RequestError(ValueError):
    """A request that cannot run; the message names the field."""


# --- the request ----------------------------------------------------------------

@dataclass(frozen=True)
class Request:
    ops: tuple
    sizes_bytes: tuple
    backend: str
    dtype: str
    device: str
    warmup: int
    repeats: int
    check: bool
    timeout_s: float

    @property
    def element_size(self):
        return DTYPES[self.dtype].itemsize

    @property
    def total_rows(self):
        return len(self.ops) * len(self.sizes_bytes)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _choice(request, field, allowed):
    value = request[field]
    if value not in allowed:
        raise RequestError(f"{field}: {value!r} is not one of ours; allowed: {', '.join(allowed)}")
    return value


def _count(request, field, least):
    value = request[field]
    if not _is_int(value) or value < least:
        raise RequestError(f"{field}: must be a whole number, at least {least}, got {value!r}")
    return value


def parse_request(request):
    """The request checked, with its defaults; RequestError names the field."""
    if not isinstance(request, dict):
        raise RequestError(f"request: must be a JSON object, got {type(request).__name__}")
    unknown = sorted(set(request) - set(FIELDS))
    if unknown:
        raise RequestError(f"{unknown[0]}: not a field of the request; allowed: "
                           + ", ".join(FIELDS))
    for field in ("ops", "sizes_bytes"):
        if field not in request:
            raise RequestError(f"{field}: missing")
    request = {**DEFAULTS, **request}
    ops = request["ops"]
    if not isinstance(ops, list) or not ops:
        raise RequestError(f"ops: must be a non-empty list; allowed: {', '.join(OPS)}")
    for op in ops:
        if op not in OPS:
            raise RequestError(f"ops: {op!r} is not one of ours; allowed: {', '.join(OPS)}")
    if len(set(ops)) != len(ops):
        raise RequestError(f"ops: each op once, got {ops!r}")
    sizes = request["sizes_bytes"]
    if not isinstance(sizes, list) or not sizes:
        raise RequestError("sizes_bytes: must be a non-empty list of byte counts")
    for size in sizes:
        if not _is_int(size) or size < 1:
            raise RequestError(f"sizes_bytes: each a whole number of bytes, at least 1, "
                               f"got {size!r}")
    backend = _choice(request, "backend", BACKENDS)
    device = _choice(request, "device", DEVICES)
    if backend == "nccl" and device != "cuda":
        raise RequestError("backend: nccl needs device cuda; allowed with device cpu: gloo")
    if not isinstance(request["check"], bool):
        raise RequestError(f"check: must be true or false, got {request['check']!r}")
    timeout_s = request["timeout_s"]
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) \
            or not timeout_s > 0 or not math.isfinite(timeout_s):
        raise RequestError(f"timeout_s: must be a number of seconds above 0, got {timeout_s!r}")
    return Request(ops=tuple(ops), sizes_bytes=tuple(sizes), backend=backend,
                   dtype=_choice(request, "dtype", tuple(DTYPES)), device=device,
                   warmup=_count(request, "warmup", 0), repeats=_count(request, "repeats", 1),
                   check=request["check"], timeout_s=float(timeout_s))


def check_here(request, local_ranks):
    """What the request asks of this machine; RequestError names the field."""
    if not dist.is_available():
        raise RequestError("backend: this torch is built without torch.distributed")
    if request.backend == "gloo" and not dist.is_gloo_available():
        raise RequestError(f"backend: gloo is not in torch {torch.__version__}")
    if request.device == "cuda" and not torch.cuda.is_available():
        raise RequestError(f"device: cuda is not available here (torch {torch.__version__}, "
                           f"CUDA {torch.version.cuda}); allowed here: cpu")
    if request.backend == "nccl":
        if not dist.is_nccl_available():
            raise RequestError(f"backend: nccl is not in torch {torch.__version__}; "
                               "allowed here: gloo")
        gpus = torch.cuda.device_count()
        if local_ranks > gpus:
            raise RequestError(f"ranks: nccl needs a GPU per rank: {local_ranks} ranks, "
                               f"{gpus} GPUs here; allowed: gloo, whose ranks can share one")


# --- sizes and memory -------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """The elements of an op's tensors on each rank at one nccl-tests size."""
    op: str
    requested_bytes: int
    elements: int       # of the size: the whole tensor, the gathered output, the input
    world: int
    element_size: int

    @property
    def size_bytes(self):
        return self.elements * self.element_size

    @property
    def shard(self):
        return self.elements // self.world

    @property
    def input_elements(self):
        return self.shard if self.op == "all_gather" else self.elements

    @property
    def output_elements(self):
        """0 where the op works in place."""
        return {"all_gather": self.elements, "reduce_scatter": self.shard}.get(self.op, 0)


def plan_size(op, size_bytes, world, element_size):
    """nccl-tests' size in whole elements; a split one divides by the world."""
    elements = size_bytes // element_size
    if op in ("all_gather", "reduce_scatter"):
        elements = max(world, elements - elements % world)
    return Plan(op, size_bytes, max(1, elements), world, element_size)


def staging_bytes(plan, backend, emulated=None):
    """What the call allocates beyond our input and output: a copy of the
    size where gloo stages one (measured with torch 2.11: its all_gather
    gathers into a flat buffer of its own, its reduce_scatter all-reduces a
    clone of the input; all_reduce and broadcast work in place), and where
    we all-reduce a copy ourselves (an emulated reduce_scatter)."""
    if (backend == "gloo" and plan.op == "all_gather") or emulated == "all_reduce":
        return plan.size_bytes
    return 0


def bytes_per_rank(plan, backend, emulated=None):
    """Input, output and the call's staging, on one rank."""
    ours = (plan.input_elements + plan.output_elements) * plan.element_size
    return ours + staging_bytes(plan, backend, emulated)


def format_bytes(count):
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


def memory_refusal(need_per_rank, ranks_sharing, available, where):
    """None when the ranks' buffers fit in what `where` has available, less
    the margin; else the message of an `oom` row."""
    if available is None:
        return None  # nothing to go by: the allocation itself decides
    need = need_per_rank * ranks_sharing
    usable = int(available * (1 - MEMORY_MARGIN))
    if need <= usable:
        return None
    return (f"needs {format_bytes(need_per_rank)} per rank x {ranks_sharing} ranks = "
            f"{format_bytes(need)} of {where} memory; {format_bytes(available)} is available, "
            f"{int(MEMORY_MARGIN * 100)}% of it kept free; not run")


def _read(path):
    try:
        with open(path, encoding="utf-8") as file:
            return file.read().strip()
    except OSError:
        return None


def _cgroup_dirs(controller):
    """The directories of this process's cgroup for `controller` (v1 or v2),
    then the mounts' roots (inside a container's namespace the path is /)."""
    dirs = []
    for line in (_read("/proc/self/cgroup") or "").splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            dirs.append("/sys/fs/cgroup" + path)
        elif controller in controllers.split(","):
            dirs += [f"/sys/fs/cgroup/{controllers}{path}", f"/sys/fs/cgroup/{controller}{path}"]
    return dirs + [f"/sys/fs/cgroup/{controller}", "/sys/fs/cgroup"]


def _stat_field(text, names):
    for line in (text or "").splitlines():
        name, _, value = line.partition(" ")
        if name in names and value.isdigit():
            return int(value)
    return 0


def cgroup_memory_room():
    """Bytes this process's cgroup may still take (its reclaimable file
    cache counted as room), or None without a limit."""
    for directory in _cgroup_dirs("memory"):
        for limit_file, usage_file in (("memory.max", "memory.current"),
                                       ("memory.limit_in_bytes", "memory.usage_in_bytes")):
            limit = _read(os.path.join(directory, limit_file))
            usage = _read(os.path.join(directory, usage_file))
            if limit is None or usage is None or not usage.isdigit():
                continue
            if not limit.isdigit() or int(limit) >= 1 << 60:  # "max", or v1's no-limit
                return None
            cache = _stat_field(_read(os.path.join(directory, "memory.stat")),
                                ("inactive_file", "total_inactive_file"))
            return max(0, int(limit) - int(usage) + cache)
    return None


def host_available_bytes():
    """MemAvailable, or the cgroup's room where that is less; None where
    neither can be read."""
    found = None
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemAvailable:"):
            found = int(line.split()[1]) * 1024
    room = cgroup_memory_room()
    known = [value for value in (found, room) if value is not None]
    return min(known) if known else None


def usable_cores():
    """The cores this process may run on: its affinity, capped by a cgroup
    CPU quota (a container's --cpus)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    for directory in _cgroup_dirs("cpu"):
        quota = _read(os.path.join(directory, "cpu.max"))
        if quota is not None:
            limit, _, period = quota.partition(" ")
            if limit.isdigit() and period.isdigit() and int(period) > 0:
                cores = min(cores, max(1, math.ceil(int(limit) / int(period))))
            break
        limit = _read(os.path.join(directory, "cpu.cfs_quota_us"))
        period = _read(os.path.join(directory, "cpu.cfs_period_us"))
        if limit is not None and period is not None:
            if limit.isdigit() and period.isdigit() and int(period) > 0:  # -1: no quota
                cores = min(cores, max(1, math.ceil(int(limit) / int(period))))
            break
    return cores


# --- the buffers, the calls and their check ------------------------------------

@dataclass
class Buffers:
    input: torch.Tensor
    output: torch.Tensor = None  # None: in place
    scratch: torch.Tensor = None  # our own reduce_scatter's all-reduced copy

    @property
    def result(self):
        return self.input if self.output is None else self.output


def allocate(plan, dtype, device, own_reduce_scatter):
    def empty(elements):
        return torch.empty(elements, dtype=dtype, device=device)
    buffers = Buffers(empty(plan.input_elements))
    if plan.output_elements:
        buffers.output = empty(plan.output_elements)
    if own_reduce_scatter:
        buffers.scratch = empty(plan.elements)
    return buffers


def fill(plan, buffers, rank):
    """Values whose result is known (see verify), written to every byte so
    the memory is really taken before anything is timed. A rank's value is
    rank + 1; reduce_scatter's chunk k holds (rank + 1) * (k + 1), so each
    rank's shard sums to something of its own."""
    if plan.op == "reduce_scatter":
        for k, chunk in enumerate(buffers.input.view(plan.world, plan.shard)):
            chunk.fill_((rank + 1) * (k + 1))
    else:
        buffers.input.fill_(rank + 1)
    for extra in (buffers.output, buffers.scratch):
        if extra is not None:
            extra.zero_()


def for_timing(plan, buffers):
    """An all-reduce in place grows its tensor N-fold each call (to inf in
    fp16); zeros stay zeros. The other ops leave their inputs as they are."""
    if plan.op == "all_reduce":
        buffers.input.zero_()


def expected_chunks(plan, rank):
    """(chunk of the result, the value every element of it should hold)."""
    world = plan.world
    triangle = world * (world + 1) // 2
    if plan.op == "all_reduce":
        return [(None, triangle)]
    if plan.op == "broadcast":
        return [(None, 1)]  # rank 0's
    if plan.op == "all_gather":
        return [(k, k + 1) for k in range(world)]
    return [(None, (rank + 1) * triangle)]  # reduce_scatter: the rank's own shard


def verify(plan, buffers, rank, dtype_name):
    """None when the first call's result is what it should be; else what is wrong."""
    result = buffers.result
    chunks = result.view(plan.world, -1) if plan.op == "all_gather" else None
    for index, value in expected_chunks(plan, rank):
        part = result if index is None else chunks[index]
        low, high = part.min().item(), part.max().item()
        tolerance = CHECK_RTOL[dtype_name] * abs(value)
        if abs(low - value) > tolerance or abs(high - value) > tolerance:
            where = "its result" if index is None else f"chunk {index} of its result"
            return (f"{plan.op} gave a wrong result: on rank {rank}, {where} holds "
                    f"{low:g}..{high:g}, expected {value:g} ({plan.world} ranks, "
                    f"{plan.size_bytes} bytes, {dtype_name})")
    return None


# --- one rank -----------------------------------------------------------------------

class Cancelled(Exception):
    pass


class StopFlag:
    """Set by SIGTERM or SIGINT; the ranks agree on it before each call."""

    def __init__(self):
        self.set = False
        self.signal = None

    def install(self):
        for number in (signal.SIGTERM, signal.SIGINT):
            signal.signal(number, self._on_signal)
        return self

    def _on_signal(self, signum, frame):
        self.set = True
        self.signal = signal.Signals(signum).name

    def wait(self, seconds):
        """True once set, False after `seconds` without a signal."""
        deadline = time.monotonic() + seconds
        while not self.set and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.set


class NoEvents:
    def emit(self, event, **fields):
        pass


class RankBench:
    def __init__(self, request, events, stop):
        self.request = request
        self.events = events
        self.stop = stop
        self.rank = int(os.environ["RANK"])
        self.world = int(os.environ["WORLD_SIZE"])
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.local_ranks = int(os.environ.get("LOCAL_WORLD_SIZE", self.world))
        self.dtype = DTYPES[request.dtype]
        self.done = 0
        self.where = "setup"

    # --- setup -------------------------------------------------------------------

    def init(self):
        request = self.request
        if request.device == "cuda":
            gpus = torch.cuda.device_count()
            self.device = torch.device("cuda", self.local_rank % gpus)
            torch.cuda.set_device(self.device)
            # Ranks that share this GPU (gloo's may): local ranks r with r % gpus == ours.
            self.ranks_per_memory = len(range(self.local_rank % gpus, self.local_ranks, gpus))
        else:
            self.device = torch.device("cpu")
            self.ranks_per_memory = self.local_ranks
        self.flag_device = self.device if request.backend == "nccl" else torch.device("cpu")
        options = {"device_id": self.device} if request.backend == "nccl" else {}
        dist.init_process_group(request.backend, timeout=timedelta(seconds=request.timeout_s),
                                **options)
        self.cores = usable_cores()
        self.oversubscribed = (request.backend == "gloo" and request.device == "cpu"
                               and self.local_ranks > self.cores)
        self.events.emit("started", ranks=self.world, world=self.world,
                         local_ranks=self.local_ranks, cores=os.cpu_count(),
                         usable_cores=self.cores, torch=torch.__version__,
                         backend=request.backend, dtype=request.dtype, device=request.device,
                         oversubscribed=self.oversubscribed, total=request.total_rows)
        self.where = "finding which calls the backend takes"
        self.calls = self.supported_calls()

    def supported_calls(self):
        """op -> (the torch.distributed call, what it is emulated with or None)."""
        calls = {"all_reduce": ("all_reduce", None), "broadcast": ("broadcast", None),
                 "all_gather": ("all_gather_into_tensor", None),
                 "reduce_scatter": ("reduce_scatter_tensor", None)}
        if "all_gather" in self.request.ops:
            def gather():
                dist.all_gather_into_tensor(self.tensor(self.world), self.tensor(1))
            if not self.agree_all(self.try_call(gather)):
                calls["all_gather"] = ("all_gather", None)
        if "reduce_scatter" in self.request.ops:
            def scatter():
                dist.reduce_scatter_tensor(self.tensor(1), self.tensor(self.world))
            takes_it = self.agree_all(self.try_call(scatter))
            if self.request.backend == "gloo":
                # Torch's own is an all-reduce of a clone on gloo (see the module's doc).
                calls["reduce_scatter"] = (
                    "reduce_scatter_tensor" if takes_it else "all_reduce", "all_reduce")
            elif not takes_it:
                calls["reduce_scatter"] = ("all_reduce", "all_reduce")
        return calls

    def tensor(self, elements):
        return torch.zeros(elements, dtype=self.dtype, device=self.device)

    @staticmethod
    def try_call(function):
        """True when the call goes; a call the backend refuses raises before
        it sends anything, on every rank alike."""
        try:
            function()
            return True
        except (RuntimeError, NotImplementedError, ValueError, AttributeError):
            return False

    # --- agreeing --------------------------------------------------------------------

    def agree_max(self, value):
        flag = torch.tensor([float(value)], dtype=torch.float64, device=self.flag_device)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        return flag.item()

    def agree_all(self, ok):
        return self.agree_max(0 if ok else 1) == 0

    def check_stop(self):
        """Every rank stops after the same call (outside any timer)."""
        if self.agree_max(1 if self.stop.set else 0) > 0:
            raise Cancelled()

    def first_trouble(self, trouble):
        """Every rank's (status, message) or None, gathered: the first
        rank's trouble, its message naming it, or None when no rank has
        any. A collective: every rank learns the same."""
        troubles = [None] * self.world
        dist.all_gather_object(troubles, trouble)
        for rank, found in enumerate(troubles):
            if found is not None:
                status, message = found
                return status, (f"rank {rank}: {message}" if self.world > 1 else message)
        return None

    # --- the rows ---------------------------------------------------------------------

    def run(self):
        self.init()
        request = self.request
        self.events.emit("progress", done=0, total=request.total_rows)
        for op in request.ops:
            for size in request.sizes_bytes:
                self.where = f"{op} of {size} bytes"
                self.check_stop()
                row = self.measure(op, size)
                self.events.emit("row", **row)
                self.done += 1
                self.events.emit("progress", done=self.done, total=request.total_rows)
        self.where = "the end"

    def measure(self, op, size):
        request = self.request
        plan = plan_size(op, size, self.world, request.element_size)
        call_name, emulated = self.calls[op]
        row = {"op": op, "size_bytes": plan.size_bytes, "requested_bytes": size,
               "ranks": self.world, "backend": request.backend, "dtype": request.dtype,
               "device": request.device, "status": "ok", "message": "", "times_us": [],
               "emulated": emulated, "call": call_name, "oversubscribed": self.oversubscribed}
        # Every rank reads its memory before any allocates (first_trouble
        # is a collective), then all allocate, and agree again.
        refusal = self.memory_refusal(plan, emulated)
        trouble = self.first_trouble(("oom", refusal) if refusal else None)
        if trouble:
            return {**row, "status": trouble[0], "message": trouble[1]}
        buffers = None
        try:
            buffers = allocate(plan, self.dtype, self.device,
                               own_reduce_scatter=(op == "reduce_scatter"
                                                   and call_name == "all_reduce"))
            fill(plan, buffers, self.rank)
        except (RuntimeError, MemoryError) as error:  # torch.OutOfMemoryError too
            buffers = None
            need = bytes_per_rank(plan, request.backend, emulated)
            trouble = ("oom", f"allocating {format_bytes(need)} failed: {first_line(error)}")
        trouble = self.first_trouble(trouble)
        if trouble:
            return {**row, "status": trouble[0], "message": trouble[1]}
        try:
            trouble, times = self.time_calls(plan, buffers, call_name)
        finally:
            buffers = None
            if request.device == "cuda":
                torch.cuda.empty_cache()  # the next row's guard reads what is free
        if trouble:
            return {**row, "status": trouble[0], "message": trouble[1]}
        gathered = [None] * self.world if self.rank == 0 else None
        dist.gather_object(times, gathered, dst=0)
        return {**row, "times_us": gathered}

    def memory_refusal(self, plan, emulated):
        """This rank's verdict on the row's memory: None, or why not."""
        need = bytes_per_rank(plan, self.request.backend, emulated)
        if self.request.device == "cuda":
            free, _ = torch.cuda.mem_get_info(self.device)
            refusal = memory_refusal(need, self.ranks_per_memory, free, f"GPU {self.device.index}")
            if refusal or self.request.backend != "gloo":
                return refusal
            # gloo stages CUDA tensors in host memory; about as much again.
            return memory_refusal(need, self.local_ranks, host_available_bytes(), "host")
        return memory_refusal(need, self.ranks_per_memory, host_available_bytes(), "host")

    def make_call(self, plan, buffers, call_name):
        world, rank = self.world, self.rank
        if plan.op == "all_reduce":
            return lambda: dist.all_reduce(buffers.input)
        if plan.op == "broadcast":
            return lambda: dist.broadcast(buffers.input, src=0)
        if call_name == "all_gather_into_tensor":
            return lambda: dist.all_gather_into_tensor(buffers.output, buffers.input)
        if call_name == "all_gather":
            chunks = list(buffers.output.chunk(world))
            return lambda: dist.all_gather(chunks, buffers.input)
        if call_name == "reduce_scatter_tensor":
            return lambda: dist.reduce_scatter_tensor(buffers.output, buffers.input)

        def reduce_scatter_by_all_reduce():  # as torch's gloo does it
            buffers.scratch.copy_(buffers.input)
            dist.all_reduce(buffers.scratch)
            buffers.output.copy_(buffers.scratch.chunk(world)[rank])
        return reduce_scatter_by_all_reduce

    def time_calls(self, plan, buffers, call_name):
        """(the row's trouble or None, this rank's times in microseconds)."""
        request = self.request
        call = self.make_call(plan, buffers, call_name)
        cuda = request.device == "cuda"

        def finish():
            if cuda:
                torch.cuda.synchronize()
        # The first call, untimed (the first of the warm-up): a backend's
        # refusal, its running out of memory for its staging, or a wrong
        # result is the row's, agreed by every rank, not the run's end.
        self.check_stop()
        trouble = None
        try:
            call()
            finish()
        except (RuntimeError, NotImplementedError, ValueError, MemoryError) as error:
            status = "oom" if is_out_of_memory(error) or isinstance(error, MemoryError) \
                else "failed"
            trouble = (status, f"{call_name} raised {first_line(error)}")
        if trouble is None and request.check:
            wrong = verify(plan, buffers, self.rank, request.dtype)
            trouble = ("failed", wrong) if wrong else None
        trouble = self.first_trouble(trouble)
        if trouble:
            return trouble, []
        for_timing(plan, buffers)
        for _ in range(max(0, request.warmup - 1)):
            self.check_stop()
            call()
            finish()
        times = []
        for _ in range(request.repeats):
            self.check_stop()
            finish()
            dist.barrier()
            start = time.perf_counter_ns()
            call()
            finish()
            times.append((time.perf_counter_ns() - start) / 1000.0)
        return None, times


# --- the process ----------------------------------------------------------------------

def leave(code):
    """Ends the process without the interpreter's teardown (seconds with
    torch and gloo's threads, and it can hang on them)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def load_request(path):
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file)
    except OSError as error:
        raise RequestError(f"request: cannot read {path}: {error.strerror}") from error
    except ValueError as error:
        raise RequestError(f"request: {path} is not JSON: {error}") from error


def rank_main(argv):
    """One rank under torchrun; returns the exit status."""
    if "RANK" not in os.environ or len(argv) != 2:
        print("usage: python -m torch.distributed.run --standalone --nproc-per-node N "
              "-m stepscope.distributed.collective_bench REQUEST.json\n"
              "   or: " + DRIVER_USAGE.removeprefix("usage: "),
              file=sys.stderr)
        return EXIT_BAD_REQUEST
    rank = int(os.environ["RANK"])
    stdout = take_stdout()  # anything else printed, by torch or gloo, goes to stderr
    events = EventStream(stdout) if rank == 0 else NoEvents()
    stop = StopFlag().install()
    try:
        request = parse_request(load_request(argv[1]))
        check_here(request, int(os.environ.get("LOCAL_WORLD_SIZE", os.environ["WORLD_SIZE"])))
    except RequestError as error:
        # Every rank finds the same; rank 0 says it. torchrun ends the others
        # as soon as the first rank exits, so the rest wait to be ended by it
        # (bounded: should rank 0 not fail, they speak for themselves).
        if rank != 0 and stop.wait(REQUEST_ERROR_GRACE_S):
            return EXIT_BAD_REQUEST
        events.emit("finished", status="failed", message=str(error), done=0, total=0)
        print(f"stepscope collective: {error}", file=sys.stderr)
        return EXIT_BAD_REQUEST
    bench = RankBench(request, events, stop)
    try:
        bench.run()
    except Cancelled:
        message = (f"stopped by {stop.signal or 'a signal'} after {bench.done} of "
                   f"{request.total_rows} rows")
        events.emit("finished", status="cancelled", message=message, done=bench.done,
                    total=request.total_rows)
        if rank == 0:
            print(f"stepscope collective: {message}", file=sys.stderr)
        code = EXIT_CANCELLED
    except BaseException as error:  # noqa: B902 - a rank that fails says why and goes
        # A peer may be gone: no barrier or destroy that could wait for it.
        # Rank 0's line says what rank 0 saw (a peer's failure is often a
        # closed connection here); stderr has every rank's.
        headline = f"rank {rank}: {first_line(error)} (at {bench.where})"
        events.emit("finished", status="failed", message=headline, done=bench.done,
                    total=request.total_rows)
        print(with_traceback_tail(f"stepscope collective {headline}", error), file=sys.stderr)
        return EXIT_FAILED
    else:
        events.emit("finished", status="ok", message="", done=bench.done,
                    total=request.total_rows)
        code = 0
    try:
        dist.barrier()
        dist.destroy_process_group()
    except Exception as error:  # the rows are out; leave anyway
        print(f"stepscope collective rank {rank}: leaving the process group: "
              f"{first_line(error)}", file=sys.stderr)
    return code


# --- the driver ---------------------------------------------------------------------------

def launch_command(ranks, request_path, python=sys.executable, nodes=1):
    """torchrun's command line for one rank count, as the client runs it
    (srun's, a torchrun a node, across `nodes` nodes of a Slurm allocation)."""
    return torchrun_command(ranks, nodes, ["stepscope.distributed.collective_bench",
                                           request_path], python)


def launch_environment(base=None):
    """The package importable, one intra-op thread per rank."""
    env = dict(os.environ if base is None else base)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = PACKAGE_PARENT + (os.pathsep + path if path else "")
    env["OMP_NUM_THREADS"] = "1"
    return env


DRIVER_USAGE = ("usage: python -m stepscope.distributed.collective_bench --ranks N "
                "[--nodes M] REQUEST.json")


def driver_main(argv):
    """`--ranks N [--nodes M] REQUEST.json`: torchrun on N ranks (over M
    nodes of a Slurm allocation), its stdout (rank 0's JSON lines) passed
    through, SIGTERM and SIGINT passed on to it."""
    counts, rest = {}, argv[1:]
    while len(rest) > 1 and rest[0] in ("--ranks", "--nodes"):
        counts[rest[0]], rest = rest[1], rest[2:]
    if len(rest) != 1 or "--ranks" not in counts or \
            not all(value.isdigit() and int(value) >= 1 for value in counts.values()):
        print(DRIVER_USAGE, file=sys.stderr)
        return EXIT_BAD_REQUEST
    ranks, nodes = int(counts["--ranks"]), int(counts.get("--nodes", "1"))
    try:
        command = launch_command(ranks, rest[0], nodes=nodes)
    except AllocationError as error:
        print(f"stepscope collective: nodes: {error}", file=sys.stderr)
        return EXIT_BAD_REQUEST
    process = subprocess.Popen(command, env=launch_environment(), stdin=subprocess.DEVNULL,
                               start_new_session=True, preexec_fn=die_with_parent)

    def pass_on(signum, frame):
        process.send_signal(signum)
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, pass_on)
    return process.wait()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--ranks":
        sys.exit(driver_main(sys.argv))
    leave(rank_main(sys.argv))
