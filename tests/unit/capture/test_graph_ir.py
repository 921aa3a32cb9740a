"""The child's once-per-graph IR writer, in this process on XLA:CPU: a graph
synced many times is written once; a new shape is a new block."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("PJRT_DEVICE", "CPU")
torch = pytest.importorskip("torch")
torch_xla = pytest.importorskip("torch_xla")

from xlacli.child.graph_ir import GraphIrWriter  # noqa: E402
from xlacli.parse.ir_dump import parse_ir_dump  # noqa: E402


def test_each_compiled_graph_is_written_once(tmp_path):
    import torch_xla.debug.metrics as met

    path = tmp_path / "ir-dump.txt.0"
    writer = GraphIrWriter(path)
    writer.install()
    compiles_before = met.counter_value("UncachedCompile") or 0
    try:
        device = torch_xla.device()
        weight = torch.ones(3, 3, device=device)
        for rows in (2, 2, 2, 5, 2):
            x = torch.full((rows, 3), 2.0).to(device)
            result = (x @ weight).relu() + 1
            torch_xla.sync()
        del result
    finally:
        writer.uninstall()
    blocks = parse_ir_dump(path.read_text())
    compiled = (met.counter_value("UncachedCompile") or 0) - compiles_before
    assert len(blocks) == compiled == 3  # the weights' upload, rows 2, rows 5
    assert [b.compile_index for b in blocks] == list(range(compiles_before, compiles_before + 3))
    assert "f32[5,3]" in blocks[2].ir_text and "f32[2,3]" in blocks[1].ir_text
    assert any(node.op == "aten::relu" for node in blocks[2].nodes)
    assert blocks[2].frames and blocks[2].frames[0].function == "sync"
