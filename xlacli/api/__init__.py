"""xlacli from Python: notebooks, scripts, tests, and xlacli's own commands.

The commands (``xlacli/cli/``) are a thin layer over this API: each turns its
options into one call here, renders the typed result and exits with its code.
``compile``, ``profile`` and ``check`` run the model in a child process
(torch_xla reads its debug switches at import, so the caller's process is
never touched and never imports torch), build the run folder and its
``report.json``, and return the typed report. Reports are frozen
dataclasses; their JSON form carries ``schema_version``
(``xlacli.report.run_report.SCHEMA_VERSION``); within a version a new field is only ever
added (version 2 keeps steps as runs of equal steps, ``step_runs``).

    >>> import xlacli
    >>> report = xlacli.compile("examples/mlp.py", steps=3)
    >>> [(e.step, e.cause.category, e.cause.location) for e in report.events]
    >>> xlacli.diff_hlo(report.run_dir, "runs/before").identical

Usage and environment problems raise ``xlacli.XlacliError`` (its
``exit_code`` is the command's). A model that fails mid-run does not
raise: the partial report comes back with ``report.error`` set, as the
command prints the report before it exits 3 (``compile_run`` and
``profile`` also return the error itself, with its hint: ``raise_error()``);
an analysis of xlacli's that failed leaves its section empty and is listed
in ``report.problems``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Unpack

from xlacli.api.capture import ProfileResult, Run, check_budgets, compile_run, profile
from xlacli.api.checks import check
from xlacli.api.modes import ModeComparison, compile_modes, profile_modes
from xlacli.api.saved import (
    diff_hlo,
    diff_run_folders,
    find_run,
    list_runs,
    load_profile,
    load_report,
    remove_runs,
    runs_folder,
    write_html,
)
from xlacli.run_options import RunKeywords, RunOptions, StrPath

if TYPE_CHECKING:
    from xlacli.flows.check import CheckRun
    from xlacli.flows.saved_runs import RunEntry
    from xlacli.report.run_report import RunReport

__all__ = [
    "CheckRun",
    "ModeComparison",
    "ProfileResult",
    "Run",
    "RunEntry",
    "RunOptions",
    "check",
    "check_budgets",
    "compile",
    "compile_modes",
    "compile_run",
    "diff_hlo",
    "diff_run_folders",
    "find_run",
    "list_runs",
    "load_profile",
    "load_report",
    "profile",
    "profile_modes",
    "remove_runs",
    "runs_folder",
    "write_html",
]


def compile(
    target: StrPath | None = None,
    *,
    options: RunOptions | None = None,
    **keywords: Unpack[RunKeywords],
) -> RunReport:
    """Trace a model lazily on an XLA device and explain every compile (``xlacli compile``).

    Args:
        target: A model file (``model.py`` or ``model.py:factory``) or a training
            script; None: ``module``, else the project's (``[tool.xlacli]`` model).
        module: Run ``python -m MODULE`` as a script instead of a file.
        args: The script's own arguments (what follows ``--`` on the command line).
        steps: Steps to run (a model file: default 3, two of them warm-up; a script: to its end).
        warmup: Steps whose compiles are expected; later ones are steady-state recompiles.
        train: Forward, loss, backward and an optimizer step (model files).
        optimizer: ``sgd`` or ``adamw`` with ``train``.
        devices: Virtual XLA:CPU devices for SPMD (default: ``[tool.xlacli] devices``).
        mode: ``lazy`` or ``dynamo`` (the step under ``torch.compile``); both, compared:
            ``compile_modes``.
        out: The run folder (default: a new one under ``.xlacli/runs/``, or the
            project's runs folder).
        force: Replace ``out`` if it is an earlier run folder.
        hang_timeout: Stop the run (keeping every stack) when no step progresses
            for this many seconds.
        options: All of these as one ``RunOptions`` (what ``xlacli compile`` builds from
            its flags); a keyword given beside it replaces its field.

    Returns:
        The report, also saved as ``report.json`` in ``report.run_dir`` (a script
        that starts its own ranks: rank 0's, in ``OUT/rank-0``; ``OUT/ranks.json``
        merges them).

    Raises:
        XlacliError: a bad target or option (``UsageError``), or no working
            torch_xla (``CaptureError``).
    """
    run = compile_run(target, options=options, **keywords)
    if run.ranks is not None and run.ranks.reports:  # the script started its own ranks
        return run.ranks.reports[min(run.ranks.reports)]
    return run.report


# Result types defined beside the flows that build them, imported when first
# named: importing the API must not import the flows (start-up time).
_LAZY_TYPES = {"CheckRun": "xlacli.flows.check", "RunEntry": "xlacli.flows.saved_runs"}


def __getattr__(name: str) -> object:
    """``CheckRun`` and ``RunEntry``, imported when first used (PEP 562)."""
    if name not in _LAZY_TYPES:
        raise AttributeError(f"module 'xlacli.api' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_LAZY_TYPES[name]), name)
