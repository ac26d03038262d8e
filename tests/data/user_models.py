"""Users' own models for the engine tests (tst_engines): each callable takes
the course's keyword arguments, as --py-model MODULE:CALLABLE does."""
import os
import signal
import time

import torch
from torch import nn


class TiedBagLM(nn.Module):
    """A model of a shape unlike StepScope's: tied embedding and LM head, one
    GELU MLP per layer, LayerNorm with bias. Parameters, for vocab V, width d,
    MLP width f and L layers: V·d + L·(2·d·f + f + 2·d) + 2·d."""

    def __init__(self, vocab_size, d_model, d_ff, num_layers):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.mlps = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, d_ff), nn.GELU(),
                          nn.Linear(d_ff, d_model, bias=False))
            for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)

    def forward(self, tokens):
        x = self.embed(tokens)
        for mlp in self.mlps:
            x = x + mlp(x)
        return self.norm(x) @ self.embed.weight.T


def tied_bag_lm(vocab_size, context_length, d_model, num_layers, num_heads, d_ff, rope_theta):
    del context_length, num_heads, rope_theta  # no attention, no positions
    return TiedBagLM(vocab_size, d_model, d_ff, num_layers)


class _OneClassShort(TiedBagLM):
    def forward(self, tokens):
        return super().forward(tokens)[..., :-1]


def wrong_output(vocab_size, context_length, d_model, num_layers, num_heads, d_ff, rope_theta):
    """Logits with one class too few."""
    return _OneClassShort(vocab_size, d_model, d_ff, 1)


def no_kwargs():
    """A callable with the wrong signature."""
    return TiedBagLM(10, 8, 8, 1)


class _DiesOnThirdForward(TiedBagLM):
    calls = 0

    def forward(self, tokens):
        type(self).calls += 1
        if type(self).calls == 3:
            print("about to die", flush=True)  # reaches stderr, not the event stream
            os.kill(os.getpid(), signal.SIGKILL)
        return super().forward(tokens)


def dies_on_third_forward(vocab_size, context_length, d_model, num_layers, num_heads, d_ff,
                          rope_theta):
    return _DiesOnThirdForward(vocab_size, d_model, d_ff, num_layers)


class _IgnoresSigterm(TiedBagLM):
    def forward(self, tokens):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(0.5)
        return super().forward(tokens)


def ignores_sigterm(vocab_size, context_length, d_model, num_layers, num_heads, d_ff,
                    rope_theta):
    """Slow steps that ignore SIGTERM: only SIGKILL stops it."""
    return _IgnoresSigterm(vocab_size, d_model, d_ff, num_layers)
