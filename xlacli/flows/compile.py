"""The flow of ``xlacli compile``: capture (one mode, or both), report, budgets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xlacli.defaults as defaults
from xlacli.analysis.budgets import check_budgets
from xlacli.capture.discover import ModelTarget
from xlacli.config import load_config, project_runs_dir
from xlacli.flows.compare import compare_compile, raise_first_error
from xlacli.flows.launch import refuse_under_launcher
from xlacli.flows.modes import check_mode
from xlacli.flows.ranks import finish_rank, launched_rank
from xlacli.flows.session import capture
from xlacli.flows.spawned import checked_reports, reported_folders
from xlacli.render.compile_report import render_compile_report
from xlacli.render.ranks import render_ranks


@dataclass(frozen=True)
class CompileRequest:
    """What ``xlacli compile`` was asked for, past option parsing."""

    steps: int | None = None  # None: a script's end (a model file's default is set by the CLI)
    train: bool = False
    optimizer: str = "sgd"
    out: Path | None = None
    force: bool = False
    output_format: str = "text"
    warmup: int = defaults.COMPILE.warmup
    max_compiles: int | None = None
    fail_on_recompile: bool = False
    devices: int | None = None
    mode: str = "lazy"
    html: bool = False
    hang_timeout: float | None = None  # --hang-timeout: stop a run where no rank progresses
    ranks_timeout: float = 300.0  # under a launcher: rank 0's wait for the other ranks


def run_compile(target: ModelTarget, request: CompileRequest) -> int:
    """Capture ``target``, print its report, then raise the run's error or a budget's.

    Raises:
        XlacliError: the run's own error (each mode's, lazy first), else a budget's.
    """
    config = load_config()
    devices = request.devices if request.devices is not None else config.devices
    options: dict[str, Any] = dict(
        steps=request.steps,
        train=request.train,
        optimizer=request.optimizer,
        explain_warmup=request.warmup,
        devices=devices,
    )
    if request.mode == "both":
        refuse_under_launcher("--mode both")
        check_mode(target, "dynamo")  # before the lazy run, not after it
        results = compare_compile(
            target,
            out=request.out,
            force=request.force,
            output_format=request.output_format,
            **options,
        )
    else:
        result = capture(
            target,
            out=request.out,
            force=request.force,
            label=f"Compiling {target.module or target.path.name}",
            mode=request.mode,
            hang_timeout=request.hang_timeout,
            runs_dir=project_runs_dir(config),  # [tool.xlacli]'s project, as check and profile
            **options,
        )
        place = launched_rank()
        if result.ranks is not None:  # the script started its own ranks: merged
            render_ranks(result.ranks.merged, result.paths.root, request.output_format)
        elif place is None:
            render_compile_report(result.report, request.output_format)
        else:  # one run folder per rank; rank 0 prints them merged
            finish_rank(
                place,
                result.paths.root.parent,
                failed=result.error is not None,
                output_format=request.output_format,
                timeout_s=request.ranks_timeout,
                hang_timeout_s=request.hang_timeout,
            )
        results = [result]
    if request.html:
        from xlacli.render.html.run_page import announce_run_html

        for result in results:
            for folder, report in reported_folders(result):
                announce_run_html(folder, report)
    raise_first_error(results)  # each mode's own error first, then the budgets of each
    for result in results:
        for report in checked_reports(result):  # each rank's, when the script started ranks
            check_budgets(
                report,
                max_compiles=request.max_compiles,
                fail_on_recompile=request.fail_on_recompile,
            )
    return 0
