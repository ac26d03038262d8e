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


def compile_function(function, **options):
    pin_inductor_threads()
    return torch.compile(function, **options)
