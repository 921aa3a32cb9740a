"""The TorchBench convention: a factory returning (model, inputs)."""

import torch


def make_pair():
    return torch.nn.Linear(4, 2), (torch.ones(3, 4),)


def not_a_pair():
    return torch.nn.Linear(4, 2)
