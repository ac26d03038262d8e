"""A user's own model, named as MODULE:CALLABLE (`py_model`).

The callable takes the course's keyword arguments and returns an nn.Module
that maps (batch, seq) int64 token ids to (batch, seq, vocab) logits. Every
way this can go wrong is a failed run whose first line says which.
"""
import inspect

import torch
from torch import nn

from .outcome import failed
from .python_target import find_object


def course_kwargs(dims):
    """The keyword arguments the course's TransformerLM takes."""
    return {
        "vocab_size": dims.vocab,
        "context_length": dims.max_context,
        "d_model": dims.d_model,
        "num_layers": dims.layers,
        "num_heads": dims.heads,
        "d_ff": dims.d_ff,
        "rope_theta": dims.rope_theta,
    }


def find_callable(py_model, py_path=""):
    """The object MODULE:CALLABLE names, importing MODULE with py_path first on sys.path."""
    target = find_object(py_model, py_path, "py_model", "CALLABLE")
    if not callable(target):
        raise failed(f"py_model: '{py_model}' is a {type(target).__name__}, not callable")
    return target


def build_user_model(py_model, py_path, dims):
    factory = find_callable(py_model, py_path)
    kwargs = course_kwargs(dims)
    try:
        inspect.signature(factory).bind(**kwargs)
    except TypeError as error:
        raise failed(f"py_model: {py_model} does not take the course's keyword arguments "
                     f"({', '.join(kwargs)}): {error}") from error
    except ValueError:
        pass  # no signature to inspect (a builtin): the call says whether it fits
    try:
        model = factory(**kwargs)
    except Exception as error:
        raise failed(f"py_model: {py_model}(...) raised {type(error).__name__}: {error}",
                     error) from error
    if not isinstance(model, nn.Module):
        raise failed(f"py_model: {py_model}(...) returned a {type(model).__name__}, "
                     "not a torch.nn.Module")
    return model


def check_logits(logits, inputs, vocab):
    """Raises failed unless `logits` is (batch, seq, vocab) for `inputs`."""
    expected = (inputs.shape[0], inputs.shape[1], vocab)
    if not isinstance(logits, torch.Tensor):
        raise failed(f"py_model: the model returned a {type(logits).__name__}, not a tensor of "
                     f"logits (batch, seq, vocab) = {expected}")
    if tuple(logits.shape) != expected:
        raise failed(f"py_model: output shape {tuple(logits.shape)} but expected "
                     f"(batch, seq, vocab) = {expected}")
