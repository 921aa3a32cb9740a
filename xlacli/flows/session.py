"""One capture, start to report: the flow ``compile``, ``check`` and
``profile`` share. Capture once, then render (or re-render) the report."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from xlacli.capture.discover import ModelTarget, check_model_file, find_module_file, parse_target
from xlacli.capture.ranks import RankPlace, rank_folder, rank_folders, rank_place
from xlacli.capture.runner import check_torch_xla_installed, prepare_run_dir, run_child
from xlacli.capture.signals import StopSignals
from xlacli.config import ProjectConfig, load_config, model_argument, project_runs_dir
from xlacli.errors import CaptureError, IncompleteReport, UsageError, XlacliError
from xlacli.flows.modes import check_mode
from xlacli.paths import display_path
from xlacli.run_folder.events import ChildLog
from xlacli.run_folder.request import CaptureRequest, RunPaths
from xlacli.run_folder.spawned import spawned_processes
from xlacli.run_options import RunOptions

# Everything else (the progress bar's rich, the report's data model, the
# analyses) is imported once the child has started, while it imports torch:
# ~0.2 s that a run paid before its child started otherwise (docs/performance.md).
if TYPE_CHECKING:
    from xlacli.analysis.recompiles.phases import LoopProgress
    from xlacli.assemble.dump_prefetch import DumpPrefetch
    from xlacli.assemble.graph_files import HloCache
    from xlacli.assemble.read import RawRun
    from xlacli.defaults import StepDefaults
    from xlacli.flows.spawned import ReportBuilder, SpawnedRun
    from xlacli.report.run_report import RunReport

# What only the report needs (the assembler, the analyses, the HLO parser: ~100
# modules, 0.1-0.2 s): imported in the background while the child imports torch
# (seconds), not before the child starts (``_after_child_started``).
REPORT_MODULES = (
    "xlacli.capture.outcome",
    "xlacli.assemble.pipeline",
    "xlacli.assemble.profile",
    "xlacli.assemble.source_snippets",
    "xlacli.flows.hang",
    "xlacli.flows.spawned",
    "xlacli.assemble.ranks",
    "xlacli.report.profile",
)


def _after_child_started(update: Callable[[ChildLog], None]) -> Callable[[ChildLog], None]:
    """``update``, which at its first call (the child has started) first checks
    torch and torch_xla's versions and starts the progress bar (this thread),
    then imports ``REPORT_MODULES`` on a thread; ``report_from_run`` waits for
    it (``_REPORT_IMPORTS``) rather than import beside it. What the parent needs
    only after the child's start costs it nothing while the child imports torch."""
    started = False

    def on_progress(log: ChildLog) -> None:
        nonlocal started
        if not started:
            started = True
            _checked_install()
            update(log)  # the progress bar's imports, before the thread's
            thread = threading.Thread(
                target=lambda: [importlib.import_module(name) for name in REPORT_MODULES],
                name="xlacli-report-imports",
                daemon=True,
            )
            thread.start()
            _REPORT_IMPORTS.append(thread)
            return
        update(log)

    return on_progress


@functools.cache
def _checked_install() -> None:
    """``check_torch_xla_installed``, once a process (a failed check is not
    kept): after the child has started (a wrong torch stops it), or after a
    child that ended before its first progress poll."""
    check_torch_xla_installed()


def _join_report_imports() -> None:
    """Wait for ``REPORT_MODULES`` to be imported (at most one thread imports at a time)."""
    while _REPORT_IMPORTS:
        _REPORT_IMPORTS.pop().join()


# The import threads started; joined before the report is built, so that no two
# threads ever import at once (only a child that ends within a few tenths of a
# second after it started can get there while the thread still runs).
_REPORT_IMPORTS: list[threading.Thread] = []


class _DumpReader:
    """Reads the child's dump as it grows (``assemble/dump_prefetch.py``), on a
    thread that starts once the report's modules are imported (the parser is
    among them: importing it first would delay the child)."""

    LOOK_EVERY_S = 0.25

    def __init__(self, ir_dump: Path) -> None:
        self.prefetched: DumpPrefetch | None = None  # once the thread is done
        self._ir_dump = ir_dump  # the graphs' IR, as the child appends it

    @contextlib.contextmanager
    def reading(self, dump_dir: Path, copy_to: Path | None) -> Iterator[None]:
        stop = threading.Event()
        thread = threading.Thread(
            target=self._read, args=(dump_dir, copy_to, stop), name="xlacli-dump", daemon=True
        )
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def _read(self, dump_dir: Path, copy_to: Path | None, stop: threading.Event) -> None:
        while not _REPORT_IMPORTS:  # started at the child's first sign of life
            if stop.wait(0.05):
                return
        for thread in list(_REPORT_IMPORTS):
            thread.join()
        from xlacli.assemble.dump_prefetch import DumpPrefetch

        prefetch = DumpPrefetch()
        try:
            while not stop.wait(self.LOOK_EVERY_S):
                prefetch.look(dump_dir, copy_to)
                prefetch.look_ir(self._ir_dump)
        except Exception:  # a saving only: the report parses what it needs itself
            return
        self.prefetched = prefetch


