"""Users' own models for the worker's tests, each built by a callable that
takes the course's keyword arguments (py_model MODULE:CALLABLE)."""
import os
import sys
import time

import torch
from torch import nn


class TiedGRULM(nn.Module):
    """A language model of another shape than StepScope's: a GRU stack between
    an embedding and an LM head that shares the embedding's weight (no
    attention, no positions, no d_ff)."""

    def __init__(self, vocab_size, d_model, num_layers):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.gru = nn.GRU(d_model, d_model, num_layers=num_layers, batch_first=True)

    def forward(self, tokens):
        hidden, _ = self.gru(self.embed(tokens))
        return hidden @ self.embed.weight.T


def tied_gru_lm(vocab_size, context_length, d_model, num_layers, num_heads, d_ff, rope_theta):
    return TiedGRULM(vocab_size, d_model, num_layers)


class Chatty(TiedGRULM):
    """Prints to stdout from Python and straight to file descriptor 1."""

    def forward(self, tokens):
        print("chatty: forward on", tuple(tokens.shape))
        os.write(1, b"chatty: raw write to fd 1\n")
        return super().forward(tokens)


def chatty_lm(vocab_size, context_length, d_model, num_layers, num_heads, d_ff, rope_theta):
    print("chatty: building")
    sys.stdout.flush()
    return Chatty(vocab_size, d_model, num_layers)


class Slow(TiedGRULM):
    def forward(self, tokens):
        time.sleep(0.3)
        return super().forward(tokens)


def slow_lm(vocab_size, context_length, d_model, num_layers, num_heads, d_ff, rope_theta):
    return Slow(vocab_size, d_model, num_layers)


class FiveClasses(TiedGRULM):
    def forward(self, tokens):
        return super().forward(tokens)[..., :5]


def wrong_vocab_lm(vocab_size, context_length, d_model, num_layers, num_heads, d_ff, rope_theta):
    """Logits over 5 classes whatever the vocab."""
    return FiveClasses(vocab_size, d_model, num_layers)


def no_kwargs_lm():
    return TiedGRULM(10, 8, 1)


class RunsOutOfMemory(TiedGRULM):
    def forward(self, tokens):
        big = torch.empty(1024, 1024)  # alive when memory "runs out": in the kept trace
        raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate 1.00 TiB "
                                     f"(holding {big.numel()} floats)")


def oom_lm(vocab_size, context_length, d_model, num_layers, num_heads, d_ff, rope_theta):
    return RunsOutOfMemory(vocab_size, d_model, num_layers)


def raises_lm(vocab_size, context_length, d_model, num_layers, num_heads, d_ff, rope_theta):
    raise ValueError("this model refuses to be built")


not_callable = 42
