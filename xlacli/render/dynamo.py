"""The torch.compile (Dynamo) section of the compile report."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from xlacli.analysis.recompiles.hints import hint_for
from xlacli.paths import display_location, source_line
from xlacli.report.run_report import DynamoFrameRecord, DynamoRecord, RunReport
from xlacli.units import counted, format_seconds, short_hash


def dynamo_view(report: RunReport, *, narrow: bool = False) -> RenderableType | None:
    """Dynamo's frames, graph breaks and guard failures; None without Dynamo."""
    dynamo = report.dynamo
    if dynamo is None:
        return None
    parts: list[RenderableType] = [
        Text(""),
        dynamo_headline(dynamo),
        _per_step(report, dynamo),
        _frame_table(dynamo, narrow),
    ]
    if dynamo.graph_breaks:
        parts.append(Text(f"Graph breaks ({len(dynamo.graph_breaks)}):", style="bold yellow"))
        for graph_break in dynamo.graph_breaks:
            parts.append(
                _located(
                    graph_break.location,
                    f"{graph_break.reason}  (×{graph_break.count})",
                    inside=graph_break.library_location,
                )
            )
        parts.append(_fix("graph_break"))
    guarded = [frame for frame in dynamo.frames if frame.guard_failure]
    if guarded:
        steady = sum(1 for f in guarded if f.step is not None and f.step >= report.warmup)
        title = f"Dynamo recompiles ({len(guarded)}, {steady} after the warm-up):"
        parts.append(Text(title, style="bold red" if steady else "bold"))
        for frame in guarded:
            where = frame.guard_read or frame.location
            parts.append(_located(where, f"step {frame.step}  {frame.guard_failure}"))
        parts.append(_fix("dynamo_guard"))
    return Group(*parts)


def dynamo_headline(dynamo: DynamoRecord) -> Text:
    """``torch.compile (Dynamo, called by the model): 5 frame compiles, ...``."""
    who = "run by xlacli --mode dynamo" if dynamo.source == "xlacli" else "called by the model"
    breaks = sum(b.count for b in dynamo.graph_breaks)
    return Text.assemble(
        (f"torch.compile(backend='openxla') ({who}): ", "bold"),
        f"{counted(len(dynamo.frames), 'frame compile')}, "
        f"{counted(dynamo.fx_graphs, 'FX graph')}, {counted(breaks, 'graph break')}, "
        f"{counted(dynamo.recompiles, 'guard recompile')}; torch_xla extracted "
        f"{counted(dynamo.extractions, 'FX graph')}",
    )


def frames_per_step(report: RunReport, dynamo: DynamoRecord) -> list[int]:
    """How many frames Dynamo compiled in each step of the run."""
    return [sum(1 for f in dynamo.frames if f.step == r.step) for r in report.step_records]


def frames_by_site(dynamo: DynamoRecord) -> dict[tuple[str, str], list[DynamoFrameRecord]]:
    """The frame compiles of each Python frame, by (function, location), in order."""
    groups: dict[tuple[str, str], list[DynamoFrameRecord]] = {}
    for frame in dynamo.frames:
        groups.setdefault((frame.function, frame.location), []).append(frame)
    return groups


def _per_step(report: RunReport, dynamo: DynamoRecord) -> Text:
    """Frames Dynamo traced in each step: after the warm-up, each is host time
    spent again even when the XLA graph is cached (the timeline shows "·")."""
    counts = frames_per_step(report, dynamo)
    return Text(
        "Dynamo frame compiles per step: " + " ".join(map(str, counts)),
        style="yellow" if any(counts[report.warmup :]) else "dim",
    )


def _frame_table(dynamo: DynamoRecord, narrow: bool = False) -> Table:
    """One row per compiled Python frame (its compiles summed); ``narrow``: each
    frame's line by file name, so that it is never cropped."""
    table = Table(box=None, pad_edge=False, header_style="bold", show_edge=False)
    for name in ("frame", "where", "compiles", "FX ops", "XLA graphs", "Dynamo time"):
        # The frame's name gives way at narrow widths; its file:line never does.
        table.add_column(
            name,
            justify="right" if name in ("compiles", "FX ops") else "left",
            no_wrap=name != "frame",
            overflow="ellipsis",
            min_width=8 if name == "frame" else None,
        )
    table.columns[0].no_wrap = False
    for (function, location), frames in frames_by_site(dynamo).items():
        hashes = dict.fromkeys(short_hash(h) for f in frames for h in f.graph_hashes)
        table.add_row(
            function,
            _where(location, narrow),
            str(len(frames)),
            "/".join(str(f.fx_ops) for f in frames),
            " ".join(hashes) or "-",
            format_seconds(sum(f.compile_time_s for f in frames)),
        )
    return table


def _located(location: str, what: str, inside: str | None = None) -> RenderableType:
    """``location`` and ``what``, the line's code below; ``inside``: the library
    line the user's call led to, where it happened."""
    lines: list[RenderableType] = [
        Text.assemble("  ", (display_location(location) or location, "cyan"), f"  {what}")
    ]
    code = source_line(location)
    if code:
        lines.append(Text(f"      │ {code}"))
    if inside:
        lines.append(Text(f"      (inside {display_location(inside) or inside})", style="dim"))
    return Group(*lines)


def _fix(category: str) -> Padding:
    return Padding(
        Text.from_markup(f"[green]fix:[/] {escape(hint_for(category) or '')}"), (0, 0, 0, 4)
    )


def _where(location: str, narrow: bool) -> str:
    shown = display_location(location) or location
    return shown.rpartition("/")[2] if narrow else shown
