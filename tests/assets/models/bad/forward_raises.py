import torch
from torch import nn


class Mismatched(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)

    def forward(self, x):
        return self.linear(x)  # x has 4 features: a shape error


def get_model():
    return Mismatched()


def get_inputs(step):
    return torch.ones(2, 4)
