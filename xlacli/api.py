"""xlacli from Python: notebooks, scripts and tests.

The same machinery as the commands: ``compile`` and ``profile`` run the
model in a child process (torch_xla reads its debug switches at import, so
the caller's process is never touched and never imports torch), build the
run folder and its ``report.json``, and return the typed report. Reports
are frozen dataclasses; their JSON form carries ``schema_version``
(``xlacli.report.SCHEMA_VERSION``) and a new field is only ever added.

    >>> import xlacli
    >>> report = xlacli.compile("examples/mlp.py", steps=3)
    >>> [(e.step, e.cause.category, e.cause.location) for e in report.events]
    >>> xlacli.diff_hlo(report.run_dir, "runs/before").identical

Usage and environment problems raise ``xlacli.XlacliError`` (its
``exit_code`` is the command's). A model that fails mid-run does not
raise: the partial report comes back with ``report.error`` set, as the
command prints the report before it exits 3; an analysis of xlacli's that
failed leaves its section empty and is listed in ``report.problems``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import xlacli.defaults as defaults

if TYPE_CHECKING:
    from xlacli.hlo.changes import DiffReport
    from xlacli.report.profile import ProfileSummary
    from xlacli.report.run import RunReport

StrPath = str | os.PathLike[str]


def compile(
    target: StrPath | None = None,
    *,
    module: str | None = None,
    args: Sequence[str] = (),
    steps: int | None = None,
    warmup: int = defaults.COMPILE.warmup,
    train: bool = False,
    optimizer: str = "sgd",
    devices: int | None = None,
    mode: str = "lazy",
    out: StrPath | None = None,
    force: bool = False,
) -> RunReport:
    """Trace a model lazily on an XLA device and explain every compile (``xlacli compile``).

    Args:
        target: A model file (``model.py`` or ``model.py:factory``) or a training
            script; None with ``module``.
        module: Run ``python -m MODULE`` as a script instead of a file.
        args: The script's own arguments (what follows ``--`` on the command line).
        steps: Steps to run (a model file: default 3, two of them warm-up; a script: to its end).
        warmup: Steps whose compiles are expected; later ones are steady-state recompiles.
        train: Forward, loss, backward and an optimizer step (model files).
        optimizer: ``sgd`` or ``adamw`` with ``train``.
        devices: Virtual XLA:CPU devices for SPMD (default: ``[tool.xlacli] devices``).
        mode: ``lazy`` or ``dynamo`` (the step under ``torch.compile``).
        out: The run folder (default: a new one under ``.xlacli/runs/``).
        force: Replace ``out`` if it is an earlier run folder.

    Returns:
        The report, also saved as ``report.json`` in ``report.run_dir`` (a script
        that starts its own ranks: rank 0's, in ``OUT/rank-0``; ``OUT/ranks.json``
        merges them).

    Raises:
        XlacliError: a bad target or option (``UsageError``), or no working
            torch_xla (``CaptureError``).
    """
    from xlacli.config import load_config
    from xlacli.flows.session import capture, resolve_target

    resolved = resolve_target(_text(target), module, args)
    if devices is None:  # as the command: [tool.xlacli] devices, if the project sets it
        devices = load_config().devices
    result = capture(
        resolved,
        steps=steps,
        train=train,
        optimizer=optimizer,
        out=_path(out),
        force=force,
        label=f"Compiling {resolved.module or resolved.path.name}",
        explain_warmup=warmup,
        devices=devices,
        mode=_mode(mode),
    )
    if result.ranks is not None and result.ranks.reports:  # the script started its ranks
        return result.ranks.reports[min(result.ranks.reports)]  # rank 0's; OUT/ranks.json merges
    return result.report


@dataclass(frozen=True)
class ProfileResult:
    """A profile: the run's report (graphs, compiles) and the summary of the traced steps."""

    report: RunReport
    summary: ProfileSummary


def profile(
    target: StrPath | None = None,
    *,
    module: str | None = None,
    args: Sequence[str] = (),
    steps: int = defaults.PROFILE.steps,
    warmup: int = defaults.PROFILE.warmup,
    train: bool = False,
    optimizer: str = "sgd",
    devices: int | None = None,
    mode: str = "lazy",
    logdir: StrPath | None = None,
    name: str | None = None,
    max_trace_steps: int = 500,
    out: StrPath | None = None,
    force: bool = False,
) -> ProfileResult:
    """Trace ``steps`` steps after ``warmup`` with torch_xla's profiler (``xlacli profile``).

    The trace goes where TensorBoard and xprof read it
    (``LOGDIR/plugins/profile/NAME``; default logdir ``RUN/tensorboard``);
    ``summary`` is the headless view: step times, the breakdown, top HLO ops.
    Arguments are ``compile``'s, plus ``logdir``, ``name`` and ``max_trace_steps``.

    Raises:
        XlacliError: as ``compile``.
    """
    from xlacli.flows.profile import ProfileRequest, capture_profile
    from xlacli.flows.session import resolve_target

    resolved = resolve_target(_text(target), module, args)
    request = ProfileRequest(
        model=_text(target),
        steps=steps,
        warmup=warmup,
        train=train,
        optimizer=optimizer,
        logdir=_path(logdir),
        name=name,
        tensorboard=False,
        port=0,
        out=_path(out),
        force=force,
        output_format="json",
        devices=devices,
        max_trace_steps=max_trace_steps,
        mode=_mode(mode),
        module=module,
        script_args=tuple(args),
    )
    result, summary = capture_profile(resolved, request)
    return ProfileResult(result.report, summary)


def load_report(run_dir: StrPath) -> RunReport:
    """The report saved in a run folder (``RUN/report.json``), as ``xlacli report`` reads it.

    Raises:
        UsageError: no report there, or one of another schema version.
    """
    from xlacli.report.run import load_report as load

    return load(Path(run_dir))


def diff_hlo(left: StrPath, right: StrPath, *, stage: str = "post") -> DiffReport:
    """The structural HLO diff of two inputs (``xlacli diff-hlo``): HLO text or
    ``HloModuleProto`` files, XLA dump folders, or run folders.

    Args:
        stage: For folders, the HLO ``pre`` or ``post`` XLA's optimizations.

    Returns:
        The diff; ``identical`` is True when only names or order differ.

    Raises:
        UsageError: missing inputs, or two of different kinds.
        HloParseError: malformed HLO (a ``UsageError``, with its position).
    """
    from xlacli.hlo.inputs import diff_paths

    return diff_paths(Path(left), Path(right), stage)


def _mode(mode: str) -> str:
    from xlacli.errors import UsageError

    if mode not in ("lazy", "dynamo"):
        raise UsageError(f"mode {mode!r}: expected 'lazy' or 'dynamo'")
    return mode


def _text(path: StrPath | None) -> str | None:
    return None if path is None else os.fspath(path)


def _path(path: StrPath | None) -> Path | None:
    return None if path is None else Path(path)
