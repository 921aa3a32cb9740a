import torch


def get_inputs(step):
    return torch.randn(2, 4)
