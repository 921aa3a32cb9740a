"""The advice in the terminal: where the graphs come from, and what would cut compiles.

Reads the report's advice sections (``xlacli.report.advice``); each view returns
nothing when its section is empty, so runs without advice print as before.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from xlacli.analysis.advice.loss_targets import ignores_an_index
from xlacli.paths import display_location, display_walked
from xlacli.render.console import plain_table
from xlacli.render.scan_words import scan_model_note, scan_optimizer_note, scan_verdict
from xlacli.report.advice import BucketAdvice, CompileCost, LineCost, ScanAdvice, ValueReadCost
from xlacli.report.run_report import RunReport
from xlacli.units import format_seconds, short_hash

TOP_LINES = 8
NO_FRAME = "(data and constants: parameters, inputs)"
COST_NOTE = "compile time apportioned by HLO instruction count: an estimate"
BACKWARD_NOTE = (
    "backward: the share of a line's instructions that differentiate it"
    " (the autograd engine's, at the forward line)"
)
READ_COST_NOTE = (
    "a read's time is its median time less the calling thread's own work: the forced graph"
    " run, waited for and copied, which a step closure saves; CPU in brackets"
)


def advice_view(report: RunReport) -> list[RenderableType]:
    """Every advice section the report has, in order."""
    parts: list[RenderableType] = []
    if report.compile_cost is not None and report.compile_cost.lines:
        parts.append(compile_cost_view(report.compile_cost))
    advised = [advice for advice in report.scan_advice if advice.pays or not advice.identical]
    parts.extend(scan_view(advice) for advice in advised)
    parts.extend(
        not_advised_view(group) for group in not_advised_groups(report.scan_advice).values()
    )
    parts.extend(bucket_view(advice) for advice in report.bucket_advice)
    if report.value_read_costs:
        parts.append(value_read_view(report.value_read_costs))
    return [item for part in parts for item in (Text(""), part)]


def line_name(location: str | None) -> str:
    return display_location(location) or NO_FRAME


def cost_line_name(line: LineCost) -> str:
    """A compile-cost row's line, the library line beside when its ops had no frame
    of the user's (``model.py:12 (inside torch/nn/modules/linear.py:134)``)."""
    return display_walked(line.location, line.library_location) or NO_FRAME


def backward_share(line: LineCost) -> str:
    """The share of a line's instructions its backward pass makes; "-" for none."""
    if not line.backward_hlo_instructions or not line.hlo_instructions:
        return "-"
    return f"{line.backward_hlo_instructions / line.hlo_instructions:.0%}"


def compile_cost_view(cost: CompileCost, top: int = TOP_LINES) -> RenderableType:
    trained = any(line.backward_hlo_instructions for line in cost.lines)
    columns = [("line", "left"), ("IR", "right"), ("HLO", "right"), ("opt", "right")]
    columns += [("share", "right"), ("compile", "right")]
    if trained:
        columns.insert(4, ("backward", "right"))
    table = plain_table(*columns)
    for line in cost.lines[:top]:
        cells = [
            escape(cost_line_name(line)),
            str(line.ir_nodes),
            str(line.hlo_instructions),
            str(line.optimized_hlo_instructions),
            f"{line.share:.0%}",
            format_seconds(line.compile_time_s),
        ]
        if trained:
            cells.insert(4, backward_share(line))
        table.add_row(*cells)
    more = len(cost.lines) - top
    title = Text.assemble(
        ("Where your graphs come from", "bold"),
        f"  ({cost.hlo_instructions} HLO instructions, {format_seconds(cost.compile_time_s)}"
        f" compiling; {COST_NOTE})",
    )
    rows: list[RenderableType] = [title, table]
    if trained:
        rows.append(Text(f"  {BACKWARD_NOTE}", style="dim"))
    if more > 0:
        rows.append(Text(f"  ... {more} more lines in the JSON report", style="dim"))
    return Group(*rows)


def _layers(advice: ScanAdvice) -> str:
    return f"{advice.layers} {advice.layer_class or 'module'} layers"


def _over_and_where(advice: ScanAdvice) -> str:
    over = f" over {advice.module_list}" if advice.module_list else ""
    return f"{over} called at {display_location(advice.call_site)}"


def scan_view(advice: ScanAdvice) -> RenderableType:
    """Advised stacks and stacks whose layers differ, whole (``not_advised_view``
    takes the identical stacks not advised)."""
    head = Text.assemble(
        ("Scan advice", "bold"),
        f"  graph {short_hash(advice.graph_hash)}: ",
        (_layers(advice), "cyan"),
        f"{_over_and_where(advice)} make {advice.share:.0%} of the graph",
        f" ({advice.block_instructions} HLO instructions)",
    )
    rows: list[RenderableType] = [head]
    if advice.optimizer_instructions:
        rows.append(Text("  " + scan_optimizer_note(advice), style="dim"))
    if advice.identical:
        rows.append(Text("  " + scan_verdict(advice)))
        rows.append(Text("  " + scan_model_note(advice), style="dim"))
        if advice.code:
            rows.append(Text("    " + advice.code.replace("\n", "\n    "), style="green"))
    else:
        rows.append(Text(f"  the layers differ: {'; '.join(advice.differing)}", style="yellow"))
    rows.append(Text("  layer lines: " + ", ".join(map(line_name, advice.lines)), style="dim"))
    rows.extend(Text(f"  needs: {blocker}", style="dim") for blocker in advice.blockers)
    return Group(*rows)


