import torch


def get_model():
    return torch.nn.Linear(2, 2)


def get_inputs(step):
    return load_batch(step)


def load_batch(step):
    raise FileNotFoundError(f"batch-{step}.pt")
