"""One test's compiles: counted always, explained when the switches are on.

The test's steps are recorded into a work folder of the session's; a
report is built, as ``xlacli compile`` builds it (``flows/session.py``'s
``report_from_run``), from a copy of the dumps written since the test
started. Work folders go with the session; a failing budget's run folder is
moved to ``.xlacli/runs/`` first and named in the message.
"""

from __future__ import annotations

import dataclasses
import itertools
import shutil
import tempfile
from pathlib import Path

from xlacli.pytest_plugin.budget import Budget, Overrun, check_budget, overrun_message
from xlacli.pytest_plugin.dumps import SessionDumps
from xlacli.report.run_report import RunReport


class TestMeasure:
    """The compiles of one running test."""

    __test__ = False  # not a test class, whatever pytest collects

    def __init__(self, test_file: Path, dumps: SessionDumps | None, too_late: str | None):
        from xlacli.child.in_process import TestSteps

        self.test_file = test_file
        self.dumps = dumps
        self.too_late = too_late  # why there is no explanation (torch_xla came first)
        self.work = Path(tempfile.mkdtemp(prefix="test-", dir=dumps.paths.root if dumps else None))
        self._reports = itertools.count()
        if dumps is not None:
            dumps.clear()  # what earlier tests left is not this one's
        self.steps = TestSteps(self.work / "events.jsonl")
        self.steps.start()

    @property
    def compiles(self) -> int:
        """Compilations since the test started."""
        return self.steps.compiles

    def report(self, warmup: int, *, final: bool = False) -> RunReport | None:
        """The test's report so far (None when torch_xla was imported too early).

        ``final``: the test is over; its dumps are moved, not copied.
        """
        from xlacli.capture.discover import ModelTarget
        from xlacli.flows.session import report_from_run
        from xlacli.run_folder.events import read_events
        from xlacli.run_folder.request import CaptureRequest, RunPaths

        if final:
            self.steps.stop()
        else:
            self.steps.flush()
        if self.dumps is None:
            return None
        run = RunPaths(self.work / f"run-{next(self._reports)}")
        self.dumps.take(run, move=final)
        shutil.copyfile(self.work / "events.jsonl", run.events)
        request = CaptureRequest(
            model_path=str(self.test_file),
            model_entry=None,
            steps=0,
            target_kind="script",
            run_to_end=True,
        )
        request.save(run.request)
        target = ModelTarget(self.test_file, kind="script")
        _, report, _ = report_from_run(run, request, read_events(run.events), target, warmup, None)
        return report

    @property
    def steps_done(self) -> int:
        """Steps the test has ended so far (the next step's number)."""
        return self.steps.steps_done

    def check(
        self,
        budget: Budget,
        runs_dir: Path,
        *,
        first: int = 0,
        first_step: int = 0,
        final: bool = False,
    ) -> str | None:
        """The failure message when the graphs the test made since its ``first``-th
        compile (and ``first_step``-th step) are over ``budget``; None within it.

        Graphs a cache served count as the compiles they stand for, so the
        report is built even for a count budget (unless torch_xla came first:
        then only compiles can be counted)."""
        count = self.compiles - first
        report = self.report(budget.warmup, final=final)
        events = report.events[first : first + count] if report is not None else ()
        served = (
            tuple(g for g in report.served_graphs if g.step is None or g.step >= first_step)
            if report is not None
            else ()
        )
        overrun = check_budget(budget, count, events, served)
        if overrun is None:
            return None
        return overrun_message(overrun, report, self._notes(overrun, report, runs_dir))

    def _notes(self, overrun: Overrun, report: RunReport | None, runs_dir: Path) -> list[str]:
        if report is None:
            return ["", f"No explanation: {self.too_late}"]
        kept = keep_run(Path(report.run_dir), runs_dir, self.test_file.stem)
        notes = [""]
        for problem in report.problems:  # an analysis that failed: its section is missing
            notes.append(
                f"xlacli could not build its {problem.processor!r} section "
                f"({problem.exception}: {problem.message}); a bug in xlacli, please report it"
            )
        return [*notes, f"The dumps (IR, HLO, report.json): {kept}", f"Next: xlacli report {kept}"]

    def close(self) -> None:
        """Unhook (the test raised, or it is over) and drop the work folder."""
        self.steps.stop()
        shutil.rmtree(self.work, ignore_errors=True)


def keep_run(folder: Path, runs_dir: Path, stem: str) -> Path:
    """Move a run folder under ``runs_dir`` with a name of its own (xdist
    workers share it) and point its report at the new place."""
    from xlacli.report.run_report import load_report, save_report

    runs_dir.mkdir(parents=True, exist_ok=True)
    kept = Path(tempfile.mkdtemp(prefix=f"{stem}-", dir=runs_dir))
    kept.rmdir()
    shutil.move(str(folder), kept)
    report = load_report(kept)
    save_report(dataclasses.replace(report, run_dir=str(kept)), kept)
    return kept
