"""The user's own attention, named as MODULE:NAME (`py_attention`).

NAME is a torch.autograd.Function (called as NAME.apply(q, k, v, is_causal),
the course's convention) or any callable (q, k, v, is_causal) -> o. It is
called with (batch·heads, seq, d) tensors, the layout of the course's tests,
so a function that only takes three dimensions runs too. A target that
cannot be imported or named fails with a message whose first line starts
with `py_attention:` (the C++ client turns it into an error naming
--py-attention).
"""
import inspect
import os
import re
import sys
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
    triton_kernels: bool = False  # its module (or py_path's) holds Triton kernels


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


def user_modules(module_name, py_path):
    """The named module and the user's modules it names (imports, or the modules
    of what it imported from them), one level deep: where its kernels may lie.
    The user's modules are those under py_path (or the named module's folder)."""
    module = sys.modules.get(module_name)
    if module is None:
        return []
    root = py_path or os.path.dirname(getattr(module, "__file__", None) or "")
    root = os.path.join(os.path.abspath(root), "") if root else ""
    found = [module]
    for value in list(vars(module).values()):
        other = value if inspect.ismodule(value) else \
            sys.modules.get(getattr(value, "__module__", None) or "")
        path = getattr(other, "__file__", None)
        if other is not None and other not in found and root and path and \
                os.path.abspath(path).startswith(root):
            found.append(other)
    return found


def holds_triton_kernels(module_name, py_path):
    """Whether the user's modules define Triton kernels (@triton.jit at import):
    they run in Triton's interpreter on the CPU, where torch.compile must not
    trace into them and the grid does not time them."""
    jit = sys.modules.get("triton.runtime.jit")
    kernel_type = getattr(jit, "KernelInterface", None)
    if kernel_type is None:
        return False
    return any(isinstance(value, kernel_type)
               for module in user_modules(module_name, py_path)
               for value in list(vars(module).values()))


def load_user_attention(target, py_path="", name=""):
    """The UserAttention `target` names; raises Finish (failed, `py_attention: ...`)."""
    found = find_object(target, py_path, "py_attention", "NAME")
    call, kind = callable_of(found, target)
    return UserAttention(name=backend_name(target, name), target=target, call=call, kind=kind,
                         triton_kernels=holds_triton_kernels(target.partition(":")[0], py_path))
