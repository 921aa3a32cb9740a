import torch


def get_model():
    return torch.nn.Linear(2, 2)
