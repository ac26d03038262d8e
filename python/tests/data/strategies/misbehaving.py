"""Strategies that fail part-way through a distributed run, as a rank can:
one rank of ExitingDDP leaves without a word at its second timed step (the
gate builds the first instance, the run the second)."""
import os

import torch.distributed as dist

from students import AveragingDDP


class ExitingDDP(AveragingDDP):
    instances = 0

    def __init__(self, module):
        super().__init__(module)
        ExitingDDP.instances += 1
        self.timed = ExitingDDP.instances == 2
        self.calls = 0

    def finish_gradient_synchronization(self):
        self.calls += 1
        if self.timed and self.calls == 2 and dist.get_rank() == 1:
            os._exit(3)  # as a crash or the OOM killer would: no exception, no word
        super().finish_gradient_synchronization()
