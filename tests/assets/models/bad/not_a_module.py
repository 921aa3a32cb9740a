import torch


def get_model():
    return {"weight": torch.ones(2, 2)}


def get_inputs(step):
    return torch.ones(1, 2)
