"""One capture, start to report: the flow ``compile``, ``check`` and
``profile`` share. Capture once, then render (or re-render) the report."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from xlacli.assemble.graph_files import HloCache
from xlacli.assemble.pipeline import build_report
from xlacli.assemble.read import RawRun, read_raw_run
from xlacli.assemble.source_snippets import save_snippets
from xlacli.capture.discover import ModelTarget, check_model_file, find_module_file, parse_target
from xlacli.capture.outcome import Interrupted, error_record, outcome_error
from xlacli.capture.runner import check_torch_xla_installed, prepare_run_dir, run_child
from xlacli.capture.signals import StopSignals
from xlacli.config import ProjectConfig, model_argument
from xlacli.errors import IncompleteReport, UsageError, XlacliError
from xlacli.flows.modes import check_mode
from xlacli.paths import display_path
from xlacli.render.console import print_message, stderr_console
from xlacli.report.run import RunReport, save_report
from xlacli.run.events import ChildLog
from xlacli.run.request import CaptureRequest, RunPaths
from xlacli.words import counted

DEFAULT_MODEL_STEPS = 2


def configured_target(
    model: str | None,
    module: str | None,
    args: Sequence[str],
    config: ProjectConfig,
    action: str,
) -> ModelTarget:
    """The target named on the command line, else the one ``[tool.xlacli]``
    names (``model`` or ``module``, with its ``script_args``)."""
    if model is None and module is None:
        module = config.module
        args = args or config.script_args
        if module is None:
            model = model_argument(None, config, action)
    return resolve_target(model, module, args)


@dataclass(frozen=True)
class CaptureResult:
    """The saved report, and the error the run ended with (if any)."""

    report: RunReport
    paths: RunPaths
    error: XlacliError | None
    raw: RawRun
    hlo: HloCache | None = None  # the graphs' parsed HLO, for the profile summary


def resolve_target(
    model: str | None, module: str | None = None, args: Sequence[str] = ()
) -> ModelTarget:
    """Parse and check the target: a model file, a script, or ``-m MODULE``
    (no torch needed). Says on stderr when a file runs as a script.

    Raises:
        UsageError: no target, both a file and ``-m``, or a bad one.
    """
    if module is not None:
        if model is not None:
            raise UsageError(f"pass either a file ({model}) or -m {module}, not both")
        path = find_module_file(module, [os.getcwd(), *sys.path[1:]])
        return ModelTarget(path, kind="module", module=module, args=tuple(args))
    if model is None:
        raise UsageError("no model or script given", hint="pass PATH.py, or -m package.module")
    parsed = parse_target(model)
    target = check_model_file(ModelTarget(parsed.path, parsed.entry, args=tuple(args)))
    if target.is_script:
        print_message(
            f"{display_path(target.path)} defines neither get_model() nor model: "
            "running it as a script (its syncs are the steps)"
        )
    return target


def capture(
    target: ModelTarget,
    *,
    steps: int | None,
    train: bool = False,
    optimizer: str = "sgd",
    out: Path | None = None,
    force: bool = False,
    warmup: int = 0,
    explain_warmup: int = 2,
    ir_dump: bool = True,
    profile: bool = False,
    profile_logdir: Path | None = None,
    profile_session: str | None = None,
    label: str | None = None,
    devices: int | None = None,
    runs_dir: Path | None = None,
    max_trace_steps: int | None = None,
    mode: str = "lazy",
) -> CaptureResult:
    """Run the model in a child process and build, save and return its report.

    SIGINT and SIGTERM, from the child's start until the report is saved,
    stop the child and end in a partial report (see ``capture.signals``).
    """
    check_torch_xla_installed()
    check_mode(target, mode)
    paths = prepare_run_dir(out, target.path.stem, force=force, runs_dir=runs_dir)
    run_to_end = target.is_script and steps is None
    steps = steps if steps is not None else (0 if target.is_script else DEFAULT_MODEL_STEPS)
    request = CaptureRequest(
        model_path=str(target.path),
        model_entry=target.entry,
        steps=steps,
        train=train,
        optimizer=optimizer,
        warmup=warmup,
        ir_dump=ir_dump,
        # The trace goes where TensorBoard reads it: LOGDIR/plugins/profile/SESSION.
        profile_logdir=str(profile_logdir or paths.root / "tensorboard") if profile else None,
        profile_session=(profile_session or paths.root.name) if profile else None,
        wait_each_step=not profile,
        devices=devices,
        max_trace_steps=max_trace_steps if profile else None,
        mode=mode,
        target_kind=target.kind,
        module=target.module,
        script_args=list(target.args),
        run_to_end=run_to_end,
    )
    total = None if run_to_end else warmup + steps
    with StopSignals() as stop:
        with _StepProgress(label or f"Running {display_path(target.path)}", total) as progress:
            outcome = run_child(
                request,
                paths,
                on_progress=progress.update,
                stop=stop,
                on_stopping=lambda name: progress.stopping(name, tracing=profile),
            )
        error = outcome_error(outcome, paths, stop.name)
        raw, report, hlo = report_from_run(
            paths, request, outcome.log, target, explain_warmup, error
        )
    if error is None and stop.received is not None:  # came while the report was built
        error = Interrupted(f"interrupted after the run ({stop.name}); the report was kept")
    if error is None:
        error = incomplete_report_error(report)
    for warning in outcome.log.warnings:
        stderr_console().print(f"[yellow]warning:[/] {warning}")
    return CaptureResult(report, paths, error, raw, hlo)


def report_from_run(
    paths: RunPaths,
    request: CaptureRequest,
    log: ChildLog,
    target: ModelTarget,
    explain_warmup: int,
    error: XlacliError | None,
) -> tuple[RawRun, RunReport, HloCache]:
    """Parse a run folder's raw files into its report, and save it.

    Returns:
        The raw run, the report, and the graphs' parsed HLO (parsed once, read again
        by the profile summary).
    """
    raw = read_raw_run(paths, log)
    model_label = str(target)  # model.py:make, train.py, -m pkg.train
    hlo = HloCache(paths.root)
    report = build_report(
        raw, paths, request, model_label, error_record(error), warmup=explain_warmup, hlo=hlo
    )
    report = dataclasses.replace(report, options=run_options(request))
    save_report(report, paths.root)
    save_snippets(report, paths.root)  # the HTML page's source excerpts
    return raw, report, hlo


def incomplete_report_error(report: RunReport) -> IncompleteReport | None:
    """The error a run whose report misses a section ends with (exit 5), if any."""
    if not report.problems:
        return None
    names = ", ".join(problem.processor for problem in report.problems)
    return IncompleteReport(
        f"the report is incomplete: the {names} analysis failed (a bug in xlacli)",
        hint="the rest of the report was written; please report this with the run "
        "folder's report.json",
    )


def run_options(request: CaptureRequest) -> tuple[str, ...]:
    """The command-line options that reproduce the run's mode, for "Next:" hints;
    a script's own arguments come last, after ``--``."""
    options: list[str] = []
    if request.train:
        options += ["--train", "--optimizer", request.optimizer]
    if request.devices is not None:
        options += ["--devices", str(request.devices)]
    if request.mode != "lazy":
        options += ["--mode", request.mode]
    if request.script_args:
        options += ["--", *request.script_args]
    return tuple(options)


class _StepProgress:
    """A progress bar on stderr fed by the child's events."""

    def __init__(self, description: str, total: int | None):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            console=stderr_console(),
            transient=True,
        )
        self._task = self._progress.add_task(description, total=total, detail="starting")
        self._stopping: float | None = None
        self._what = "stopping"

    def __enter__(self) -> _StepProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def stopping(self, signal_name: str, *, tracing: bool) -> None:
        """The run was told to stop: say what it waits for, and for how long."""
        self._stopping = time.monotonic()
        self._what = "stopping the trace" if tracing else "stopping"
        self._progress.console.print(
            f"xlacli: {signal_name}: {self._what} and keeping what was captured "
            "(signal again to stop at once)…"
        )

    def update(self, log: ChildLog) -> None:
        compiles = sum(e.get("counters", {}).get("UncachedCompile", 0) for e in log.metric_events)
        if log.start is None:
            detail = "importing torch_xla"
        elif log.setup is None:
            detail = "loading the model"
        else:
            detail = counted(compiles, "compilation")
        if self._stopping is not None:
            detail = f"{self._what}… {time.monotonic() - self._stopping:.0f} s"
        self._progress.update(self._task, completed=len(log.steps), detail=detail)
