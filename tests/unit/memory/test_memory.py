"""analysis/memory/peaks.py and memory_facts.py on the goldens, laid out as a run folder."""

import dataclasses
import json
import re

import pytest

from tests.unit.memory.conftest import MEMORY_GOLDEN, golden_hlo, golden_text, peak_entries
from xlacli.analysis.memory.facts import with_memory_facts
from xlacli.analysis.memory.peaks import graph_memory, largest_graph, run_memory, step_memory
from xlacli.assemble.graph_files import HloCache
from xlacli.report.memory import GraphMemory
from xlacli.report.run_report import GraphRecord, RunReport, dump_report, report_from_dict
from xlacli.run_folder.step_events import step_event

FILES = {
    "buffer_assignment": "buffer-assignment.txt",
    "memory_usage": "memory-usage.txt",
    "hlo_before": "hlo.before.txt",
    "hlo_after": "hlo.after.txt",
}


def files_of(variant):
    return {role: f"{variant}/{name}" for role, name in FILES.items()}


def graph(hash_, variant=None, first_step=0, memory=None):
    return GraphRecord(
        hash=hash_,
        site=None,
        trigger="step_end",
        frames=(),
        ir_nodes=None,
        hlo_instructions=None,
        optimized_hlo_instructions=None,
        fusions=None,
        input_bytes=None,
        output_bytes=None,
        temp_bytes=None,
        compilations=1,
        compile_time_s=0.0,
        executions=1,
        execute_time_s=None,
        total_execute_time_s=0.0,
        first_step=first_step,
        files=files_of(variant) if variant else {},
        memory=memory,
    )


def test_peak_and_its_biggest_buffers():
    memory = graph_memory(MEMORY_GOLDEN, files_of("tiny"), golden_hlo("tiny", "after"))
    entries = peak_entries(golden_text("tiny", "buffer-assignment.txt"))
    assert memory.peak_bytes == sum(size for _, size in entries) == 55112
    biggest = memory.biggest
    assert [b.bytes for b in biggest] == sorted((s for _, s in entries), reverse=True)[:5]
    assert memory.total_bytes == int(
        golden_text("tiny", "memory-usage.txt").split()[3]
    )  # "Total bytes used: N (...)"
    assert all("{" not in b.shape for b in biggest)


@pytest.mark.parametrize("variant", ["tiny", "tiny_checkpoint", "tiny_autocast"])
def test_buffers_join_the_hlo_metadata_by_instruction_name(variant):
    memory = graph_memory(MEMORY_GOLDEN, files_of(variant), golden_hlo(variant, "after"))
    hlo = golden_text(variant, "hlo.after.txt")
    joined = 0
    for buffer in memory.biggest:
        instruction = buffer.name.partition("{")[0]
        line = re.search(rf"^\s*(?:ROOT )?%{re.escape(instruction)} = .*$", hlo, re.M).group(0)
        op = re.search(r'op_type="([^"]*)"', line)
        source = re.search(r'source_file="([^"]*)" source_line=(\d+)', line)
        assert buffer.op == (op.group(1) if op else ""), line
        if source:
            assert buffer.source == f"{source.group(1)}:{source.group(2)}"
            joined += 1
    assert variant == "tiny" or joined or any(b.op for b in memory.biggest)


def test_peak_temporaries_are_the_temporary_part_of_the_live_set():
    memory = graph_memory(
        MEMORY_GOLDEN, files_of("tiny_autocast"), golden_hlo("tiny_autocast", "after")
    )
    assert 0 < memory.peak_temp_bytes < memory.peak_bytes


def test_no_buffer_assignment():
    assert graph_memory(MEMORY_GOLDEN, {}, None) is None


def test_step_peak_sums_the_graphs_it_ran():
    a = graph("a" * 32, memory=GraphMemory(100, 10, None, None, None))
    b = graph("b" * 32, memory=GraphMemory(50, 5, None, None, None))
    steps = step_memory(
        [a, b], [(0, a.hash), (0, b.hash), (0, a.hash), (1, a.hash), (None, b.hash)]
    )
    assert [(s.step, s.graphs, s.peak_bytes) for s in steps] == [
        (0, (a.hash, b.hash), 150),
        (1, (a.hash,), 100),
    ]
    assert largest_graph([a, b]) is a


def test_run_memory_keeps_what_the_runtime_said():
    events = [
        {
            "step": 0,
            "memory_info": "RuntimeError: UNIMPLEMENTED: GetAllocatorStats is not supported",
        },
        {"step": 1, "autocast": ["xla:bf16"]},
        {"step": 2, "memory_info": {"bytes_used": 10, "peak_bytes_used": 20, "bytes_limit": 99}},
    ]
    memory = run_memory((), [step_event(e) for e in events])
    assert memory.device_unavailable.endswith("GetAllocatorStats is not supported")
    assert memory.device == {2: {"bytes_used": 10, "peak_bytes_used": 20, "bytes_limit": 99}}
    assert memory.autocast == {1: "xla:bf16"}


@pytest.mark.parametrize("variant", ["tiny", "tiny_checkpoint", "tiny_autocast"])
def test_facts_survive_the_report_json(variant):
    graphs, memory = with_memory_facts(
        [graph("c" * 32, variant)],
        MEMORY_GOLDEN,
        HloCache(MEMORY_GOLDEN),
        [step_event({"step": 0, "autocast": ["xla:bf16"]})],
        [(0, "c" * 32)],
    )
    (enriched,) = graphs
    assert enriched.memory and enriched.precision and enriched.checkpoint
    assert enriched.precision.autocast == "xla:bf16"
    assert memory.steps[0].peak_bytes == enriched.memory.peak_bytes
    report = RunReport(
        "m.py", "CPU", 1, 1, True, "/r", 1, 1, 0.0, 0.0, tuple(graphs), memory=memory
    )
    loaded = report_from_dict(json.loads(dump_report(report)))
    assert loaded == dataclasses.replace(report)


def test_old_reports_load_without_the_facts():
    report = RunReport("m.py", "CPU", 1, 1, False, "/r", 1, 1, 0.0, 0.0, (graph("d" * 32),))
    data = json.loads(dump_report(report))
    for key in ("memory", "precision", "checkpoint"):
        del data["graphs"][0][key]
    del data["memory"]
    loaded = report_from_dict(data)
    assert loaded.memory is None and loaded.graphs[0].memory is None


def test_autocast_of_a_graph_compiled_after_the_watched_steps():
    from xlacli.analysis.memory.facts import autocast_at

    events = [{"step": 0, "autocast": []}, {"step": 1, "autocast": ["xla:bf16"]}]
    watched = run_memory((), [step_event(e) for e in events])
    assert watched.autocast == {0: "", 1: "xla:bf16"}
    assert autocast_at(watched.autocast, 0) is None  # watched: off
    assert autocast_at(watched.autocast, 1) == "xla:bf16"
    assert autocast_at(watched.autocast, 7) == "xla:bf16"  # as in the last watched step
    assert autocast_at({}, 3) is None and autocast_at(watched.autocast, None) is None
