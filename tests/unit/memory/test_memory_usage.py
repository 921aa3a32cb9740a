"""parse/memory_usage.py on real buffer assignments and memory-usage reports."""

import re

import pytest

from tests.unit.memory.conftest import golden_text, peak_entries
from xlacli.parse.memory_usage import (
    parse_buffer_values,
    parse_peak_live_set,
    parse_total_bytes,
)

VARIANTS = ("tiny", "tiny_checkpoint", "tiny_autocast")


@pytest.mark.parametrize("variant", VARIANTS)
def test_peak_live_set_is_xlas(variant):
    text = golden_text(variant, "buffer-assignment.txt")
    peak = parse_peak_live_set(text)
    assert peak is not None
    stated = re.search(r"Stack trace breakdown for peak usage: ([\d ]+) bytes", text)
    assert peak.total_bytes == int(stated.group(1).replace(" ", ""))
    entries = peak_entries(text)
    assert [size for _, size in peak.values] == [size for _, size in entries]
    assert sum(size for _, size in peak.values) == peak.total_bytes
    # The instruction scheduled at the peak, from the printed sequence.
    assert f"    {peak.position}:{peak.instruction}\n" in text


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_live_value_has_its_allocation(variant):
    text = golden_text(variant, "buffer-assignment.txt")
    values = parse_buffer_values(text)
    peak = parse_peak_live_set(text)
    for name, size in peak.values:
        value = values[name]
        assert value.size >= size  # the allocation's size; the live range's is logical
        array = re.fullmatch(r"[a-z0-9]+\[[\d,]*\](\{[\d,]*\})?", value.shape)
        assert array or value.shape.startswith("("), value.shape  # "(": the output tuple
        assert value.role in ("argument", "output", "temporary", "constant")


def test_roles_follow_the_allocation_lines():
    values = parse_buffer_values(golden_text("tiny", "buffer-assignment.txt"))
    arguments = [v for v in values.values() if v.role == "argument"]
    # tiny.py: the batch f32[8,16] and 3 linears' weights and biases.
    assert {v.shape.partition("{")[0] for v in arguments} >= {"f32[8,16]", "f32[64,16]"}
    assert all(v.roles.startswith("parameter") for v in arguments)


def test_total_bytes_used():
    usage = golden_text("tiny", "memory-usage.txt")
    stated = int(re.search(r"Total bytes used: (\d+)", usage).group(1))
    assert parse_total_bytes(usage) == stated
    assert parse_total_bytes(golden_text("tiny", "buffer-assignment.txt")) == stated


def test_no_live_ranges():
    assert parse_peak_live_set("BufferAssignment:\nallocation 0: size 4, constant:\n") is None
    assert parse_total_bytes("nothing") is None
