"""Runs out of memory moving its weights to the device: cheap and deterministic.

The 1 GiB weight is allocated but never touched (no RAM used); get_model()
then caps the address space 256 MiB above what the process has mapped, so
the copy to the XLA device cannot be allocated, on any machine.
"""

import resource

import torch

CAP_BYTES = 256 * 1024 * 1024


def _cap_address_space(extra_bytes: int) -> None:
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (mapped + extra_bytes, resource.RLIM_INFINITY))


class Big(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(256, 1024, 1024))

    def forward(self, x):
        return x * self.weight[0, 0, 0]


def get_model():
    model = Big()
    _cap_address_space(CAP_BYTES)
    return model


def get_inputs(step):
    return torch.ones(2)
