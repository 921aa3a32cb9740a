import torch


def get_model():
    return torch.nn.Linear(4, 4)


def get_inputs(step):
    return 3, 4
