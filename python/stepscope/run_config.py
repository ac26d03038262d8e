"""The run request's config (the run file's "config" object), checked.

Its fields are the C++ table's (config_fields): each key the run file holds
is read as its type says, missing keys the first version of the run file
had are an error, later ones take their defaults. A value this worker
cannot serve ends the run as `unavailable`, naming the field and the values
it takes: one the worker's engines do not take at all (a memory lever) must
be the default.
"""
from dataclasses import dataclass, make_dataclass

import torch

from .config_fields import FIELDS
from .distributed.torchrun import AllocationError, slurm_allocation
from .outcome import failed, first_line, unavailable

MODES = FIELDS.named("mode").served
PRECISIONS = FIELDS.named("precision").served
DEVICES = FIELDS.named("device").served
ENGINES = FIELDS.named("engine").served
COMPILE_MODES = FIELDS.named("compile-mode").served

AUTOCAST_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
PYTHON_TYPES = {"integer": int, "number": float, "switch": bool, "choice": str, "text": str,
                "path": str}


@dataclass(frozen=True)
class ModelDims:
    vocab: int
    d_model: int
    d_ff: int
    layers: int
    heads: int
    max_context: int
    rope_theta: float


class RunSpecBase:
    """What a RunSpec (one attribute per field the worker takes, by its run
    file key, and `dims`) says about the steps."""

    @property
    def total_steps(self):
        return self.warmup + self.steps

    @property
    def has_backward(self):
        return self.mode in ("forward-backward", "train-step")

    @property
    def has_optimizer(self):
        return self.mode == "train-step"

    @property
    def phases(self):
        """The phases a step of this mode has, in order."""
        return ("forward", "backward", "optimizer")[: 1 + self.has_backward + self.has_optimizer]

    @property
    def autocast_dtype(self):
        return AUTOCAST_DTYPES.get(self.precision)

    @property
    def compiled(self):
        return self.engine == "pytorch-compile"

    @property
    def runs_triton(self):
        """Whether the blocks may call Triton kernels (ours, or the user's)."""
        return bool(self.py_attention) or self.attention == "flash-triton"

    @property
    def traced(self):
        return self.trace_ops or self.trace_kernels or self.trace_memory

    @property
    def distributed(self):
        """Whether torchrun starts ranks for the steps (stepscope.distributed)."""
        return self.parallel != "none"


def worker_fields(fields):
    """The run file's fields the worker's engines take, but the model."""
    return [f for f in fields.in_file() if f.type != "model" and fields.worker_takes(f)]


def spec_class(fields):
    return make_dataclass("RunSpec", [("dims", ModelDims)] +
                          [(f.key, PYTHON_TYPES[f.type]) for f in worker_fields(fields)],
                          bases=(RunSpecBase,), frozen=True)


RunSpec = spec_class(FIELDS)


def dims_from(model):
    return ModelDims(vocab=int(model["vocab"]), d_model=int(model["d_model"]),
                     d_ff=int(model["d_ff"]), layers=int(model["layers"]),
                     heads=int(model["heads"]), max_context=int(model["max_context"]),
                     rope_theta=float(model.get("rope_theta", 10000.0)))


def parse_run_config(config, fields=FIELDS):
    """A RunSpec from the request's config; raises Finish naming a bad or missing field."""
    if not isinstance(config, dict):
        raise failed("config: the run request holds no config object")
    try:
        return checked_spec(config, fields)
    except (KeyError, TypeError, ValueError) as error:
        raise failed(f"config: a field is missing or malformed ({first_line(error)})") from error


def value_of(config, field, fields):
    """The field's value as its type says; KeyError for a missing key the run
    file has always had."""
    if field.key not in config:
        if field.required:
            raise KeyError(field.key)
        return fields.worker_default(field)
    value = config[field.key]
    if field.type == "integer":
        return int(value)
    if field.type == "number":
        return float(value)
    if field.type == "switch":
        return bool(value)
    if field.type in ("text", "path"):
        return value or ""
    return value


