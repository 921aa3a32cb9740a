"""The HTML pages in a real headless Chromium: no console error, no network request,
one timeline mark per step, every recompile of examples/recompile/ with its line,
sorting, search, JavaScript off, escaping; screenshots at 1280x900 and 390x844.

Each capture runs once per module (few steps); the screenshots are written
under the module's tmp folder for review.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.browser import Browser, find_browser, headless_browser
from tests.conftest import EXAMPLES, MODELS, REPO, run_cli
from tests.integration.test_recompile_e2e import CASES, line_of
from tests.report_json import step_records
from xlacli.render.profile import BREAKDOWN_LABELS

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
STEPS = 5  # the examples' documented runs; their recompiles happen by step 3
DESKTOP, PHONE = (1280, 900), (390, 844)
HOSTILE_NAME = '<script>alert("x\'s") ünï'  # a file name holds no "/"
HOSTILE_LINE = "</script><script>alert('ü')</script> \"quotes\""
IR_LINKED = ("intermediate_shape", "graph_structure", "constant_value")
MARKS = "document.querySelectorAll('svg.timeline .mark').length"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = find_browser()
    if executable is None:
        pytest.skip("no Chromium found (apt-get install chromium): the HTML tests need one")
    with headless_browser(executable) as opened:
        yield opened


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


@dataclass(frozen=True)
class RecompileRun:
    run: Path  # the shared capture's run folder: read, never written
    page: Path  # its HTML page, rendered by `xlacli report` into this module's folder


@pytest.fixture(scope="module")
def recompile_runs(
    capture_once, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, RecompileRun]:
    """Every recompile example's documented run (shared with the golden reports and
    the recompile tests), and its page as ``xlacli report --format html`` writes it."""
    root = tmp_path_factory.mktemp("recompile")
    runs = {}
    for example in CASES:
        captured = capture_once("compile", f"examples/recompile/{example}.py", "--steps", "5")
        assert captured.result.code == 0, captured.result.stderr
        page = root / example / "report.html"
        shown = run_cli("report", captured.run, "--format", "html", "--output", page, cwd=REPO)
        assert shown.code == 0 and page.is_file(), shown.stderr
        runs[example] = RecompileRun(captured.run, page)
    return runs


def open_clean(browser: Browser, page: Path, size: tuple[int, int] = DESKTOP) -> None:
    """Load a page and check it logged no error and fetched nothing."""
    load = browser.open(page, width=size[0], height=size[1])
    assert load.console_errors == [], load.console_errors
    assert load.requests == [], load.requests


def screenshots(browser: Browser, page: Path, folder: Path, name: str) -> None:
    """The page at desktop and phone sizes, each loaded clean and saved as a PNG."""
    for width, height in (DESKTOP, PHONE):
        open_clean(browser, page, (width, height))
        scroll = browser.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"{name} scrolls sideways at {width} px ({scroll})"
        path = browser.screenshot(folder / f"{name}-{width}x{height}.png")
        assert path.stat().st_size > 10_000


@pytest.mark.parametrize("example", list(CASES))
def test_every_recompile_appears_with_its_line(
    browser: Browser, recompile_runs: dict[str, RecompileRun], shots: Path, example: str
) -> None:
    run = recompile_runs[example]
    report = json.loads((run.run / "report.json").read_text())
    screenshots(browser, run.page, shots, example)
    open_clean(browser, run.page)
    assert browser.evaluate(MARKS) == len(step_records(report)) == STEPS
    category, fragment, step = CASES[example]
    steady = browser.evaluate(
        "Array.from(document.querySelectorAll('article.compile.steady'), a => a.innerText)"
    )
    location = line_of(example, fragment, relative=True)
    assert any(
        category in text and location in text and f"step {step}" in text for text in steady
    ), steady
    target = browser.evaluate(
        "Array.from(document.querySelectorAll('article.compile.steady .src-line.target'),"
        " l => l.textContent)"
    )
    assert any(fragment in line for line in target), target
    for index, event in enumerate(report["events"]):
        if event["cause"]["category"] != "first_compile":
            text = browser.evaluate(f"document.getElementById('compile-{index}').textContent")
            assert event["cause"]["category"] in text
    steady_marks = browser.evaluate(
        "Array.from(document.querySelectorAll('svg.timeline .mark.steady'), m => m.dataset.step)"
    )
    assert str(step) in steady_marks
    (index, event), *_ = ((i, e) for i, e in enumerate(report["events"]) if e["steady_state"])
    hover = browser.evaluate(
        f"document.querySelector('svg.timeline .mark[data-step=\"{step}\"] title').textContent"
    )
    assert event["graph_hash"][:8] in hover, hover
    assert re.search(r"compiled \w{8} in [\d.]+ (ms|µs|s)", hover), hover
    if example in IR_LINKED:  # the IR line at the cause links to its explanation
        links = browser.evaluate(
            f"document.querySelectorAll('a.linked[href=\"#compile-{index}\"]').length"
        )
        assert links > 0


def test_sorting_by_a_header_click(
    browser: Browser, recompile_runs: dict[str, RecompileRun]
) -> None:
    open_clean(browser, recompile_runs["input_shape"].page)
    column = (
        "Array.from(document.querySelectorAll('table.graphs tbody tr'),"
        " r => parseFloat(r.cells[{index}].dataset.sort))"
    )
    headers = browser.evaluate(
        "Array.from(document.querySelectorAll('table.graphs thead th'), h => h.innerText)"
    )
    index = headers.index("compile")
    browser.click(f"table.graphs thead th:nth-child({index + 1}) button")
    first = browser.evaluate(column.format(index=index))
    assert len(first) >= 2 and first == sorted(first, reverse=True)
    browser.click(f"table.graphs thead th:nth-child({index + 1}) button")
    second = browser.evaluate(column.format(index=index))
    assert second == sorted(first)
    assert (
        browser.evaluate(
            f"document.querySelectorAll('table.graphs th')[{index}].getAttribute('aria-sort')"
        )
        == "ascending"
    )
    browser.press_enter(f"table.graphs thead th:nth-child({index + 1}) button")  # the keyboard
    assert browser.evaluate(column.format(index=index)) == sorted(first, reverse=True)


def test_search_marks_matching_lines(
    browser: Browser, recompile_runs: dict[str, RecompileRun]
) -> None:
    open_clean(browser, recompile_runs["input_shape"].page)
    found = browser.evaluate(
        "new Promise(done => { const block = document.querySelector("
        "'.code-block[data-role=hlo_after]'); block.open = true;"
        " const input = block.querySelector('.search input'); input.value = 'fusion';"
        " input.dispatchEvent(new Event('input'));"
        " setTimeout(() => done([block.querySelectorAll('pre mark').length,"
        " block.querySelector('.search output').textContent]), 400); })"
    )
    assert found[0] > 0 and f"{found[0]} matching line" in found[1]


def test_readable_with_javascript_off(
    browser: Browser, recompile_runs: dict[str, RecompileRun]
) -> None:
    load = browser.open(recompile_runs["input_shape"].page, scripts=False)
    assert load.console_errors == [] and load.requests == []
    assert len(browser.query("svg.timeline .mark")) == STEPS
    assert all("hidden" in box for box in browser.query(".search"))  # search needs JS
    assert "input_shape" in browser.outer_html("#recompiles")
    assert len(browser.query("details.code-block")) > 0  # collapsing needs none


def test_the_harness_sees_errors_and_requests(browser: Browser, tmp_path: Path) -> None:
    """The checks above can fail: a console error and a request are both caught."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!doctype html><title>bad</title><img src='http://127.0.0.1:9/x.png' alt=''>"
        "<script>console.error('boom')</script>"
    )
    load = browser.open(page)
    assert "boom" in load.console_errors
    assert "http://127.0.0.1:9/x.png" in load.requests


