"""The child's once-per-graph IR writer, in this process on XLA:CPU: a graph
synced many times is written once; a new shape is a new block."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("PJRT_DEVICE", "CPU")
torch = pytest.importorskip("torch")
torch_xla = pytest.importorskip("torch_xla")

from xlacli.child.graph_ir import PENDING_TEXTS, GraphIrWriter  # noqa: E402
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
    assert not (tmp_path / PENDING_TEXTS).exists()  # the forked copies' texts, read and gone


def test_a_value_read_writes_the_graph_it_compiles(tmp_path):
    """A read (``.item()``, ``bool()``) compiles its tensor's graph inside native
    code: the value-read wrapper hands the writer its start and end."""
    import torch_xla.debug.metrics as met

    from xlacli.child.value_reads import ValueReadSites

    path = tmp_path / "ir-dump.txt.0"
    writer = GraphIrWriter(path)
    reads = ValueReadSites()
    writer.install()
    reads.install()
    reads.graph_ir = writer
    compiles_before = met.counter_value("UncachedCompile") or 0
    try:
        device = torch_xla.device()
        values = []
        for rows in (4, 4, 7):
            x = torch.full((rows, 3), 0.5, device=device)
            values.append((x.tanh() * 3).sum().item())  # the read compiles (new shapes only)
        assert bool((torch.ones(2, device=device) > 0).all())
    finally:
        reads.close()
        writer.uninstall()
    blocks = parse_ir_dump(path.read_text())
    compiled = (met.counter_value("UncachedCompile") or 0) - compiles_before
    assert values[0] == values[1] and len(values) == 3
    assert compiled >= 3 and len(blocks) == compiled
    assert [b.compile_index for b in blocks] == list(
        range(compiles_before, compiles_before + compiled)
    )
    tanh_blocks = [b for b in blocks if any(n.op == "aten::tanh" for n in b.nodes)]
    assert len(tanh_blocks) == 2  # rows 4 once, rows 7
    assert "f32[7,3]" in tanh_blocks[1].ir_text
    here = os.path.basename(__file__)
    assert all(any(here in f.file for f in b.frames) for b in blocks)


_EAGER_PROGRAM = """
import sys, torch, torch_xla, torch_xla.experimental
from pathlib import Path
from xlacli.child.graph_ir import GraphIrWriter
folder = Path(sys.argv[1])
native = {"XLA_SAVE_TENSORS_FILE": str(folder / "ir-dump.txt"), "XLA_SAVE_TENSORS_FMT": "text"}
writer = GraphIrWriter(folder / "ir-dump.txt.0", native)
writer.install()
device = torch_xla.device()
if sys.argv[2] == "lazy-first":
    kept = torch.ones(2, device=device) * 2
    torch_xla.sync()
torch_xla.experimental.eager_mode(True)
for rows in (2, 3):
    y = torch.ones(rows, 4, device=device).relu() + 1
torch_xla.sync()
writer.uninstall()
"""


@pytest.mark.parametrize("order", ["eager-first", "lazy-first"])
def test_eager_mode_before_the_first_graph_hands_over_to_torch_xlas_dump(tmp_path, order):
    """Eager mode's op graphs compile inside native code, and only torch_xla's
    per-sync dump lists them: switched on before any graph ran, the writer sets
    that dump's variables (torch_xla reads them at its first graph) and writes
    nothing; after a graph ran, it is too late, and the writer stays."""
    import subprocess
    import sys

    env = {**os.environ, "PJRT_DEVICE": "CPU"}
    env.pop("XLA_SAVE_TENSORS_FILE", None)
    subprocess.run(
        [sys.executable, "-c", _EAGER_PROGRAM, str(tmp_path), order],
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    blocks = parse_ir_dump((tmp_path / "ir-dump.txt.0").read_text())
    if order == "eager-first":
        # torch_xla's blocks: one per graph run (each op of each shape), named by hash
        assert len(blocks) >= 4
        assert all(b.compile_index is None and b.graph_hash for b in blocks)
        assert any(n.op == "aten::relu" for b in blocks for n in b.nodes)
    else:
        # xlacli's block of the lazy graph only: eager mode's op graphs are not listed
        assert len(blocks) == 1 and blocks[0].compile_index is not None
        assert not any(n.op == "aten::relu" for n in blocks[0].nodes)


@pytest.mark.parametrize(
    ("source", "hands_over"),
    [
        ("torch_xla.experimental.eager_mode(True)\n", True),
        ("with eager_mode_context(True):\n    evaluate()\n", True),
        ("torch_xla._XLAC._set_use_eager_mode(True)\n", True),
        ("torch_xla.sync()  # no eager mode here\n", False),
    ],
)
def test_a_script_that_switches_eager_mode_hands_over_before_it_runs(
    tmp_path, monkeypatch, source, hands_over
):
    """Eager mode switched on after graphs ran is too late for torch_xla's dump
    (read at the first graph): a script whose text switches it hands over first."""
    for name in ("XLA_SAVE_TENSORS_FILE", "XLA_SAVE_TENSORS_FMT"):
        monkeypatch.setenv(name, "unset")  # restored after the test
    program = tmp_path / "train.py"
    program.write_text(source)
    native = {
        "XLA_SAVE_TENSORS_FILE": str(tmp_path / "ir-dump.txt"),
        "XLA_SAVE_TENSORS_FMT": "text",
    }
    GraphIrWriter(tmp_path / "ir-dump.txt.0", native).hand_over_if_the_program_uses_eager_mode(
        program
    )
    assert (os.environ["XLA_SAVE_TENSORS_FILE"] == native["XLA_SAVE_TENSORS_FILE"]) is hands_over
