"""The HTML pages without a browser: escaping, the CSP, sections, snippets, capping."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from xlacli.analysis.recompiles.phases import TimelineEdges
from xlacli.assemble.source_snippets import load_snippets, read_snippet, save_snippets
from xlacli.flows.pages import saved_run_page, write_run_html
from xlacli.render.html import run_page
from xlacli.render.html.page import csp_hash
from xlacli.render.html.run_page import RUN_SECTIONS, Section
from xlacli.render.html.svg import TimelineMark, fold_marks, timeline_svg
from xlacli.render.html.text_blocks import MAX_LINES
from xlacli.report.check import save_check
from xlacli.report.profile import LineTime, OpTime, ProfileSummary, StepTimes, save_summary
from xlacli.report.run_report import (
    CompileCause,
    CompileEvent,
    FallbackOp,
    GraphRecord,
    RunReport,
    StepRecord,
    save_report,
)

HOSTILE = '<script>alert("x\'s")</script> ünïcødé'
HOSTILE_NAME = '<script>alert("x\'s") ünï'  # a file name holds no "/"


class _Elements(HTMLParser):
    """Counts start tags and keeps the text, as a browser would parse the page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: dict[str, int] = {}
        self.text: list[str] = []
        self.inline: dict[str, str] = {}
        self._open: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self._open = tag

    def handle_endtag(self, tag: str) -> None:
        self._open = None

    def handle_data(self, data: str) -> None:
        if self._open in ("script", "style"):
            self.inline[self._open] = self.inline.get(self._open, "") + data
        else:
            self.text.append(data)


def _parse(page: str) -> _Elements:
    parser = _Elements()
    parser.feed(page)
    return parser


def _graph(graph_hash: str, files: dict[str, str]) -> GraphRecord:
    return GraphRecord(
        hash=graph_hash,
        site=None,
        trigger="step_end",
        frames=(f"forward ({HOSTILE_NAME}.py:3)",),
        ir_nodes=3,
        hlo_instructions=4,
        optimized_hlo_instructions=2,
        fusions=1,
        input_bytes=1024,
        output_bytes=64,
        temp_bytes=0,
        compilations=1,
        compile_time_s=0.5,
        executions=3,
        execute_time_s=0.001,
        total_execute_time_s=0.003,
        first_step=0,
        files=files,
    )


@pytest.fixture
def hostile_run(tmp_path: Path) -> Path:
    """A run folder whose model, source lines and HLO all carry markup and quotes."""
    source = tmp_path / f"{HOSTILE_NAME}.py"
    source.write_text("import torch\n\n# " + HOSTILE + "\nx = 1\n", encoding="utf-8")
    run = tmp_path / "run"
    graph_dir = run / "graphs" / "abc"
    graph_dir.mkdir(parents=True)
    (graph_dir / "hlo.before.txt").write_text(f'ROOT %x = f32[] constant(0) // "{HOSTILE}"\n')
    ir = f"IR {{\n  %0 = f32[] prim::Constant(), location=forward@{source.name}:3\n}}\n"
    (graph_dir / "ir.txt").write_text(ir)
    files = {"hlo_before": "graphs/abc/hlo.before.txt", "ir": "graphs/abc/ir.txt"}
    cause = CompileCause("input_shape", f"{source}:3", None, f"{HOSTILE} -> after", HOSTILE)
    report = RunReport(
        model=str(source),
        device="CPU",
        steps=3,
        steps_requested=3,
        train=False,
        run_dir=str(run),
        compilations=2,
        executions=3,
        total_compile_time_s=1.0,
        total_execute_time_s=0.003,
        graphs=(_graph("abc", files), _graph("def", {})),
        step_records=tuple(
            StepRecord(step, 0.01, int(step != 1), 1, (), ("abc",), value_reads=int(step == 2))
            for step in range(3)
        ),
        versions={"torch_xla": HOSTILE},
        warmup=2,
        events=(
            CompileEvent(0, "abc", 0.5, False, CompileCause("first_compile", None, None, "")),
            CompileEvent(2, "abc", 0.5, True, cause),
        ),
        fallback_ops=(FallbackOp(f"aten::{HOSTILE}", 2, f"{source}:3"),),
    )
    save_report(report, run)
    save_snippets(report, run)
    source.unlink()  # the page must not need the working tree
    return run