def test_hostile_model_file_name_renders_as_text(
    browser: Browser, tmp_path: Path, shots: Path
) -> None:
    model = tmp_path / f"{HOSTILE_NAME}.py"
    source = (EXAMPLES / "mlp.py").read_text()
    model.write_text(
        source.replace(
            "        return self.layers(x)",
            f"        # {HOSTILE_LINE}\n        return self.layers(x)",
        )
    )
    result = run_cli(
        "compile", model.name, "--steps", "1", "--out", tmp_path / "run", "--html", cwd=tmp_path
    )
    assert result.code == 0, result.stderr
    page = tmp_path / "run" / "report.html"
    screenshots(browser, page, shots, "hostile")
    assert browser.evaluate("document.scripts.length") == 1
    assert HOSTILE_NAME in browser.evaluate("document.title")
    assert HOSTILE_NAME in browser.evaluate("document.querySelector('h1').innerText")
    snippet = browser.evaluate("document.querySelector('article.compile pre.snippet').textContent")
    assert HOSTILE_LINE in snippet  # the source line, markup and quotes as text
    where = browser.evaluate("document.querySelector('article.compile .loc').textContent")
    assert where.startswith(HOSTILE_NAME + ".py:")


def test_profile_page(browser: Browser, tmp_path: Path, shots: Path) -> None:
    run = tmp_path / "profile"
    result = run_cli(
        "profile",
        "examples/mlp.py",
        "--steps",
        "6",
        "--warmup",
        "2",
        "--out",
        run,
        "--html",
        cwd=REPO,
    )
    assert result.code == 0, result.stderr
    summary = json.loads((run / "profile.json").read_text())
    screenshots(browser, run / "report.html", shots, "profile")
    open_clean(browser, run / "report.html")
    assert browser.evaluate("document.querySelectorAll('svg.chart .bar').length") == len(
        summary["step_times_s"]
    )
    assert browser.evaluate("document.querySelectorAll('svg.chart line.p50').length") == 1
    assert browser.evaluate("document.querySelectorAll('svg.stacked rect').length") == len(
        BREAKDOWN_LABELS
    )
    assert (
        browser.evaluate("document.querySelectorAll('table.ops tbody tr').length")
        == len(summary["top_ops"])
        > 0
    )


