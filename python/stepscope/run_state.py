"""What a run steps: the model (ours or the user's, compiled or not), its
optimizer and the batch, built as the C++ engine builds them."""
from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn

from .attention import backends, triton_mode
from .attention.gate import run_gate
from .attention.user_attention import load_user_attention
from .compiling import compile_function
from .model import TransformerLM
from .outcome import failed, first_line
from .user_model import build_user_model

COMPILE_PREFIX = "_orig_mod."
CHECKPOINT_MODEL_KEYS = ("model", "model_state_dict")


@dataclass
class RunState:
    module: nn.Module  # the eager module: parameters, gradients, state dict
    model: nn.Module  # what the steps call: the module, or torch.compile of it
    optimizer: Optional[torch.optim.Optimizer]
    tokens: torch.Tensor  # (batch, ctx + 1)
    inputs: torch.Tensor
    targets: torch.Tensor

    @property
    def parameter_count(self):
        return sum(p.numel() for p in self.module.parameters())


def traceback_of_interest(error):
    """A file that cannot be opened needs no traceback; one that cannot be read may."""
    return None if isinstance(error, OSError) else error


def reference_attention(spec):
    """What the reference model's blocks call: the user's py_attention, or ours."""
    if spec.runs_triton:
        triton_mode.prepare_for(spec.device)  # before any Triton kernel is decorated
    if not spec.py_attention:
        return spec.attention
    user = load_user_attention(spec.py_attention, spec.py_path)
    backend = backends.users(user)
    # Checked before it is timed, as in the attention grid: at the model's head
    # dim, in the run's precision, on its device. An incorrect one is bad
    # input (the client names --py-attention), never a measured run.
    head_dim = spec.dims.d_model // spec.dims.heads
    gate = run_gate(backend, spec.precision, (head_dim,), spec.device)
    if not gate.ok:
        raise failed(f"py_attention: the correctness gate before the run: {gate.message}")
    return backend.model_attention()


def build_module(spec):
    """Our reference model with the config's dims, or the user's py_model."""
    dims = spec.dims
    with torch.device(spec.device):
        if spec.py_model:
            module = build_user_model(spec.py_model, spec.py_path, dims)
        else:
            module = TransformerLM(dims.vocab, dims.d_model, dims.d_ff, dims.layers, dims.heads,
                                   dims.max_context, dims.rope_theta,
                                   attention=reference_attention(spec))
    return module.to(spec.device)


def state_dict_in(loaded, path):
    """The state dict a torch.save'd file holds: plain, or a training checkpoint's."""
    if not isinstance(loaded, dict):
        raise failed(f"weights: '{path}' holds a {type(loaded).__name__}, not a state dict")
    for key in CHECKPOINT_MODEL_KEYS:
        if isinstance(loaded.get(key), dict):
            loaded = loaded[key]
            break
    state = {}
    for name, tensor in loaded.items():
        if not isinstance(tensor, torch.Tensor):
            raise failed(f"weights: '{path}': entry '{name}' is a {type(tensor).__name__}, "
                         "not a tensor")
        while name.startswith(COMPILE_PREFIX):
            name = name[len(COMPILE_PREFIX):]
        state[name] = tensor
    return state


def load_weights(module, path, device):
    try:
        loaded = torch.load(path, map_location=device)
    except Exception as error:
        raise failed(f"weights: cannot read '{path}': {first_line(error)}",
                     traceback_of_interest(error)) from error
    try:
        module.load_state_dict(state_dict_in(loaded, path))
    except RuntimeError as error:
        raise failed(f"weights: '{path}' does not fit the model: {error}") from error


def read_tokens(spec):
    path, vocab = spec.tokens, spec.dims.vocab
    try:
        tokens = torch.load(path, map_location=spec.device)
    except Exception as error:
        raise failed(f"tokens: cannot read '{path}': {first_line(error)}",
                     traceback_of_interest(error)) from error
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.is_floating_point():
        raise failed(f"tokens: '{path}' holds no 2-D tensor of token ids (batch, ctx + 1)")
    expected = (spec.batch, spec.ctx + 1)
    if tuple(tokens.shape) != expected:
        raise failed(f"tokens: the file holds a {tuple(tokens.shape)} batch; the run asks for "
                     f"batch {spec.batch} and ctx {spec.ctx}, a {expected} batch")
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab):
        raise failed(f"tokens: ids must lie in 0..{vocab - 1} (vocab {vocab}); the file holds "
                     f"{int(tokens.min())}..{int(tokens.max())}")
    return tokens.long()


def batch_of_tokens(spec):
    if spec.tokens:
        return read_tokens(spec)
    return torch.randint(spec.dims.vocab, (spec.batch, spec.ctx + 1), device=spec.device)


def build_run_state(spec):
    torch.manual_seed(spec.seed)
    module = build_module(spec)
    optimizer = None
    if spec.has_optimizer:
        # The per-parameter loop, like the engine's AdamW.
        optimizer = torch.optim.AdamW(module.parameters(), lr=1e-3, weight_decay=0.01,
                                      foreach=False)
    if spec.weights:
        load_weights(module, spec.weights, spec.device)
    tokens = batch_of_tokens(spec)
    model = compile_function(module, mode=spec.compile_mode) if spec.compiled else module
    return RunState(module=module, model=model, optimizer=optimizer, tokens=tokens,
                    inputs=tokens[:, :-1], targets=tokens[:, 1:])
