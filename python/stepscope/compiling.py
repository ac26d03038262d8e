"""torch.compile as the worker uses it."""
import torch


def pin_inductor_threads():
    """Makes the thread count part of Inductor's cache key.

    CPU kernels are generated for the thread count of the moment
    (`#pragma omp parallel num_threads(N)`), but torch 2.11's FX graph cache
    key leaves that count out: a graph compiled with 2 threads is served to
    a later run with --threads 1 and runs its kernels with 2 (on a busy
    machine 400x slower). An explicit `cpp.threads` is in the key
    (pytorch/pytorch#160812, fixed after 2.11).
    """
    import torch._inductor.config as inductor_config

    inductor_config.cpp.threads = torch.get_num_threads()


def compile_cold():
    """Compiles from scratch in every run.

    Inductor's on-disk caches (FX graph, AOTAutograd, autotuning) serve code
    compiled by earlier processes; on torch 2.11 a cached CPU graph from a run
    with other settings ran nano's forward 20-40x slower than a fresh compile
    (measured 2026-11-23: 13 ms fresh against 130-550 ms from the cache), and
    a cached compile would also make compile_ms meaningless.
    """
    import torch._inductor.config as inductor_config

    inductor_config.force_disable_caches = True


def compile_function(function, **options):
    pin_inductor_threads()
    compile_cold()
    return torch.compile(function, **options)
