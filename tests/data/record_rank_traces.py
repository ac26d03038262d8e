"""Records a folder of rank traces, as users' jobs write them: 2 gloo ranks
under torchrun, the reference LM trained a few steps with
stepscope.distributed's NaiveDDP (all-reduces after backward) or DDP (each
started from its gradient's hook, during backward), torch.profiler's
tensorboard_trace_handler writing one trace per rank (tst_trace_cli).

    python -m torch.distributed.run --standalone --nproc-per-node 2 \\
        record_rank_traces.py naive|overlap OUT_DIR
"""
import gc
import sys

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

from stepscope.distributed import DDP, NaiveDDP
from stepscope.distributed.gate import language_model_loss, rank_share
from stepscope.model import TransformerLM


def main():
    strategy, out_dir = sys.argv[1], sys.argv[2]
    dist.init_process_group("gloo")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = TransformerLM(1000, 64, 256, layers=2, heads=4, max_context=32)
    wrapped = {"naive": NaiveDDP, "overlap": DDP}[strategy](model)
    optimizer = torch.optim.SGD(wrapped.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(1)
    handler = tensorboard_trace_handler(out_dir, worker_name=f"rank{dist.get_rank()}",
                                        use_gzip=True)
    with profile(activities=[ProfilerActivity.CPU], on_trace_ready=handler,
                 schedule=schedule(wait=0, warmup=1, active=3)) as profiler:
        for _ in range(4):
            tokens = torch.randint(0, 1000, (8, 33), generator=generator)
            optimizer.zero_grad()
            language_model_loss(wrapped, rank_share(tokens)).backward()
            wrapped.finish_gradient_synchronization()
            optimizer.step()
            profiler.step()
    del wrapped
    gc.collect()  # the wrapper's hooks hold the process group: free them first
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