def checked_spec(config, fields=FIELDS):
    py_model = config.get("py_model", "") or ""
    py_attention = config.get("py_attention", "") or ""
    if py_model and py_attention:
        raise unavailable("py_attention", "the reference model calls it; a py_model brings its "
                          "own attention (give one of the two)")
    values = {"dims": dims_from(config["model"])}
    for field in fields.in_file():
        if field.type == "model":
            continue
        value = value_of(config, field, fields)
        if not fields.worker_takes(field):
            if value != field.default:
                raise unavailable(field.key, f"'{field.text(value)}' is not served by the "
                                  "PyTorch worker", [field.text(field.default)])
            continue
        # The user's model brings its own attention, and py_attention replaces
        # ours; otherwise the reference model takes one the worker has.
        user_attention = field.key == "attention" and (py_model or py_attention)
        if field.type == "choice" and field.served and not user_attention and \
                value not in field.served:
            raise unavailable(field.key, f"'{value}' is not served by the PyTorch worker",
                              field.served)
        values[field.key] = value
    spec = (RunSpec if fields is FIELDS else spec_class(fields))(**values)
    check_device(spec)
    if hasattr(spec, "parallel"):  # a table without the distributed fields: a test's
        check_distributed(spec)
    return spec


def check_device(spec):
    if spec.device == "cuda" and not torch.cuda.is_available():
        raise unavailable("device", f"'cuda' was asked for, but this torch ({torch.__version__}) "
                          "sees no CUDA device", ["cpu"])
    if spec.trace_kernels and spec.device != "cuda":
        raise unavailable("trace_kernels", "kernels are traced on CUDA only; this run is on the "
                          "CPU (trace operators instead)")


# Which user class takes the place of ours, with which strategies.
USER_STRATEGY_FIELDS = (
    ("py_ddp", ("naive", "flat", "overlap", "bucketed", "sharded-optimizer")),
    ("py_fsdp", ("fsdp",)),
    ("py_sharded_optimizer", ("sharded-optimizer",)),
)


def check_distributed(spec):
    """The distributed keys together, and with the rest of the run."""
    strategies = FIELDS.named("parallel").values[1:]
    if spec.ranks < 1:
        raise failed(f"ranks: must be 1 or more, got {spec.ranks}")
    if spec.ranks > 1 and not spec.distributed:
        raise failed(f"parallel: ranks {spec.ranks} need a strategy; allowed: "
                     + ", ".join(strategies))
    if not spec.bucket_mb > 0:
        raise failed(f"bucket_mb: must be above 0, got {spec.bucket_mb:g}")
    for key, served_with in USER_STRATEGY_FIELDS:
        if getattr(spec, key) and spec.parallel not in served_with:
            raise failed(f"{key}: takes the place of ours with parallel "
                         f"{' or '.join(served_with)}, not '{spec.parallel}'")
    if spec.ranks % spec.nodes:
        raise failed(f"nodes: ranks {spec.ranks} do not divide by nodes {spec.nodes} (each "
                     "node runs ranks / nodes)")
    if not spec.distributed:
        return
    if spec.nodes > 1:
        try:
            slurm_allocation(spec.nodes)
        except AllocationError as error:
            raise unavailable("nodes", str(error)) from error
    if spec.batch % spec.ranks:
        raise failed(f"batch: batch {spec.batch} does not divide by ranks {spec.ranks} "
                     "(the global batch is split evenly)")
    if spec.compiled:
        raise unavailable("engine", "a distributed run (parallel) steps with the pytorch "
                          "engine only for now", ["pytorch"])
    for key in ("trace_ops", "trace_kernels", "trace_memory"):
        if getattr(spec, key):
            raise unavailable(key, "not traced in a distributed run (parallel) for now; the "
                              "ranks' communication and memory are measured without it")
    if spec.backend == "nccl":
        if spec.device != "cuda":
            raise unavailable("backend", "nccl needs device cuda", ["gloo"])
        per_node = spec.ranks // spec.nodes
        if per_node > torch.cuda.device_count():
            raise unavailable("backend", f"nccl takes a GPU per rank: {per_node} ranks a node, "
                              f"{torch.cuda.device_count()} GPUs here", ["gloo"])