STATUS_EVERY_S = 5.0  # a CI log's status lines, at most this often within a phase


def configured_target(options: RunOptions, config: ProjectConfig, action: str) -> ModelTarget:
    """The target named on the command line, else the one ``[tool.xlacli]``
    names (``model`` or ``module``, with its ``script_args``)."""
    model, module, args = options.target, options.module, options.args
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
    ranks: SpawnedRun | None = None  # the ranks the script started itself, merged
    # The one process the script started (a world of one), whose report this is.
    alone: Path | None = None


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
        from xlacli.render.console import print_message

        print_message(
            f"{display_path(target.path)} defines neither get_model() nor model: "
            "running it as a script (its syncs are the steps)"
        )
    return target


@dataclass(frozen=True)
class Trace:
    """A profile's trace: where it goes (None: ``RUN/tensorboard``, the session
    named after the run folder) and how many steps it holds at most."""

    logdir: Path | None
    session: str | None
    max_steps: int


def prepare_run(
    options: RunOptions, command: str, steps: StepDefaults
) -> tuple[ModelTarget, RunOptions]:
    """The target the options name (else the project's), and the options resolved
    against the command's defaults and ``[tool.xlacli]``: the one place they are."""
    config = load_config()
    target = configured_target(options, config, command)
    return target, options.resolved(steps, config, script=target.is_script)


def capture(
    target: ModelTarget,
    options: RunOptions,
    *,
    label: str | None = None,
    command: str | None = None,
    trace: Trace | None = None,
    runs_dir: Path | None = None,
    exact_clocks: bool = False,
) -> CaptureResult:
    """Run the model in a child process with resolved ``options`` (``prepare_run``)
    and build, save and return its report.

    SIGINT and SIGTERM, from the child's start until the report is saved,
    stop the child and end in a partial report (see ``capture.signals``).
    Under a launcher (torchrun, a pod), the run folder is ``out/rank-R``.
    ``hang_timeout``: stop the run, with every rank's stack, when no rank has
    progressed for that long. ``trace``: a profile. ``exact_clocks``: each step
    waits for its device, so its clock holds its device work (runs whose step
    times are compared: the modes side by side); ranks always wait (stragglers).
    ``command``: the command that made the run, kept in its request (``xlacli
    runs`` lists it; None: profile or compile, as ``trace`` says).
    """
    mode = options.mode or "lazy"
    check_mode(target, mode)
    place = rank_place(os.environ)
    follow = place is None and target.is_script  # under a launcher: a rank already
    if runs_dir is None:
        runs_dir = project_runs_dir(load_config())
    paths = _prepare_folder(
        options.out, target, force=options.force, runs_dir=runs_dir, place=place
    )
    watch = None
    hang_timeout = options.hang_timeout
    if hang_timeout is not None:
        from xlacli.capture.hang_watch import HangWatch

        watch = HangWatch(hang_timeout, lambda: _watched_folders(paths, place))
    profile = trace is not None
    explain_warmup = options.warmup or 0
    request = CaptureRequest(
        model_path=str(target.path),
        model_entry=target.entry,
        steps=options.steps or 0,  # None: a script run to its end
        train=bool(options.train),
        optimizer=options.optimizer or "sgd",
        # A profile's warm-up runs first, untraced; a compile's is among its steps.
        warmup=explain_warmup if profile else 0,
        ir_dump=not profile,
        # The trace goes where TensorBoard reads it: LOGDIR/plugins/profile/SESSION.
        profile_logdir=str(trace.logdir or paths.root / "tensorboard") if trace else None,
        profile_session=(trace.session or paths.root.name) if trace else None,
        # Counted exactly either way (child/metric_deltas.py); waiting costs
        # the step its overlap of host and device.
        wait_each_step=not profile and (exact_clocks or place is not None),
        devices=options.devices,
        max_trace_steps=trace.max_steps if trace else None,
        mode=mode,
        target_kind=target.kind,
        module=target.module,
        script_args=list(target.args),
        run_to_end=options.steps is None,
        command=command or ("profile" if profile else "compile"),
    )
    total = None if request.run_to_end else request.planned_steps(0)
    dump = _DumpReader(paths.ir_dump_file)
    with StopSignals() as stop:
        with _StepProgress(label or f"Running {display_path(target.path)}", total) as progress:
            update: Callable[[ChildLog], None] = progress.update
            if follow:  # a script that may start its own ranks
                from xlacli.flows.spawned import with_rank_zero_progress

                update = with_rank_zero_progress(paths, update, follow)
            outcome = run_child(
                request,
                paths,
                on_progress=_after_child_started(update),
                stop=stop,
                on_stopping=lambda name: progress.stopping(name, tracing=profile),
                watch=watch,
                follow_spawned=follow,
                read_dump=dump.reading,
            )
        _join_report_imports()
        _checked_install()
        from xlacli.capture.outcome import Interrupted, outcome_error

        error = outcome_error(outcome, paths, stop.name)
        spawned = spawned_processes(paths.root) if follow else {}
        raw, report, hlo = report_from_run(
            paths,
            request,
            outcome.log,
            target,
            explain_warmup,
            error,
            save=not spawned,
            prefetched=dump.prefetched,
        )
        ranks, alone = None, None
        if spawned:  # the script's own processes were the ranks: their reports, merged
            from xlacli.flows.spawned import alone_report, report_spawned_ranks
            from xlacli.render.console import print_message

            build = _rank_builder(request, target, explain_warmup, profile=profile)
            ranks = report_spawned_ranks(
                paths, spawned, outcome, build, hang_timeout, compare_steps=not profile
            )
            if ranks.alone:  # a world of one process: an ordinary run, its error its own
                error = ranks.errors[0] or error
                report = alone_report(paths, ranks, spawned[0].launcher)
                alone = rank_folder(paths.root, 0)
                print_message(
                    f"{display_path(target.path)} started one process ({spawned[0].launcher}): "
                    f"an ordinary run, its files in {display_path(alone)}"
                )
                ranks = None
            elif error is not None and ranks.first_error is not None:
                # a hang, or a rank's failure that made mp.spawn raise: the rank's own
                # error (its step, its traceback), not the launcher's
                error = ranks.first_error
    if error is None and stop.received is not None:  # came while the report was built
        error = Interrupted(f"interrupted after the run ({stop.name}); the report was kept")
    if outcome.hung_after_s is not None and place is None and ranks is None:  # ranks: merged
        from xlacli.flows.hang import print_hang

        print_hang(paths, report)
    if error is None:
        error = incomplete_report_error(report)
    for warning in outcome.log.warnings:
        from xlacli.render.console import stderr_console

        stderr_console().print(f"[yellow]warning:[/] {warning}")
    return CaptureResult(report, paths, error, raw, hlo, ranks, alone)


