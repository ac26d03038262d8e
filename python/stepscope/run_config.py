"""The run request's config (the run file's "config" object), checked.

A value this worker cannot serve ends the run as `unavailable`, naming the
field and the values it takes.
"""
from dataclasses import dataclass

import torch

from .model import ATTENTIONS
from .outcome import failed, first_line, unavailable

MODES = ("inference", "forward", "forward-backward", "train-step")
PRECISIONS = ("fp32", "bf16", "fp16")
DEVICES = ("cpu", "cuda")
ENGINES = ("pytorch", "pytorch-compile")
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune")
OPTIMIZERS = ("adamw",)

AUTOCAST_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass(frozen=True)
class ModelDims:
    vocab: int
    d_model: int
    d_ff: int
    layers: int
    heads: int
    max_context: int
    rope_theta: float


@dataclass(frozen=True)
class RunSpec:
    dims: ModelDims
    ctx: int
    batch: int
    mode: str
    precision: str
    tf32: bool
    warmup: int
    steps: int
    device: str
    seed: int
    attention: str
    threads: int
    trace_ops: bool
    trace_kernels: bool
    trace_memory: bool
    engine: str
    compile_mode: str
    py_model: str
    py_path: str
    py_attention: str
    weights: str
    tokens: str

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


def choice(config, key, allowed, default=None):
    value = config.get(key, default)
    if value not in allowed:
        raise unavailable(key, f"'{value}' is not served by the PyTorch worker", allowed)
    return value


def dims_from(model):
    return ModelDims(vocab=int(model["vocab"]), d_model=int(model["d_model"]),
                     d_ff=int(model["d_ff"]), layers=int(model["layers"]),
                     heads=int(model["heads"]), max_context=int(model["max_context"]),
                     rope_theta=float(model.get("rope_theta", 10000.0)))


def parse_run_config(config):
    """A RunSpec from the request's config; raises Finish naming a bad or missing field."""
    if not isinstance(config, dict):
        raise failed("config: the run request holds no config object")
    try:
        return checked_spec(config)
    except (KeyError, TypeError, ValueError) as error:
        raise failed(f"config: a field is missing or malformed ({first_line(error)})") from error


def checked_spec(config):
    py_model = config.get("py_model", "") or ""
    py_attention = config.get("py_attention", "") or ""
    if py_model and py_attention:
        raise unavailable("py_attention", "the reference model calls it; a py_model brings its "
                          "own attention (give one of the two)")
    spec = RunSpec(
        dims=dims_from(config["model"]),
        ctx=int(config["ctx"]),
        batch=int(config["batch"]),
        mode=choice(config, "mode", MODES),
        precision=choice(config, "precision", PRECISIONS, "fp32"),
        tf32=bool(config.get("tf32", False)),
        warmup=int(config.get("warmup", 0)),
        steps=int(config.get("steps", 1)),
        device=choice(config, "device", DEVICES, "cpu"),
        seed=int(config.get("seed", 0)),
        # The user's model brings its own attention, and py_attention replaces
        # ours; otherwise the reference model takes one of ATTENTIONS.
        attention=config.get("attention", "naive") if py_model or py_attention else
        choice(config, "attention", ATTENTIONS, "naive"),
        threads=int(config.get("threads", 0)),
        trace_ops=bool(config.get("trace_ops", False)),
        trace_kernels=bool(config.get("trace_kernels", False)),
        trace_memory=bool(config.get("trace_memory", False)),
        engine=choice(config, "engine", ENGINES, "pytorch"),
        compile_mode=choice(config, "compile_mode", COMPILE_MODES, "default"),
        py_model=py_model,
        py_path=config.get("py_path", "") or "",
        py_attention=py_attention,
        weights=config.get("weights", "") or "",
        tokens=config.get("tokens", "") or "",
    )
    if config.get("optimizer") is not None:
        choice(config, "optimizer", OPTIMIZERS)
    check_device(spec)
    return spec


def check_device(spec):
    if spec.device == "cuda" and not torch.cuda.is_available():
        raise unavailable("device", f"'cuda' was asked for, but this torch ({torch.__version__}) "
                          "sees no CUDA device", ["cpu"])
    if spec.trace_kernels and spec.device != "cuda":
        raise unavailable("trace_kernels", "kernels are traced on CUDA only; this run is on the "
                          "CPU (trace operators instead)")
