"""The run page's SPMD, memory-and-precision and Dynamo sections, from hand-built
reports: each shows its facts, is left out when the run has none, and escapes
every string the user's code or the compiler could have put in the report."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.unit.render.test_html_page import HOSTILE, _graph, _parse
from xlacli.assemble.source_snippets import save_snippets
from xlacli.flows.pages import saved_run_page, write_run_html
from xlacli.report.memory import (
    BufferRecord,
    CheckpointFacts,
    GraphMemory,
    GraphPrecision,
    PrecisionMix,
    RunMemory,
    StepMemory,
)
from xlacli.report.run_report import (
    DynamoFrameRecord,
    DynamoRecord,
    GraphBreakRecord,
    RunReport,
    StepRecord,
    save_report,
)
from xlacli.report.sharding import CollectiveOp, GraphSpmd, MeshRecord, TensorSharding

ESCAPED = "&lt;script&gt;alert(&#34;x&#39;s&#34;)&lt;/script&gt; ünïcødé"
SECTIONS = ('id="spmd"', 'id="memory"', 'id="dynamo"')


def _report(tmp_path: Path, *graphs: object, **fields: object) -> RunReport:
    return RunReport(
        model=str(tmp_path / "model.py"),
        device="CPU",
        steps=3,
        steps_requested=3,
        train=True,
        run_dir=str(tmp_path / "run"),
        compilations=len(graphs),
        executions=3,
        total_compile_time_s=1.0,
        total_execute_time_s=0.01,
        graphs=graphs,  # type: ignore[arg-type]
        step_records=tuple(StepRecord(s, 0.01, int(s == 0), 1, (), ("abc",)) for s in range(3)),
        **fields,  # type: ignore[arg-type]
    )


def _page(report: RunReport) -> str:
    return saved_run_page(report, Path(report.run_dir) / "report.html")


def _section(page: str, section_id: str) -> str:
    start = page.index(f'<section id="{section_id}"')
    return page[start : page.index("</section>", start)]


def _spmd() -> GraphSpmd:
    return GraphSpmd(
        devices=4,
        mesh=MeshRecord((2, 2), ("data", "model"), (0, 1, 2, 3)),
        inputs=(
            TensorSharding(
                0,
                "f32[16,32]",
                "f32[8,16]",
                "{devices=[2,2]0,1,2,3}",
                "(data, model)",
                f"/src/{HOSTILE}.py:7",
            ),
            TensorSharding(1, "f32[32]", "f32[32]", "{replicated}", "replicated"),
        ),
        outputs=(TensorSharding(0, "f32[]", "f32[]", None, "replicated (propagated)"),),
        collectives=(
            CollectiveOp("all-reduce", "all-reduce.1", 2048, "{{0,1},{2,3}}", False, "/m.py:9"),
            CollectiveOp("all-gather", f"all-gather.{HOSTILE}", 512, "{{0,2},{1,3}}", True, None),
        ),
    )


def test_a_run_without_the_three_shows_none_of_their_sections(tmp_path: Path) -> None:
    page = _page(_report(tmp_path, _graph("abc", {})))
    assert not any(section in page for section in SECTIONS)


def test_spmd_section_shows_mesh_shardings_collectives_and_device_bytes(tmp_path: Path) -> None:
    graph = dataclasses.replace(_graph("abc", {}), spmd=_spmd())
    page = _page(_report(tmp_path, graph, _graph("def", {})))
    spmd = _section(page, "spmd")
    assert '<a href="#spmd">SPMD</a>' in page  # in the contents
    assert "4 devices" in spmd and '<code class="mesh">2×2</code> (data, model)' in spmd
    assert "<strong>(data, model)</strong>" in spmd  # the split input stands out
    assert "{devices=[2,2]0,1,2,3}" in spmd and "f32[8,16]" in spmd
    assert "Outputs (1, 0 split over the devices)" in spmd
    assert "all-reduce</span> ×1 (2.00 KiB)" in spmd and "all-gather</span> ×1 (512 B)" in spmd
    assert "{{0,1},{2,3}}" in spmd and "all-gather (async)" in spmd and "m.py:9" in spmd
    assert "input per device</dt><dd>1.00 KiB" in spmd  # the graph's buffer bytes, per device
    assert 'id="spmd-def"' not in spmd  # a graph that was not partitioned has no entry
    assert spmd.count(ESCAPED) == 2  # the user's line and the collective's name, as text
    assert "<script>alert" not in page


def test_memory_section_shows_peaks_buffers_precision_and_warnings(tmp_path: Path) -> None:
    buffers = (
        BufferRecord("dot.3{}", 4 << 20, "f32[1024,1024]", "temporary", "aten__mm", "/m.py:40"),
        BufferRecord("p0{}", 1 << 20, f"bf16[{HOSTILE}]", "argument", HOSTILE, None),
    )
    graph = dataclasses.replace(
        _graph("abc", {}),
        memory=GraphMemory(6 << 20, 4 << 20, "dot.3", "/m.py:40", 8 << 20, buffers),
        precision=GraphPrecision(
            requested=PrecisionMix(
                {"bf16": 10, "f64": 2}, {"bf16": 2048, "f64": 64}, {"bf16": 900}
            ),
            optimized=PrecisionMix({"f32": 12}, {"f32": 4096}, {"f32": 900}),
            autocast="xla:bf16",
        ),
        checkpoint=CheckpointFacts(2, 0, 2, 4, 4),
    )
    memory = RunMemory(
        steps=(StepMemory(0, ("abc",), 6 << 20), StepMemory(1, ("abc",), 6 << 20)),
        device_unavailable="GetAllocatorStats not implemented",
        autocast={0: "xla:bf16", 1: ""},
    )
    page = _page(_report(tmp_path, graph, memory=memory))
    section = _section(page, "memory")
    assert '<strong class="step-peak">6.00 MiB</strong> (step 0:' in section
    assert "not available on CPU" in section and "<code>xla:bf16</code>" in section
    assert "4.00 MiB" in section and "8.00 MiB" in section and "m.py:40" in section
    assert "bf16 100% (compiled: f32 100%)" in section
    assert "2 opt-barriers (0 after XLA)" in section
    assert "f32[1024,1024]" in section and "aten__mm" in section
    assert "2 f64 instructions" in section  # the f64 warning
    assert "XLA removed the opt-barriers" in section
    assert "XLA computes them in f32" in section  # the backend note
    assert section.count(ESCAPED) == 3  # the buffer's shape (text and sort key) and op
    assert "<script>alert" not in page


def test_memory_section_without_graph_facts_still_says_device_memory(tmp_path: Path) -> None:
    memory = RunMemory(device={2: {"bytes_used": 1 << 20, "peak_bytes_used": 2 << 20}})
    section = _section(_page(_report(tmp_path, _graph("abc", {}), memory=memory)), "memory")
    assert "1.00 MiB in use, peak 2.00 MiB" in section
    assert "<table" not in section


@pytest.fixture
def dynamo_run(tmp_path: Path) -> Path:
    source = tmp_path / "gate.py"
    source.write_text("def forward(x):\n    h = x\n    if h.sum().item() > 0:\n        h = h * 2\n")
    frames = (
        DynamoFrameRecord("0/0", "forward", f"{source}:1", 0, 3, None, 0.5, ("abc",)),
        DynamoFrameRecord("1/0", "resume_at_3", f"{source}:3", 0, 1, None, 0.1, ("zzz",)),
        DynamoFrameRecord(
            "1/1", "resume_at_3", f"{source}:3", 2, 2, f"___stack0 == {HOSTILE}", 0.1, ("abc",)
        ),
    )
    dynamo = DynamoRecord(
        source="xlacli",
        frames=frames,
        graph_breaks=(GraphBreakRecord(f"{source}:3", f"Unsupported {HOSTILE}", 2),),
        fx_graphs=3,
        recompiles=1,
        extractions=3,
    )
    report = _report(tmp_path, _graph("abc", {}), mode="dynamo", dynamo=dynamo)
    run = Path(report.run_dir)
    run.mkdir()
    save_report(report, run)
    save_snippets(report, run)  # graph breaks and guards keep their code
    source.unlink()  # the page must not need the working tree
    return run


def test_dynamo_section_shows_frames_breaks_and_guard_recompiles(dynamo_run: Path) -> None:
    page = write_run_html(dynamo_run).read_text(encoding="utf-8")  # report.json read back
    section = _section(page, "dynamo")
    assert "run by xlacli --mode dynamo" in section and "2 graph breaks" in section
    assert (
        "Dynamo frame compiles per step: " in section and "(1 after the 2 warm-up steps" in section
    )
    assert "<code>resume_at_3</code>" in section and "1/2" in section  # FX ops of both compiles
    assert '<a href="#graph-abc"><code>abc</code></a>' in section
    assert "<code>zzz</code>" in section and 'href="#graph-zzz"' not in section  # no such graph
    assert "graph break</span> ×2" in section and "gate.py:3" in section
    assert (
        'class="src-line target"><span class="ln">3</span>    if h.sum().item() &gt; 0:' in section
    )
    assert "Dynamo recompiles (1, 1 after the warm-up)" in section
    assert "step 2" in section and "Fix:" in section
    assert section.count(ESCAPED) == 2  # the break's reason and the failed guard
    assert len(_parse(page).tags) and _parse(page).tags["script"] == 1
    assert "<script>alert" not in page
