"""The user's own attention, named as MODULE:NAME (`py_attention`).

NAME is a torch.autograd.Function (called as NAME.apply(q, k, v, is_causal),
the course's convention) or any callable (q, k, v, is_causal) -> o. It is
called with (batch·heads, seq, d) tensors, the layout of the course's tests,
so a function that only takes three dimensions runs too. A target that
cannot be imported or named fails with a message whose first line starts
with `py_attention:` (the C++ client turns it into an error naming
--py-attention).
"""
import re
from dataclasses import dataclass
from typing import Callable

import torch

from ..outcome import failed
from ..python_target import find_object

# StepScope's own backends in the grid and the model: a user's cannot take their names.
RESERVED_NAMES = ("naive", "sdpa", "compiled", "flash-pytorch", "flash-triton")
BACKEND_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class UserAttention:
    name: str  # the backend's name in the grid
    target: str  # MODULE:NAME
    call: Callable  # (q, k, v, is_causal) -> o
    kind: str  # "autograd Function" or "callable"


def callable_of(found, target):
    """(call, kind) for the object a target names."""
    if isinstance(found, type):
        if issubclass(found, torch.autograd.Function):
            return found.apply, "autograd Function"
        raise failed(f"py_attention: '{target}' is the class {found.__name__}, not a "
                     "torch.autograd.Function; give a Function or a function "
                     "(q, k, v, is_causal) -> o")
    if callable(found):
        return found, "callable"
    raise failed(f"py_attention: '{target}' is a {type(found).__name__}, not a "
                 "torch.autograd.Function or a callable (q, k, v, is_causal) -> o")


def backend_name(target, name):
    """The grid's name for the user's backend: `name`, or NAME of MODULE:NAME."""
    chosen = name or target.partition(":")[2]
    if chosen in RESERVED_NAMES:
        raise failed(f"py_attention: the backend name '{chosen}' is StepScope's own; give "
                     "yours another (py_attention_name)")
    if not BACKEND_NAME.match(chosen):
        raise failed(f"py_attention: the backend name '{chosen}' is not a name (letters, "
                     "digits, _ . -, at most 64, starting with a letter or _)")
    return chosen


def load_user_attention(target, py_path="", name=""):
    """The UserAttention `target` names; raises Finish (failed, `py_attention: ...`)."""
    found = find_object(target, py_path, "py_attention", "NAME")
    call, kind = callable_of(found, target)
    return UserAttention(name=backend_name(target, name), target=target, call=call, kind=kind)
