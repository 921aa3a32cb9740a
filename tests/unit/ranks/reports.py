"""Hand-built rank reports for the merge and divergence tests."""

from __future__ import annotations

from xlacli.report.run_report import CompileCause, CompileEvent, GraphRecord, RunReport, StepRecord


def graph(graph_hash: str, site: str, trigger: str = "user_sync") -> GraphRecord:
    return GraphRecord(
        graph_hash, site, trigger, (), 10, 10, 8, 1, 0, 0, 0, 1, 0.1, 1, 0.001, 0.001, 0
    )


def compile_event(step: int, graph_hash: str, category: str, location: str, detail: str = ""):
    cause = CompileCause(category, location, None, detail)
    return CompileEvent(step, graph_hash, 0.1, step >= 2, cause)


def rank_report(
    steps: list[tuple[str, ...]],
    graphs: list[GraphRecord],
    events: list[CompileEvent],
    inputs: dict[int, tuple[str, ...]] | None = None,
    run_dir: str = "/r",
) -> RunReport:
    records = tuple(
        StepRecord(i, 0.01, 0, len(g), (inputs or {}).get(i, ("input 0 f32[16,8]",)), g)
        for i, g in enumerate(steps)
    )
    return RunReport(
        "train.py",
        "CPU",
        len(steps),
        len(steps),
        False,
        run_dir,
        len(events),
        sum(len(g) for g in steps),
        0.1,
        0.1,
        tuple(graphs),
        step_records=records,
        events=tuple(events),
    )


STEP = graph("aaaa1111", "/w/train.py:32")
FIRST = compile_event(0, "aaaa1111", "first_compile", "/w/train.py:32")
