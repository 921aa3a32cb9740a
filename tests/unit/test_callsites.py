"""The user's line behind each input tensor, recorded while get_inputs runs."""

import inspect

import torch

from xlacli.child.callsites import InputOrigins
from xlacli.child.steps import _named_leaves

DATA = torch.arange(40.0).reshape(20, 2)


def get_inputs():
    batch = DATA[16:24]  # the short last batch
    mask = torch.ones(3)
    mask.mul_(2)  # in place: the tensor keeps the line that made it
    return batch, {"mask": mask, "scale": 2}


def line_of(fragment: str) -> str:
    lines, start = inspect.getsourcelines(get_inputs)
    number = start + next(i for i, text in enumerate(lines) if fragment in text)
    return f"{__file__}:{number}"


def test_each_tensor_points_at_the_line_that_made_it():
    batch, origins = InputOrigins(enabled=True).call(
        get_inputs, lambda b: _named_leaves(b, top=True)
    )
    assert batch[0].shape == (4, 2)
    assert origins == {
        "input 0": line_of("DATA[16:24]"),
        "input 1['mask']": line_of("torch.ones(3)"),
    }


def test_disabled_records_nothing():
    batch, origins = InputOrigins(enabled=False).call(
        get_inputs, lambda b: _named_leaves(b, top=True)
    )
    assert origins == {} and batch[1]["scale"] == 2
