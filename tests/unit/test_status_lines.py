"""The status lines a CI log gets instead of a progress bar: one per phase, and a
last line saying how many steps ran even when the run was shorter than the
interval between step lines."""

from __future__ import annotations

import pytest

from xlacli.flows import session
from xlacli.run_folder.events import ChildLog, StartEvent
from xlacli.run_folder.step_events import step_event


@pytest.fixture()
def printed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.setenv("TERM", "dumb")
    return capsys


def _step(compiles: int) -> dict:
    return step_event({"event": "step", "counters": {"UncachedCompile": compiles}})


def test_a_short_run_ends_on_its_step_count(printed) -> None:
    log = ChildLog()
    with session._StepProgress("Compiling mlp.py", 3) as progress:
        progress.update(log)  # importing torch_xla
        log.start = StartEvent()
        progress.update(log)  # loading the model
        log.setup = step_event({"event": "setup"})
        for _ in range(3):
            log.steps.append(_step(1 if not log.steps else 0))
            progress.update(log)
    lines = [line for line in printed.readouterr().err.splitlines() if line.strip()]
    assert lines[0] == "xlacli: Compiling mlp.py: importing torch_xla"
    assert lines[1] == "xlacli: Compiling mlp.py: loading the model"
    assert lines[-1] == "xlacli: Compiling mlp.py: 3 of 3 steps done, 1 compilation"
    assert len(lines) == len(set(lines))  # no line printed twice


def test_a_line_is_not_repeated_when_nothing_changed(printed, monkeypatch) -> None:
    """A long trace write after the last step: later events repeat no line."""
    log = ChildLog(start=StartEvent(), setup=step_event({"event": "setup"}), steps=[_step(1)])
    clock = iter(range(0, 1000, 10))  # every update 10 s after the one before
    monkeypatch.setattr(session.time, "monotonic", lambda: float(next(clock)))
    with session._StepProgress("Profiling mlp.py", 1) as progress:
        for _ in range(4):
            progress.update(log)
    lines = [line for line in printed.readouterr().err.splitlines() if line.strip()]
    assert lines == ["xlacli: Profiling mlp.py: 1 of 1 steps done, 1 compilation"]