def not_advised_groups(
    advice: tuple[ScanAdvice, ...],
) -> dict[tuple[object, ...], list[ScanAdvice]]:
    """Identical stacks found but not advised, one group per stack and reason: a
    training run's graphs hold the same layers, and one verdict says it for all."""
    groups: dict[tuple[object, ...], list[ScanAdvice]] = {}
    for item in advice:
        if item.identical and not item.pays:
            key = (item.call_site, item.module_list, item.layers, item.not_advised_because)
            groups.setdefault(key, []).append(item)
    return groups


def not_advised_view(group: list[ScanAdvice]) -> RenderableType:
    """A stack found and not advised, in the terminal: what, where, why (its estimate,
    the optimizer's share and what scanning needs are in the JSON and the page)."""
    shown = max(group, key=lambda item: item.block_instructions)
    low, high = min(item.share for item in group), max(item.share for item in group)
    share = f"{low:.0%}" if f"{low:.0%}" == f"{high:.0%}" else f"{low:.0%} to {high:.0%}"
    graphs = ", ".join(short_hash(item.graph_hash) for item in group)
    head = Text.assemble(
        ("Scan", "bold"),
        f"  {_layers(shown)}{_over_and_where(shown)}, ",
        f"graph{'s' if len(group) > 1 else ''} {graphs} ({share} of the graph)",
    )
    verdict = scan_verdict(shown)
    if len(group) > 1:
        verdict = f"(graph {short_hash(shown.graph_hash)}) {verdict}"
    rows: list[RenderableType] = [head]
    if shown.optimizer_instructions:
        rows.append(Text("  " + scan_optimizer_note(shown), style="dim"))
    return Group(*rows, Text("  " + verdict, style="yellow"))


KEEP_SIZES = "no fewer buckets pads less than 20%: keep the sizes as they are"


def bucket_notes(advice: BucketAdvice) -> list[str]:
    """What the advice says beside its table: the tensors padded with it (a loss's
    target with its ignored index), a short last batch, the site's other sizes."""
    notes = []
    if advice.padded_with:
        notes.append(f"changes with it, padded to the same edges: {', '.join(advice.padded_with)}")
    for what, loss in advice.targets:
        notes.append(
            f"{what} is the loss's target ({loss}): pad it with ignore_index=-100"
            if ignores_an_index(loss)
            else f"{what} is the loss's target ({loss}): mask its padding out of the loss"
        )
    if advice.drop_last:
        notes.append("the only odd size is an epoch's last batch: drop_last=True removes it")
    notes.extend(advice.also)
    return notes


def bucket_verdict(advice: BucketAdvice) -> str:
    """The line above the code, or the whole verdict when no bucketing pays."""
    if not advice.code:
        return KEEP_SIZES
    if advice.drop_last:
        return "* advised: drop the last batch, or pad it:"
    return "* advised: the fewest buckets within 20% padding; pad with:"


def bucket_view(advice: BucketAdvice) -> RenderableType:
    sizes = ", ".join(f"{size} ({steps}x)" for size, steps in advice.sizes)
    head = Text.assemble(
        ("Bucket advice", "bold"),
        f"  {line_name(advice.location)} {advice.dimension} ({advice.category}):",
        f" {len(advice.sizes)} sizes over {advice.steps} steps, {advice.compiles_seen} compiles",
    )
    table = plain_table(("buckets", "right"), ("edges", "left"), ("compiles", "right"))
    table.add_column("padding", justify="right")
    for index, option in enumerate(advice.options):
        mark = " *" if index == advice.chosen and advice.code else ""
        table.add_row(
            f"{len(option.edges)}{mark}",
            ", ".join(map(str, option.edges)),
            str(option.compiles),
            f"{option.padding_waste:.0%}",
        )
    rows: list[RenderableType] = [head, Text(f"  sizes seen: {sizes}", style="dim")]
    rows.append(_indented(table))
    rows.extend(Text(f"  {note}", style="dim") for note in bucket_notes(advice))
    rows.append(Text(f"  {bucket_verdict(advice)}", style="dim"))
    if advice.code:
        rows.append(Text("    " + advice.code.replace("\n", "\n    "), style="green"))
    return Group(*rows)


def value_read_view(costs: tuple[ValueReadCost, ...]) -> RenderableType:
    table = plain_table(
        ("line", "left"), ("kind", "left"), ("reads/step", "right"), ("read (CPU)", "right")
    )
    table.add_column("cost/step", justify="right")
    table.add_column("fix", justify="left")
    for cost in costs:
        table.add_row(
            escape(line_name(cost.location)),
            cost.kind,
            f"{cost.reads_per_step:.2g}",
            read_time_text(cost),
            f"{1000 * cost.extra_time_s:.3g} ms",
            escape(cost.fix),
        )
    return Group(
        Text.assemble(
            ("Value reads", "bold"),
            f"  by cost per step ({READ_COST_NOTE})",
        ),
        table,
    )


def read_time_text(cost: ValueReadCost) -> str:
    """One read's measured time with its CPU time; "-" when the run did not time it."""
    if cost.read_time_s is None:
        return "-"
    cpu = f" ({1000 * cost.read_cpu_time_s:.3g})" if cost.read_cpu_time_s is not None else ""
    return f"{1000 * cost.read_time_s:.3g} ms{cpu}"


def _indented(table: Table) -> Table:
    table.pad_edge = True
    table.padding = (0, 1, 0, 2)
    return table
