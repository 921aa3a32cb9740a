"""``--mode both``: lazy tracing and torch.compile side by side."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from xlacli.analysis.mode_figures import ModeFigures
from xlacli.paths import display_path
from xlacli.render.view import Block
from xlacli.report.run_report import RunReport, report_to_dict
from xlacli.units import counted, format_bytes, format_seconds

_Row = tuple[str, Callable[[ModeFigures], str]]
ROWS: tuple[_Row, ...] = (
    ("graphs", lambda f: str(f.graphs)),
    ("XLA compiles", lambda f: str(f.compiles)),
    ("total compile time", lambda f: format_seconds(f.compile_time_s)),
    ("median step time (cached steps)", lambda f: _step_time(f.median_step_s)),
    ("HLO instructions (optimized)", lambda f: _maybe(f.optimized_hlo_instructions)),
    ("peak device bytes (largest graph)", lambda f: format_bytes(f.peak_device_bytes)),
    ("graph breaks", lambda f: str(f.graph_breaks)),
    ("recompiles after warm-up", lambda f: str(f.recompiles)),
    ("Dynamo guard recompiles", lambda f: str(f.dynamo_recompiles)),
)


def _step_time(seconds: float | None) -> str:
    return format_seconds(seconds) if seconds is not None else "n/a: run with more --steps"


# Rows only a profile measures: shown when some mode has them.
PROFILE_ROWS: tuple[_Row, ...] = (
    ("torch ops traced per step", lambda f: _maybe(f.ops_traced_per_step)),
    ("op tracing per step", lambda f: format_seconds(f.op_tracing_per_step_s)),
)


def comparison_json(
    reports: Mapping[str, RunReport],
    figures: Mapping[str, ModeFigures],
    extra: Mapping[str, Any] | None = None,
) -> str:
    """Both reports in full, and the compared figures, as sorted JSON."""
    data: dict[str, Any] = {
        "modes": {mode: report_to_dict(report) for mode, report in reports.items()},
        "comparison": {mode: dataclasses.asdict(fig) for mode, fig in figures.items()},
    }
    if extra:
        data.update(extra)
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def comparison_text(title: str, figures: Mapping[str, ModeFigures]) -> RenderableType:
    """The table: one row per figure, one column per mode."""
    table = Table(box=None, pad_edge=False, header_style="bold", show_edge=False)
    table.add_column("")
    for mode in figures:
        table.add_column(mode, justify="right", no_wrap=True)
    measured = any(fig.ops_traced_per_step is not None for fig in figures.values())
    for name, value in ROWS + (PROFILE_ROWS if measured else ()):
        table.add_row(name, *(value(fig) for fig in figures.values()))
    parts: list[RenderableType] = [Text(title, style="bold"), table]
    for fig in figures.values():
        parts.append(Text(f"{fig.mode}: run folder {display_path(fig.run_dir)}", style="dim"))
        if fig.error:
            parts.append(Text(f"{fig.mode}: the run failed: {fig.error}", style="red"))
    return Group(*parts)


@dataclass(frozen=True)
class ComparisonView:
    """``--mode both``: the verdict and one column per mode (``extra``: more JSON keys)."""

    reports: Mapping[str, RunReport]
    figures: Mapping[str, ModeFigures]
    command: str = "compile"
    extra: Mapping[str, Any] | None = None

    def text(self, width: int) -> list[Block]:
        model = next(iter(self.reports.values())).model
        title = (
            f"xlacli {self.command} {display_path(model)}  lazy vs torch.compile(backend='openxla')"
        )
        verdict = Text(comparison_verdict(self.figures), style="bold")
        return [verdict, comparison_text(title, self.figures)]

    def json(self) -> str:
        return comparison_json(self.reports, self.figures, self.extra)


def comparison_verdict(figures: Mapping[str, ModeFigures]) -> str:
    """The comparison in one line: which mode's cached steps are faster, and by how much."""
    lazy, dynamo = figures.get("lazy"), figures.get("dynamo")
    recompiles = sum(f.recompiles + f.dynamo_recompiles for f in figures.values())
    tail = (
        f"; {counted(recompiles, 'recompile')} after warm-up"
        if recompiles
        else "; no recompile after warm-up"
    )
    if lazy is None or dynamo is None or not lazy.median_step_s or not dynamo.median_step_s:
        return "step times n/a: no cached step after the warm-up (run with more --steps)" + tail
    ratio = lazy.median_step_s / dynamo.median_step_s
    faster = f"torch.compile {ratio:.1f}x faster" if ratio >= 1 else f"lazy {1 / ratio:.1f}x faster"
    return f"{faster} on cached steps (median)" + tail


def _maybe(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"
