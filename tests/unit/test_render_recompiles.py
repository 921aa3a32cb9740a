"""The recompile block: the user's line, the library line, also, grouped patterns."""

import dataclasses
import io

from rich.console import Console

from xlacli.analysis.recompiles.phases import loop_step_count
from xlacli.render.recompiles import event_block, group_block, grouped, timeline
from xlacli.report.run_report import CompileCause, CompileEvent, RunReport, StepRecord


def text(renderable) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=160, color_system=None, force_terminal=False).print(renderable)
    return buffer.getvalue()


def event(step, category, location="/nowhere/train.py:36", **cause) -> CompileEvent:
    return CompileEvent(
        step=step,
        graph_hash=f"h{step}-{category}",
        compile_time_s=0.5,
        steady_state=True,
        cause=CompileCause(
            category, location, cause.pop("library", None), cause.pop("detail", "d"), **cause
        ),
    )


def test_block_shows_the_library_line_inside_and_the_other_reading():
    also = CompileCause("graph_structure", "/nowhere/train.py:42", None, "1 op added: aten::tanh")
    shown = text(
        event_block(
            event(
                3,
                "data_dependent_shape",
                library="/nowhere/lib/sgd.py:375",
                hint="fix it",
                also=(also,),
            )
        )
    )
    assert "step 3  data_dependent_shape  /nowhere/train.py:36" in shown
    assert "(inside /nowhere/lib/sgd.py:375)" in shown
    assert "fix: fix it" in shown
    assert "also: graph_structure at /nowhere/train.py:42: 1 op added: aten::tanh" in shown


def test_an_unsynced_loop_is_one_block_told_by_its_last_compile():
    loop = [event(0, "unsynced_loop", detail=f"{n} reads") for n in (2, 3, 4)]
    groups = grouped([event(0, "host_sync"), *loop, event(0, "first_compile")])
    assert [len(group) for group in groups] == [1, 3, 1]
    shown = text(group_block(groups[1]))
    assert "unsynced_loop ×3" in shown and "4 reads" in shown and "+1.50 s compile" in shown


def run_report(phases, events) -> RunReport:
    records = tuple(
        StepRecord(step, 0.1, int(any(e.step == step for e in events)), 1, (), phase=phase)
        for step, phase in enumerate(phases)
    )
    return RunReport(
        model="/nowhere/train.py", device="CPU", steps=loop_step_count(phases),
        steps_requested=loop_step_count(phases), train=True, run_dir="/nowhere/run",
        compilations=len(events), executions=len(phases), total_compile_time_s=1.0,
        total_execute_time_s=1.0, graphs=(), step_records=records, events=tuple(events),
    )  # fmt: skip


def test_the_timeline_ends_the_warm_up_after_the_loops_own_iterations():
    """Three setup syncs, then the loop: its warm-up ends at its third iteration
    (step 5), not at the run's second sync; a new phase is not an alarm."""
    events = [
        dataclasses.replace(event(0, "first_compile"), steady_state=False, phase="setup"),
        dataclasses.replace(event(3, "first_compile"), steady_state=False),
        dataclasses.replace(event(6, "first_compile"), steady_state=False, phase="new_phase"),
    ]
    shown = text(timeline(run_report(["setup"] * 3 + ["loop"] * 5, events)))
    assert shown.startswith("Steps: ●··┊●·│·◆·")
    assert "┊ loop starts after 3 setup syncs" in shown and "│ end of warm-up (2 steps)" in shown
    assert "◆ new phase or periodic graph" in shown
    model = text(timeline(run_report(["loop"] * 4, events[1:2])))
    assert model.startswith("Steps: ··│·●") and "┊" not in model and "◆" not in model


def test_a_long_loop_shows_its_ends_and_how_many_steps_between():
    """10,000 cached steps are one line, not 125: the first and last few and a count;
    a recompile inside keeps its place, the warm-up edge its own."""
    events = [
        dataclasses.replace(event(0, "first_compile"), steady_state=False),
        event(5_000, "input_shape"),
    ]
    shown = text(timeline(run_report(["loop"] * 10_000, events))).splitlines()[0]
    assert shown.startswith("Steps: ●·│········…4,988 more…··●········…4,989 more…··   ")
    assert len(shown) < 200
    few = text(timeline(run_report(["loop"] * 20, events[:1])))
    assert few.startswith("Steps: ●·│" + "·" * 18 + "   ")  # short runs stay whole


def test_graphs_per_step_fold_long_repeats():
    from xlacli.render.recompiles import _counts_folded

    assert _counts_folded((1, 2, *([1] * 9_990), 2, 2)) == "1 2 1×9,990 2 2"
    assert _counts_folded((2, 2, 2)) == "2 2 2"  # what a short run showed before


def test_a_read_every_ten_steps_shows_once_with_its_count():
    from xlacli.render.recompiles import _counts_folded

    every_tenth = (1, 2, *((1,) * 9 + (2,)) * 29, *(1,) * 8)
    assert _counts_folded(every_tenth) == "1 (2 1×9)×29 2 1×8"
