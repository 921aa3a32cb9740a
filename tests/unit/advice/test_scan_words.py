"""The scan advice as people read it: the optimizer's update apart, and a stack
found but not advised with why and from how many layers, in the terminal and on
the page alike; a report saved before the reasons were kept reads as it did."""

from __future__ import annotations

import dataclasses
import html
import io
from pathlib import Path

from rich.console import Console

from tests.unit.advice.graphs import block_ops, inputs, outside_ops, report, update_ops
from tests.unit.advice.test_scan_advice import _trained_layer
from xlacli.analysis.advice.scan import advise_scan
from xlacli.flows.pages import saved_run_page
from xlacli.render.advice import advice_view
from xlacli.render.scan_words import scan_verdict
from xlacli.report.advice import ScanAdvice


def _text(advice: tuple[ScanAdvice, ...]) -> str:
    console = Console(file=io.StringIO(), width=400, color_system=None)
    for part in advice_view(report(scan_advice=advice)):
        console.print(part)
    return console.file.getvalue()  # type: ignore[attr-defined]


def _page(advice: tuple[ScanAdvice, ...], tmp_path: Path) -> str:
    """The page's text, its markup's escapes undone."""
    page = saved_run_page(report(scan_advice=advice), tmp_path / "report.html")
    return html.unescape(page)


def _trained() -> ScanAdvice:
    ops = [op for _ in range(64) for op in _trained_layer()] + outside_ops(4)
    (advice,) = advise_scan(inputs([*ops, *update_ops(3 * 64 + 2)], compile_time_s=4.0))
    return advice


def test_a_trained_stack_says_its_update_is_apart_and_why_scanning_never_pays(
    tmp_path: Path,
) -> None:
    advice = _trained()
    share = f"{advice.optimizer_share:.0%}"
    update = (
        f"the optimizer's per-parameter update: {advice.optimizer_instructions} HLO"
        f" instructions ({share} of the graph), which scan_layers does not change"
    )
    verdict = scan_verdict(advice)
    assert verdict.startswith("scan_layers would not pay here: predicted compile")
    assert "each scanned layer's gradient leaves the loop as a slice" in verdict
    assert verdict.endswith("it would pay at no depth of these layers")
    text = _text((advice,))
    assert update in text and verdict in text
    # The terminal keeps a stack not advised to what, where and why; the estimate
    # behind the verdict is on the page (and in the JSON).
    assert "each layer's update compiled afresh when scanned" not in text
    page = _page((advice,), tmp_path)
    assert "T" + update[1:] in page
    assert verdict in page
    assert "each layer's update compiled afresh when scanned" in page


def test_a_small_share_is_not_advised_with_the_depth_it_needs(tmp_path: Path) -> None:
    small = [op for _ in range(2) for op in block_ops()] + outside_ops(200)
    (advice,) = advise_scan(inputs(small))
    verdict = scan_verdict(advice)
    assert verdict.startswith("scan_layers would not pay here")  # the loop too
    assert "the layers make 6% of the graph, under the 30% advised" in verdict
    assert verdict.endswith(f"it would pay from about {advice.advised_from_layers} layers")
    # only the share: not advised, though the saving would pay
    share_only = dataclasses.replace(advice, not_advised_because=("share",))
    assert scan_verdict(share_only).startswith("scan_layers is not advised here: ")
    assert "optimizer" not in _text((advice,))
    assert verdict in _page((advice,), tmp_path)


def test_a_report_saved_before_the_reasons_reads_as_it_did() -> None:
    shallow = [op for _ in range(8) for op in block_ops()] + outside_ops(4)
    (advice,) = advise_scan(inputs(shallow))
    old = dataclasses.replace(advice, not_advised_because=(), advised_from_layers=0)
    assert scan_verdict(old).endswith(f"it pays from about {advice.break_even_layers} layers")