def test_hostile_text_renders_as_text(hostile_run: Path) -> None:
    page = write_run_html(hostile_run).read_text(encoding="utf-8")
    parsed = _parse(page)
    assert parsed.tags["script"] == 1  # ours only
    text = "".join(parsed.text)
    assert text.count(HOSTILE) >= 6  # title, model, version, snippet, HLO, IR, fallback, detail
    assert "<script>alert" not in page
    assert text.count(HOSTILE_NAME) >= 3  # the model's name: title, header, snippet, IR
    assert "&lt;script&gt;alert(&#34;x&#39;s&#34;)&lt;/script&gt; ünïcødé" in page


def test_csp_allows_only_the_inline_style_and_script(hostile_run: Path) -> None:
    page = write_run_html(hostile_run).read_text(encoding="utf-8")
    parsed = _parse(page)
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    content = html.unescape(policy.group(1))
    directives = dict(part.strip().split(" ", 1) for part in content.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == csp_hash(parsed.inline["script"])
    assert directives["style-src"] == csp_hash(parsed.inline["style"])
    assert "http:" not in page and "https:" not in page  # nothing to fetch, nowhere to link


def test_snippets_are_read_at_capture_time(hostile_run: Path) -> None:
    snippets = load_snippets(hostile_run)
    (snippet,) = snippets.values()
    assert snippet.line == 3 and snippet.first_line == 1
    assert snippet.lines[2] == "# " + HOSTILE
    page = write_run_html(hostile_run).read_text(encoding="utf-8")
    assert 'class="src-line target"><span class="ln">3</span># &lt;script&gt;' in page


def test_ir_lines_link_to_the_explanation(hostile_run: Path) -> None:
    page = write_run_html(hostile_run).read_text(encoding="utf-8")
    assert '<a class="linked" href="#compile-1"' in page


def test_one_timeline_mark_per_step_and_steady_recompiles_marked(hostile_run: Path) -> None:
    page = write_run_html(hostile_run).read_text(encoding="utf-8")
    marks = re.findall(r'<g class="mark ([a-z ]+)" data-step="(\d+)"', page)
    assert [(step, kinds) for kinds, step in marks] == [
        ("0", "compiled"),
        ("1", "cached"),
        ("2", "compiled steady"),
    ]
    assert page.count('class="flag read"') == 1  # step 2 also read a value


def test_page_links_to_the_run_folder_from_where_it_is_written(
    hostile_run: Path, tmp_path: Path
) -> None:
    page = write_run_html(hostile_run, tmp_path / "out" / "page.html").read_text()
    assert 'href="../run/graphs/abc/hlo.before.txt"' in page


def test_large_files_are_capped_with_a_link(hostile_run: Path) -> None:
    path = hostile_run / "graphs" / "abc" / "hlo.before.txt"
    path.write_text("".join(f"  %i{n} = f32[] constant({n})\n" for n in range(MAX_LINES * 3)))
    page = write_run_html(hostile_run).read_text(encoding="utf-8")
    assert f"constant({MAX_LINES - 1})" in page and f"constant({MAX_LINES})\n" not in page
    assert f"{MAX_LINES * 3} lines, first {MAX_LINES} shown" in page


def test_a_section_is_one_template_and_one_context_function(
    hostile_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = Section("extra", "Extra view", "sections/fallbacks.html.j2", lambda run: None)
    monkeypatch.setattr(run_page, "RUN_SECTIONS", (*RUN_SECTIONS, extra))
    page = write_run_html(hostile_run).read_text()
    assert 'id="extra"' not in page  # None: nothing to show, no heading, no contents entry
    shown = Section(
        "extra",
        "Extra view",
        "sections/fallbacks.html.j2",
        lambda run: {
            "ops": [{"op": run.report.device, "count": 1, "location": None, "snippet": None}]
        },
    )
    monkeypatch.setattr(run_page, "RUN_SECTIONS", (*RUN_SECTIONS, shown))
    page = write_run_html(hostile_run).read_text()
    assert 'id="extra"' in page and 'href="#extra"' in page


def test_profile_section_draws_the_charts(hostile_run: Path) -> None:
    summary = ProfileSummary(
        model="m.py",
        device="CPU",
        steps=4,
        warmup=1,
        step_times_s=(0.01, 0.02, 0.01, 0.03),
        step_time_s=StepTimes(0.015, 0.027, 0.03, 0.0175),
        batch_size=4,
        samples_per_s=266.0,
        breakdown={
            "window_s": 0.1,
            "python_s": 0.04,
            "graph_s": 0.05,
            "device_wait_s": 0.01,
            "device_busy_s": 0.06,
            "overlap_s": 0.05,
        },
        top_ops=(OpTime("dot.1", 0.02, 4, "dot", None, None, "m", "/u/m.py:7", backward=True),),
        graphs=(),
        window_compiles=0,
        trace_files=(),
        logdir="",
        session="",
        run_dir="",
        source_of_op_times="trace events",
        lines=(LineTime("/u/m.py:7", 0.02, 0.0, 0.02),),
        line_share=1.0,
    )
    save_summary(summary, hostile_run)
    page = write_run_html(hostile_run).read_text()
    assert "Device time by user line (100%" in page and "m.py:7 (backward)" in page
    assert "while the host did other work" in page
    assert page.count('class="bar"') == 4
    assert 'class="p50"' in page and 'class="p90"' in page and 'class="seg-5"' in page


def test_check_section_lists_regressions_first(hostile_run: Path) -> None:
    checks = [
        {"name": "distinct graphs", "baseline": "2", "current": "2", "status": "ok"},
        {"name": "compilations", "baseline": "1", "current": "2", "status": "regression"},
    ]
    save_check({"passed": False, "baseline": "b.json", "checks": checks}, hostile_run)
    page = write_run_html(hostile_run).read_text()
    assert page.index("check-regression") < page.index("check-ok")


def test_timeline_svg_has_a_box_before_it_paints() -> None:
    svg = timeline_svg([TimelineMark(0, "cached", False, '"<hover>"')])
    assert 'viewBox="0 0 ' in svg and "&#34;&lt;hover&gt;&#34;" in svg


def test_timeline_svg_draws_the_loops_start_and_its_warm_up_end() -> None:
    marks = [TimelineMark(step, "cached", False, "") for step in range(6)]
    svg = timeline_svg(marks, TimelineEdges(loop_start=2, warm=4))
    pitch = 15  # a mark and its gap
    assert f'class="setup-edge" x1="{2 * pitch - 1.5}"' in svg
    assert f'class="boundary" x1="{4 * pitch - 1.5}"' in svg


def test_a_long_run_of_equal_steps_is_drawn_as_its_ends_and_one_folded_mark() -> None:
    """10,000 steps: the compile, the warm-up, 8 cached steps, one dashed mark for the
    rest, the last 2; a steady recompile in the middle keeps its own mark."""
    marks = [TimelineMark(0, "compiled", False, "")]
    marks += [TimelineMark(step, "cached", False, "") for step in range(1, 10_000)]
    marks[5_000] = TimelineMark(5_000, "compiled", True, "recompiled")
    shown, edges = fold_marks(marks, TimelineEdges(loop_start=None, warm=2))
    assert [m.kind for m in shown[:3]] == ["compiled", "cached", "cached"] and edges.warm == 2
    assert [m.step for m in shown if m.kind == "compiled"] == [0, 5_000]
    folded = [m for m in shown if m.kind == "folded"]
    assert len(folded) == 2 and "4,988 more cached steps" in folded[0].hover
    assert len(shown) == 2 + 10 + 1 + 1 + 10 + 1
    svg = timeline_svg(marks, TimelineEdges(loop_start=None, warm=2))
    assert svg.count('class="mark ') == len(shown) and "10000 steps" in svg
    assert len(svg) < 20_000  # it was 10,000 marks, ~2 MB of page
    short = [TimelineMark(step, "cached", False, "") for step in range(20)]
    assert fold_marks(short, TimelineEdges(None, None))[0] == short  # short runs stay whole


def test_a_value_read_every_ten_steps_is_drawn_as_its_first_and_last_repeat() -> None:
    marks = [TimelineMark(0, "compiled", False, ""), TimelineMark(1, "compiled", False, "")]
    marks += [
        TimelineMark(s, "read" if s % 10 == 0 else "cached", False, "") for s in range(2, 10_000)
    ]
    shown, edges = fold_marks(marks, TimelineEdges(loop_start=None, warm=2))
    assert edges.warm == 2 and len(shown) < 40
    [folded] = [m for m in shown if m.kind == "folded"]
    assert "997 more repeats of the 10 steps before: 1 read, 9 cached" in folded.hover
    assert [m.step for m in shown[-10:]] == list(range(9_990, 10_000))  # the last repeat


def test_snippet_of_an_unreadable_or_out_of_range_location(tmp_path: Path) -> None:
    file = tmp_path / "a.py"
    file.write_text("one\ntwo\n")
    assert read_snippet(f"{tmp_path}/missing.py:1") is None
    assert read_snippet(f"{file}:9") is None
    assert read_snippet(f"{file}:2") is not None
    assert load_snippets(tmp_path) == {}
    (tmp_path / "sources.json").write_text(json.dumps([1]))
    assert load_snippets(tmp_path) == {}


def test_run_page_html_without_graphs_or_steps(hostile_run: Path, tmp_path: Path) -> None:
    from xlacli.report.run_report import load_report

    report = load_report(hostile_run)
    empty = RunReport(
        **{**report.__dict__, "graphs": (), "step_records": (), "events": (), "fallback_ops": ()}
    )
    page = saved_run_page(empty, tmp_path / "x.html")
    assert 'id="timeline"' not in page and 'id="graphs"' not in page


def test_diff_page_escapes_hlo_text_and_sources(tmp_path: Path) -> None:
    from tests.conftest import ASSETS
    from xlacli.hlo.inputs import diff_paths
    from xlacli.paths import read_text_or_none
    from xlacli.render.html.diff_page import diff_page_html

    hostile = "<script>alert('ü')</script>"
    sides = []
    for name in ("torch_mlp_relu", "torch_mlp_gelu"):
        text = (ASSETS / "hlo" / f"{name}.after_optimizations.txt").read_text()
        path = tmp_path / f"{name}.txt"
        path.write_text(text.replace('source_file="', f'source_file="{hostile}'))
        sides.append(path)
    page = diff_page_html(diff_paths(sides[0], sides[1], "post"), read_text_or_none)
    parsed = _parse(page)
    assert parsed.tags["script"] == 1
    assert hostile in "".join(parsed.text)
    assert 'class="change kind-changed"' in page and 'class="pattern kind-added"' in page
    whole = re.search(r'<pre class="code">(.*?)</pre>', page, re.S)
    assert whole is not None and whole.group(1).count("\n") > 10  # one line per line


def test_ir_block_keeps_one_line_per_line(hostile_run: Path) -> None:
    page = write_run_html(hostile_run).read_text(encoding="utf-8")
    ir = re.search(r'data-role="ir">.*?<pre class="code">(.*?)</pre>', page, re.S)
    assert ir is not None
    lines = _parse(ir.group(1)).text
    assert "".join(lines).splitlines()[0] == "IR {"
    assert len("".join(lines).splitlines()) == 3
