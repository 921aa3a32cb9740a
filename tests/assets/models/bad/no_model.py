import torch


def build():
    return torch.nn.Linear(2, 2)


def make_batch(step):
    return torch.ones(1, 2)
