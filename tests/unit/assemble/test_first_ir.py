"""The IR blocks xlacli's child writes are named by the graph hash of their compile."""

from __future__ import annotations

from xlacli.assemble.organise import _first_ir_by_hash
from xlacli.parse.debug_log import AnalysisEvent
from xlacli.parse.ir_dump import IrGraph


def _compile(graph_hash: str) -> AnalysisEvent:
    return AnalysisEvent("compile", "user torch_xla.sync", graph_hash, 1, 1, ())


def _ir(compile_index: int | None, graph_hash: str | None = None) -> IrGraph:
    return IrGraph("ScheduleSyncTensorsGraph", (), (), graph_hash, "IR {\n}", (), compile_index)


def test_a_block_takes_the_hash_of_the_compile_it_names():
    compiles = [_compile("aaa"), _compile("bbb")]
    by_hash = _first_ir_by_hash([_ir(1), _ir(0)], compiles)
    assert {name: graph.compile_index for name, graph in by_hash.items()} == {"aaa": 0, "bbb": 1}
    assert by_hash["bbb"].graph_hash == "bbb"


def test_a_block_past_the_compiles_is_left_out():
    assert _first_ir_by_hash([_ir(5)], [_compile("aaa")]) == {}


def test_torch_xla_blocks_keep_their_own_hash_first_one_wins():
    first, second = _ir(None, "aaa"), _ir(None, "aaa")
    assert _first_ir_by_hash([first, second], [])["aaa"] is first
