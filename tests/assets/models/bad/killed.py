"""Dies from a signal in step 1, after step 0 completed (like the OOM killer)."""

import os
import signal

import torch


class Dies(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x, step):
        if step == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return self.linear(x)


def get_model():
    return Dies()


def get_inputs(step):
    return (torch.ones(1, 2), step)