def test_check_page_lists_regressions_first(browser: Browser, tmp_path: Path, shots: Path) -> None:
    shutil.copy(MODELS / "gate.py", tmp_path / "model.py")
    baseline = tmp_path / "baseline.json"
    check = ("check", "model.py", "--baseline", baseline, "--steps", "3")
    assert run_cli(*check, "--update-baseline", cwd=tmp_path).code == 0
    data = json.loads(baseline.read_text())
    data["compilations"] = 0  # the run now "regresses"
    baseline.write_text(json.dumps(data))
    result = run_cli(*check, "--out", tmp_path / "run", "--html", cwd=tmp_path)
    assert result.code == 1, result.stderr
    page = tmp_path / "run" / "report.html"
    screenshots(browser, page, shots, "check")
    rows = browser.evaluate(
        "Array.from(document.querySelectorAll('table.checks tbody tr'), r => r.className)"
    )
    assert rows[0] == "check-regression" and "check-ok" in rows


def test_hlo_diff_page(
    browser: Browser, recompile_runs: dict[str, RecompileRun], shots: Path, tmp_path: Path
) -> None:
    run = recompile_runs["input_shape"].run
    report = json.loads((run / "report.json").read_text())
    left, right = (run / graph["files"]["hlo_before"] for graph in report["graphs"][:2])
    page = tmp_path / "diff.html"
    result = run_cli("diff-hlo", left, right, "--format", "html", "--output", page, cwd=REPO)
    assert result.code == 1, result.stderr
    screenshots(browser, page, shots, "diff")
    assert browser.evaluate("document.querySelectorAll('article.change').length") > 0
    assert "different" in browser.evaluate("document.querySelector('.status').innerText")


def test_report_command_writes_the_page_where_asked(
    browser: Browser, recompile_runs: dict[str, RecompileRun], tmp_path: Path
) -> None:
    run = recompile_runs["input_dtype"].run
    page = tmp_path / "pages" / "run.html"
    result = run_cli("report", run, "--format", "html", "--output", page, cwd=REPO)
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == str(page)
    open_clean(browser, page)
    hrefs = browser.evaluate(
        "Array.from(document.querySelectorAll('.code-block a'), a => a.getAttribute('href'))"
    )
    assert hrefs and all(not href.startswith("/") for href in hrefs)
    assert all((page.parent / href).resolve().is_file() for href in hrefs)
    missing = run_cli("report", tmp_path, "--format", "html", cwd=REPO)
    assert missing.code == 2 and "not an xlacli run folder" in missing.stderr


def test_a_failed_run_still_gets_its_page(browser: Browser, tmp_path: Path) -> None:
    model = MODELS / "bad" / "forward_raises.py"
    result = run_cli("compile", model, "--steps", "2", "--out", tmp_path / "run", "--html")
    assert result.code == 3  # the user's error, and the page beside it
    assert result.stderr.index("HTML report:") < result.stderr.index("xlacli: error:")
    open_clean(browser, tmp_path / "run" / "report.html")
    status = browser.evaluate("document.querySelector('.status').innerText")
    assert status.startswith("model · exit 3: step 0 raised RuntimeError")
