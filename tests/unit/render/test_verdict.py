"""The verdict line every text report opens with."""

from __future__ import annotations

from xlacli.render.verdict import run_verdict
from xlacli.report.run_report import CompileCause, CompileEvent, ErrorRecord, RunReport, StepRecord


def _report(steps: int, events: tuple[CompileEvent, ...] = (), **fields) -> RunReport:
    return RunReport(
        model="/m/model.py",
        device="CPU",
        steps=steps,
        steps_requested=steps,
        train=False,
        run_dir="/r",
        compilations=len(events),
        executions=steps,
        total_compile_time_s=0.1,
        total_execute_time_s=0.01,
        graphs=(),
        step_records=tuple(StepRecord(i, 0.1, 0, 1, ()) for i in range(steps)),
        events=events,
        **fields,
    )


def _event(step: int, steady: bool, category: str = "input_shape") -> CompileEvent:
    cause = CompileCause(category, "/m/model.py:36", None, "input 0 shape s64[4,16] -> s64[4,24]")
    return CompileEvent(step, "abc", 0.1, steady, cause)


def test_a_steady_state_recompile_is_named_with_its_line_and_change():
    verdict = run_verdict(_report(4, (_event(0, False), _event(2, True))))
    assert verdict.startswith("1 steady-state recompile: ")
    assert verdict.endswith("model.py:36, input 0 shape s64[4,16] -> s64[4,24]")


def test_several_say_which_is_shown():
    verdict = run_verdict(_report(5, (_event(2, True), _event(3, True))))
    assert verdict.startswith("2 steady-state recompiles: ") and "(first of 2)" in verdict


def test_no_recompile_counts_the_steady_state_steps():
    assert run_verdict(_report(3, (_event(0, False),))) == (
        "no recompile after warm-up (1 steady-state step)"
    )


def test_all_warm_up_says_how_to_see_more():
    verdict = run_verdict(_report(2, (_event(0, False),)))
    assert "all 2 steps were warm-up" in verdict and "--steps 4" in verdict


def test_a_failed_run_and_a_run_without_steps():
    failed = _report(1, error=ErrorRecord("model", "step 1 raised ValueError: bad\nmore", 3))
    assert run_verdict(failed) == "failed (exit 3): step 1 raised ValueError: bad"
    assert run_verdict(_report(0)).startswith("no step ran")
