"""The optimizer's per-parameter update in a graph: its ops, what repeats, one layer's."""

from __future__ import annotations

from tests.unit.advice.graphs import block_ops, update_ops
from xlacli.analysis.advice.optimizer_update import NO_UPDATE, optimizer_update


def test_the_update_is_the_ops_under_torch_optim() -> None:
    ops = block_ops() + update_ops(3)
    update = optimizer_update(ops)
    assert update.instructions == 3 * 5  # its constants counted, not the layer's ops
    assert update.computations == 3 * 4
    assert update.repeated == 2 * 4  # each computation's copies after the first
    assert optimizer_update(block_ops()) == NO_UPDATE


def test_one_layers_update_is_what_comes_in_multiples_of_the_layers() -> None:
    """8 layers of 2 parameters of one shape and 1 of another, and one more
    parameter of the first shape outside the layers (an embedding's bias)."""
    ops = update_ops(8 * 2 + 1) + update_ops(8, shape="11[2,16]")
    update = optimizer_update(ops)
    assert update.per_layer(8) == 3 * 4  # the outside parameter's update left out
    assert update.per_layer(0) == 0
    assert update.repeated == (17 - 1) * 4 + (8 - 1) * 4