def _rank_builder(
    request: CaptureRequest, target: ModelTarget, explain_warmup: int, *, profile: bool
) -> ReportBuilder:
    """Builds (and saves) the report of a rank the script started, with its
    profile summary for the stragglers when the run profiles."""

    def build(paths: RunPaths, log: ChildLog, failure: XlacliError | None) -> RunReport:
        built = report_from_run(paths, request, log, target, explain_warmup, failure)
        if profile:
            from xlacli.assemble.profile import summarize_profile
            from xlacli.report.profile import save_summary

            save_summary(summarize_profile(*built), paths.root)
        return built[1]

    return build


def _prepare_folder(
    out: Path | None,
    target: ModelTarget,
    *,
    force: bool,
    runs_dir: Path | None,
    place: RankPlace | None,
) -> RunPaths:
    """The run folder: ``out`` for one process; ``out/rank-R`` for rank R of a
    launched run, so that no two processes write the same file."""
    if place is None:
        return prepare_run_dir(out, target.path.stem, force=force, runs_dir=runs_dir)
    if out is None:
        raise UsageError(
            f"rank {place.rank} of {place.world_size} ({place.launcher}) needs --out: "
            "every rank writes under the same run folder",
            hint="pass --out runs/NAME; each process writes runs/NAME/rank-R/",
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CaptureError(f"cannot create the output folder {out}: {error.strerror}") from None
    if place.is_merger and force:
        from xlacli.report.ranks import remove_merged

        remove_merged(out)
    return prepare_run_dir(rank_folder(out, place.rank), target.path.stem, force=force)


def _watched_folders(paths: RunPaths, place: RankPlace | None) -> list[RunPaths]:
    """The folders whose growth counts as progress: every rank's, under a launcher."""
    if place is None:  # and the ranks the script may start itself
        return [paths, *(RunPaths(folder) for folder in rank_folders(paths.root).values())]
    return [RunPaths(folder) for folder in rank_folders(paths.root.parent).values()]


def report_from_run(
    paths: RunPaths,
    request: CaptureRequest,
    log: ChildLog,
    target: ModelTarget,
    explain_warmup: int,
    error: XlacliError | None,
    *,
    save: bool = True,
    prefetched: DumpPrefetch | None = None,
) -> tuple[RawRun, RunReport, HloCache]:
    """Parse a run folder's raw files into its report, and save it.

    Returns:
        The raw run, the report, and the graphs' parsed HLO (parsed once, read again
        by the profile summary).
    """
    _join_report_imports()
    from xlacli.assemble.graph_files import HloCache
    from xlacli.assemble.pipeline import build_report
    from xlacli.assemble.read import read_raw_run
    from xlacli.assemble.source_snippets import save_snippets
    from xlacli.capture.outcome import error_record
    from xlacli.report.run_report import save_report

    raw = read_raw_run(paths, log, prefetched.ir_blocks if prefetched else None)
    model_label = str(target)  # model.py:make, train.py, -m pkg.train
    hlo = HloCache(paths.root, prefetched)
    report = build_report(
        raw, paths, request, model_label, error_record(error), warmup=explain_warmup, hlo=hlo
    )
    report = dataclasses.replace(report, options=run_options(request))
    if save:  # not for the main process of a script whose ranks it started
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
    """A progress bar on stderr fed by the child's events, started at the first
    of them (rich is imported once the child has started, not before)."""

    def __init__(self, description: str, total: int | None):
        self._description = description
        self._total = total
        self._started = False
        self._stopping: float | None = None
        self._what = "stopping"
        self._last_phase = ""
        self._loop_of: ChildLog | None = None
        self._last_line = 0.0
        self._final_line = ""  # what a CI log's last status line should say
        self._printed_line = ""

    def _start(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        from xlacli.analysis.recompiles.phases import LoopProgress
        from xlacli.render.console import stderr_console

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            console=stderr_console(),
            transient=True,
        )
        self._task = self._progress.add_task(
            self._description, total=self._total, detail="starting"
        )
        # A CI log gets no progress bar: a short line per phase, and per step at
        # most every few seconds, instead of silence while the model runs.
        self._log_lines = not self._progress.console.is_terminal
        self._loop: LoopProgress = LoopProgress()  # read incrementally, per log
        self._new_loop = LoopProgress
        self._progress.start()
        self._started = True

    def __enter__(self) -> _StepProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._started:
            return
        self._progress.stop()
        # A short run's last status line would otherwise be "0 steps done".
        if self._log_lines and self._final_line and self._final_line != self._printed_line:
            self._progress.console.print(self._final_line, highlight=False)

    def stopping(self, signal_name: str, *, tracing: bool) -> None:
        """The run was told to stop: say what it waits for, and for how long."""
        if not self._started:
            self._start()
        self._stopping = time.monotonic()
        self._what = "stopping the trace" if tracing else "stopping"
        self._progress.console.print(
            f"xlacli: {signal_name}: {self._what} and keeping what was captured "
            "(signal again to stop at once)…"
        )

    def update(self, log: ChildLog) -> None:
        if not self._started:
            self._start()
        if self._loop_of is not log:  # another log (rank 0's, once it starts): afresh
            self._loop, self._loop_of = self._new_loop(), log
        # --steps counts the loop's iterations, not a script's setup syncs.
        done = self._loop.read(log.steps)
        compiles = self._loop.compiles + sum(
            event.measures.counters.get("UncachedCompile", 0)
            for event in (log.setup, log.tail)
            if event is not None
        )
        if log.start is None:
            detail = "importing torch_xla"
        elif log.setup is None:
            detail = "loading the model"
        else:
            from xlacli.units import counted

            detail = counted(compiles, "compilation")
        if self._stopping is not None:
            detail = f"{self._what}… {time.monotonic() - self._stopping:.0f} s"
        self._progress.update(self._task, completed=done, detail=detail)
        if self._log_lines:
            self._status_line(done, detail, log.setup is not None)

    def _status_line(self, done: int, detail: str, loaded: bool) -> None:
        phase = "steps" if loaded else detail
        total = self._progress.tasks[0].total
        steps = f"{done}" + (f" of {total:.0f}" if total else "")
        noun = "step" if done == 1 and not total else "steps"  # "1 of 5 steps done"
        where = f"{steps} {noun} done, {detail}" if phase == "steps" else detail
        self._final_line = f"xlacli: {self._description}: {where}"
        now = time.monotonic()
        if self._final_line == self._printed_line or (
            phase == self._last_phase
            and (phase != "steps" or now - self._last_line < STATUS_EVERY_S)
        ):
            return  # nothing new, or a step line too soon after the last
        self._last_phase, self._last_line = phase, now
        self._printed_line = self._final_line
        self._progress.console.print(self._final_line, highlight=False)
