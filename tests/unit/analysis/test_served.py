"""Graphs a cache served are judged as the compiles they stand for (issue 34)."""

from __future__ import annotations

from typing import Any

from xlacli.analysis.recompiles.compiled import CompiledGraph, ExplainContext
from xlacli.analysis.recompiles.served import judge_served
from xlacli.parse.frames import Frame
from xlacli.report.run_report import CompileCause, CompileEvent

SYNC = (Frame("main", "/p/train.py", 14),)
EVAL = (Frame("evaluate", "/p/train.py", 30),)


def _graph(step: int, graph_hash: str, batch: int, frames=SYNC, runs: int = 0) -> CompiledGraph:
    return CompiledGraph(
        index=step,
        step=step,
        graph_hash=graph_hash,
        compile_time_s=0.0,
        frames=frames,
        value_read=False,
        ir=None,
        input_signature=(f"input /p/train.py:13 f32[{batch},16]",),
        iteration=step,
        site_runs=runs,
        site=f"{frames[0].file}:{frames[0].line}",
    )


def _first(graph: CompiledGraph) -> CompileEvent:
    cause = CompileCause("first_compile", graph.site, None, "the first graph at this sync site")
    return CompileEvent(graph.step, graph.graph_hash, 0.1, False, cause)


def _context(site_graphs: Any = None, new_phases: bool = True) -> ExplainContext:
    return ExplainContext(2, None, new_phases=new_phases, site_graphs=site_graphs or {})  # type: ignore[arg-type]


def test_a_warm_site_running_a_served_graph_is_a_steady_state_change():
    compiled = [_graph(0, "a", 10)]
    served = [_graph(3, "b", 4, runs=3)]
    [judged] = judge_served(compiled, [_first(compiled[0])], served, _context())
    assert judged.steady_state and judged.phase == "loop"
    assert judged.detail.startswith("input train.py:13 shape f32[10,16] -> f32[4,16]")
    assert "a cache served it" in judged.detail


def test_every_graph_served_in_the_warm_up_is_no_change():
    # An earlier test compiled everything: the warm-up's graphs are served too.
    served = [_graph(0, "a", 10), _graph(3, "b", 4, runs=3)]
    first, later = judge_served([], [], served, _context())
    assert not first.steady_state
    assert later.steady_state


def test_a_new_site_after_the_warm_up_is_a_new_phase_not_a_change():
    compiled = [_graph(0, "a", 10)]
    served = [_graph(4, "e", 10, frames=EVAL)]
    [judged] = judge_served(compiled, [_first(compiled[0])], served, _context())
    assert judged.phase == "new_phase" and not judged.steady_state


def test_a_served_graph_that_recurs_between_the_sites_others_is_periodic():
    compiled = [_graph(0, "a", 10)]
    served = [_graph(3, "log", 10, runs=3)]
    runs = {SYNC: ((0, "a"), (1, "a"), (2, "a"), (3, "log"), (4, "a"), (5, "log"))}
    [judged] = judge_served(compiled, [_first(compiled[0])], served, _context(runs))
    assert judged.phase == "periodic" and not judged.steady_state


def test_nothing_served_judges_nothing():
    assert judge_served([_graph(0, "a", 10)], [], [], _context()) == ()
