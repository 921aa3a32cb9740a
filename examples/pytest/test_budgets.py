"""Compile budgets in a test suite: ``pytest examples/pytest`` (with xlacli installed).

The layer under test is a tiny classifier; the budgets say what its users
rely on: a fixed batch compiles once, a short last batch must not recompile
the training step, and an ``.item()`` in the loop must not add graphs.
``test_short_last_batch`` fails on purpose, with xlacli's explanation.
"""

from __future__ import annotations

import pytest
import torch
import torch_xla


@pytest.fixture(scope="module")
def model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).to(
        torch_xla.device()
    )


def predict(model: torch.nn.Module, batch: torch.Tensor) -> torch.Tensor:
    logits = model(batch.to(torch_xla.device()))
    torch_xla.sync()
    return logits


@pytest.mark.xla_compiles(max=1)
def test_fixed_batch_compiles_once(model: torch.nn.Module) -> None:
    for _ in range(3):
        predict(model, torch.randn(8, 16))


@pytest.mark.xla_compiles(steady=0, warmup=1)
def test_short_last_batch(model: torch.nn.Module) -> None:
    data = torch.randn(30, 16)
    for start in range(0, 30, 12):  # batches of 12, 12 and a short 6
        predict(model, data[start : start + 12])


def test_budget_around_the_loop(model: torch.nn.Module, xla_compiles) -> None:
    predict(model, torch.randn(5, 16))  # the first compile, outside the budget
    with xla_compiles.budget(0):
        for _ in range(3):
            predict(model, torch.randn(5, 16))
    assert xla_compiles.count == 1
    assert [event.cause.category for event in xla_compiles.events] == ["first_compile"]
