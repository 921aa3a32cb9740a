"""Context of the run page's advice section: where the graphs come from (compile
cost by source line) and the scan, bucket and value-read advice."""

from __future__ import annotations

import dataclasses
from typing import Any

from xlacli.render.advice import (
    BACKWARD_NOTE,
    COST_NOTE,
    READ_COST_NOTE,
    backward_share,
    bucket_notes,
    bucket_verdict,
    cost_line_name,
    line_name,
    read_time_text,
)
from xlacli.render.html.context import RunContext, graph_anchor
from xlacli.render.scan_words import scan_model_note, scan_optimizer_note, scan_verdict
from xlacli.report.advice import CompileCost

TOP_LINES = 15


def context(run: RunContext) -> dict[str, Any] | None:
    """The advice sections of the report; None when it has none."""
    report = run.report
    cost = report.compile_cost
    if cost is None and not (report.scan_advice or report.bucket_advice or report.value_read_costs):
        return None
    return {
        "note": COST_NOTE,
        "read_note": READ_COST_NOTE,
        "cost": _cost(cost) if cost is not None else None,
        "scan": [
            {
                **_plain(advice),
                "anchor": graph_anchor(advice.graph_hash),
                "call": line_name(advice.call_site),
                "lines": [line_name(x) for x in advice.lines],
                "verdict": scan_verdict(advice),
                "optimizer_note": scan_optimizer_note(advice)
                if advice.optimizer_instructions
                else "",
                "model_note": scan_model_note(advice),
            }
            for advice in report.scan_advice
        ],
        "buckets": [
            {
                **_plain(advice),
                "where": line_name(advice.location),
                "options": [
                    {
                        "edges": ", ".join(map(str, o.edges)),
                        "compiles": o.compiles,
                        "waste": o.padding_waste,
                        "chosen": i == advice.chosen and bool(advice.code),
                    }
                    for i, o in enumerate(advice.options)
                ],
                "sizes_seen": ", ".join(f"{size} ({steps}x)" for size, steps in advice.sizes),
                "notes": bucket_notes(advice),
                "verdict": bucket_verdict(advice).removeprefix("* "),
            }
            for advice in report.bucket_advice
        ],
        "reads": [
            {**_plain(cost), "where": line_name(cost.location), "read_text": read_time_text(cost)}
            for cost in report.value_read_costs
        ],
    }


def _cost(cost: CompileCost) -> dict[str, Any]:
    return {
        "hlo_instructions": cost.hlo_instructions,
        "compile_time_s": cost.compile_time_s,
        "trained": any(line.backward_hlo_instructions for line in cost.lines),
        "backward_note": BACKWARD_NOTE,
        "lines": [
            {**_plain(line), "where": cost_line_name(line), "backward": backward_share(line)}
            for line in cost.lines[:TOP_LINES]
        ],
    }


def _plain(item: Any) -> dict[str, Any]:
    """A dataclass's own fields, not deep-copied (``asdict`` would turn tuples into lists)."""
    return {field.name: getattr(item, field.name) for field in dataclasses.fields(item)}
