"""The memory lines of the compile report and of diff-hlo, from the goldens."""

from rich.console import Console

from tests.unit.memory.conftest import MEMORY_GOLDEN
from tests.unit.memory.test_memory import graph
from xlacli.analysis.memory.compare import compare_memory
from xlacli.analysis.memory.facts import with_memory_facts
from xlacli.assemble.graph_files import HloCache
from xlacli.render.memory import memory_view
from xlacli.render.memory_compare import change_summary
from xlacli.report.run_report import RunReport
from xlacli.run_folder.step_events import step_event

CPU_SAYS = "RuntimeError: Bad StatusOr access: UNIMPLEMENTED: GetAllocatorStats is not supported"


def report_of(variant, autocast=None):
    event = {"step": 0, "memory_info": CPU_SAYS}
    if autocast:
        event["autocast"] = [autocast]
    graphs, memory = with_memory_facts(
        [graph(variant.ljust(32, "0"), variant)],
        MEMORY_GOLDEN,
        HloCache(MEMORY_GOLDEN),
        [step_event(event)],
        [(0, variant.ljust(32, "0"))],
    )
    return RunReport("m.py", "CPU", 1, 1, True, "/r", 1, 1, 0.0, 0.0, tuple(graphs), memory=memory)


def text(report):
    console = Console(width=300, record=True)
    for line in memory_view(report):
        console.print(line)
    return console.export_text()


def test_plain_run():
    shown = text(report_of("tiny"))
    assert "peak 53.8 KiB" in shown and "matmuls f32 100%" in shown
    assert "Device memory: not available on CPU" in shown
    assert "Biggest buffers at the peak of tiny0000:" in shown


def test_autocast_run_says_what_xla_cpu_did():
    shown = text(report_of("tiny_autocast", "xla:bf16"))
    assert "matmuls bf16 100% (compiled: f32 100%)" in shown
    assert "XLA:CPU upcasts" in shown
    assert "f64 instructions" in shown


def test_checkpoint_that_xla_undid():
    shown = text(report_of("tiny_checkpoint"))
    assert "2 opt-barriers (0 after XLA), 2 recomputed matmuls in 2 regions (0 kept)" in shown
    assert "XLA merged 2 of 2 recomputed matmuls back into the forward pass" in shown


def test_comparison_line():
    (change,) = compare_memory(report_of("tiny"), report_of("tiny_checkpoint"))
    summary = change_summary(change)
    assert summary.startswith("peak 53.8 KiB -> ")
    assert "opt-barriers 0 -> 2" in summary and "matmuls f32 100% -> f32 100%" in summary
