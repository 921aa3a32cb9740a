"""The run page's SPMD, memory-and-precision and Dynamo sections in a real headless
Chromium: one tiny capture each, the section there with the run's real values,
no console error, no request, no sideways scroll at 1280 or 390 px.

The screenshots are written under the module's tmp folder for review.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser import Browser
from tests.conftest import EXAMPLES, REPO, run_cli
from tests.integration import test_html_browser as html_browser
from tests.integration.test_html_browser import open_clean, screenshots
from xlacli.units import format_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
browser, shots = html_browser.browser, html_browser.shots  # the same module-scoped fixtures


def compile_html(
    capture_once, folder: Path, example: str, *options: str
) -> tuple[Path, dict[str, Any]]:
    """The page of ``examples/EXAMPLE.py``'s documented run (shared with its golden
    report), as ``xlacli report --format html`` writes it, and the report it shows."""
    captured = capture_once("compile", f"examples/{example}.py", *options)
    assert captured.result.code == 0, captured.result.stderr
    page = folder / f"{example.replace('/', '-')}.html"
    shown = run_cli("report", captured.run, "--format", "html", "--output", page, cwd=REPO)
    assert shown.code == 0, shown.stderr
    return page, captured.report


def line_in(example: str, fragment: str) -> str:
    """``examples/x/y.py:N``, as the page shows the line holding ``fragment``."""
    path = EXAMPLES / f"{example}.py"
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if fragment in line:
            return f"{path.relative_to(REPO)}:{number}"
    raise AssertionError(f"{fragment!r} not in {path}")


def section_text(browser: Browser, section_id: str) -> str:
    return str(browser.evaluate(f"document.getElementById('{section_id}').innerText"))


def test_spmd_section(browser: Browser, capture_once, tmp_path: Path, shots: Path) -> None:
    page, report = compile_html(
        capture_once, tmp_path, "spmd/data_parallel_mlp", "--devices", "4", "--steps", "3"
    )
    screenshots(browser, page, shots, "spmd")
    spmd = report["graphs"][0]["spmd"]
    load = browser.open(page, scripts=False)  # readable with JavaScript off
    assert load.console_errors == [] and load.requests == []
    markup = browser.outer_html("#spmd")
    assert "4 devices" in markup and '<code class="mesh">4</code> (data)' in markup
    assert "<strong>(data, None)</strong>" in markup  # the batch, split over "data"
    assert line_in("spmd/data_parallel_mlp", "mark_sharding(batch") in markup
    assert all(op["name"] in markup for op in spmd["collectives"])
    assert "all-reduce</span> ×" in markup and "{{0,1,2,3}}" in markup
    open_clean(browser, page)
    assert "SPMD" in browser.evaluate("document.querySelector('nav.contents').innerText")


def test_memory_section(browser: Browser, capture_once, tmp_path: Path, shots: Path) -> None:
    page, report = compile_html(capture_once, tmp_path, "memory/block_bf16", "--steps", "1")
    screenshots(browser, page, shots, "memory")
    open_clean(browser, page)
    text = section_text(browser, "memory")
    (graph,) = (g for g in report["graphs"] if g.get("memory"))
    peak = browser.evaluate("document.querySelector('#memory .step-peak').textContent")
    step_peak = max(s["peak_bytes"] for s in report["memory"]["steps"])
    assert peak == format_bytes(step_peak), peak
    assert "not available on CPU" in text
    assert "bf16 100% (compiled: f32 100%)" in text  # XLA:CPU upcasts bf16 matmuls
    assert "aten__softmax" in text and line_in("memory/block", "softmax") in text
    assert graph["hash"][:8] in text


def test_dynamo_section(browser: Browser, capture_once, tmp_path: Path, shots: Path) -> None:
    example = "dynamo/graph_break"
    page, report = compile_html(capture_once, tmp_path, example, "--mode", "dynamo", "--steps", "3")
    screenshots(browser, page, shots, "dynamo")
    open_clean(browser, page)
    text = section_text(browser, "dynamo")
    where = line_in(example, "# graph break: Tensor.item()")
    assert "run by xlacli --mode dynamo" in text
    assert f"graph break ×{report['dynamo']['graph_breaks'][0]['count']} · {where}" in text
    assert "Tensor.item()" in text  # Dynamo's reason
    target = browser.evaluate(
        "Array.from(document.querySelectorAll('#dynamo .src-line.target'), l => l.textContent)"
    )
    assert any("if h.sum().item() > 0" in line for line in target), target
    guard = next(f for f in report["dynamo"]["frames"] if f["guard_failure"])
    assert guard["guard_failure"] in text and "Dynamo recompiles" in text
    assert "forward" in text and "torch_dynamo_resume_in_forward" in text


def test_advice_section(browser: Browser, capture_once, tmp_path: Path, shots: Path) -> None:
    page, report = compile_html(capture_once, tmp_path, "advice/variable_lengths", "--steps", "12")
    screenshots(browser, page, shots, "advice")
    open_clean(browser, page)
    text = section_text(browser, "advice")
    assert "Where your graphs come from" in text
    assert line_in("advice/variable_lengths", "hidden = torch.relu") in text
    (advice,) = report["bucket_advice"]
    assert "2 (advised)" in text  # two buckets: 7 and 16
    assert "EDGES = (7, 16)" in text
    assert f"{len(advice['sizes'])} sizes over 12 steps, 8 compiles" in text
    assert "5 (2x), 6 (1x), 7 (2x)" in text
