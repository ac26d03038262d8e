"""The Python attention backends, gated before they are timed: ours
(flash-pytorch, flash-triton) and the user's, each as one PythonBackend the
grid times and the reference model calls in every block."""
from dataclasses import dataclass
from typing import Callable

import torch

from . import triton_mode

FLASH_PYTORCH, FLASH_TRITON = "flash-pytorch", "flash-triton"
OURS = (FLASH_PYTORCH, FLASH_TRITON)


@dataclass(frozen=True)
class PythonBackend:
    name: str
    call: Callable  # (q, k, v, is_causal) -> o
    kernel: str  # the point event's `kernel`
    heads_dim: bool  # called with (batch, heads, seq, d); else (batch·heads, seq, d)
    triton: bool  # runs Triton kernels: ours, or a user's whose modules define some
    #               (and the gate counts the kernels any backend launches in the interpreter)

    def shape(self, batch, heads, seq, d):
        """The q, k and v shape this backend is called with."""
        return (batch, heads, seq, d) if self.heads_dim else (batch * heads, seq, d)

    def model_attention(self):
        """Causal attention on the model's (batch, heads, seq, d) q, k and v.

        Triton kernels in the interpreter are NumPy code that torch.compile
        cannot trace: there the call stays eager inside a compiled model."""
        call, heads_dim = self.call, self.heads_dim
        if self.triton and triton_mode.interpreting():
            call = torch.compiler.disable(call, recursive=True)

        def attend(q, k, v):
            if heads_dim:
                return call(q, k, v, True)
            b, h, t, d = q.shape
            out = call(q.reshape(b * h, t, d), k.reshape(b * h, t, d), v.reshape(b * h, t, d),
                       True)
            return out.reshape(b, h, t, d)
        return attend


def flash_pytorch():
    from .flash_pytorch import FlashAttentionPyTorch

    return PythonBackend(FLASH_PYTORCH, FlashAttentionPyTorch.apply, FLASH_PYTORCH,
                         heads_dim=True, triton=False)


def flash_triton():
    """Ours in Triton; raises RuntimeError where Triton is not installed."""
    if not triton_mode.triton_installed():
        raise RuntimeError("flash-triton needs Triton, which this Python does not have "
                           "(it comes with torch's CUDA wheels: pip install triton)")
    from . import flash_triton as module

    kernel = "triton-interpreter" if module.INTERPRETED else "triton"
    return PythonBackend(FLASH_TRITON, module.FlashAttentionTriton.apply, kernel,
                         heads_dim=True, triton=True)


def ours(name):
    return {FLASH_PYTORCH: flash_pytorch, FLASH_TRITON: flash_triton}[name]()


def users(user_attention):
    """The backend of a UserAttention (user_attention.load_user_attention)."""
    return PythonBackend(user_attention.name, user_attention.call, user_attention.target,
                         heads_dim=False, triton=user_attention.triton_kernels)
