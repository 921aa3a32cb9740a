"""A module whose statements share lines reads as XLA's parser reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlacli.errors import UsageError
from xlacli.hlo.fingerprint import module_fingerprint
from xlacli.hlo.parser import parse_hlo_file
from xlacli.hlo.reflow import reflow_hlo

MODULE = """HloModule m, entry_computation_layout={(f32[2]{0})->f32[]}

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (p: f32[2]) -> f32[] {
  %p = f32[2]{0} parameter(0), metadata={op_type="a=b" source_file="x.py" source_line=3}
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=%add
}
"""


def test_a_module_on_one_line_is_the_same_module(tmp_path: Path):
    written = tmp_path / "lines.txt"
    written.write_text(MODULE)
    one_line = tmp_path / "one.txt"
    one_line.write_text(" ".join(MODULE.split()) + "\n")
    assert module_fingerprint(parse_hlo_file(one_line)) == module_fingerprint(
        parse_hlo_file(written)
    )


def test_reflow_keeps_strings_and_attribute_braces_whole():
    text = reflow_hlo(" ".join(MODULE.split()))
    assert 'metadata={op_type="a=b" source_file="x.py" source_line=3}' in text
    assert "ROOT %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=%add" in text


@pytest.mark.parametrize("text", ["# A README\n\nSome words, {and braces}.\n", "[tool]\nx = 1\n"])
def test_a_file_that_is_not_hlo_says_so(tmp_path: Path, text: str):
    path = tmp_path / "notes.md"
    path.write_text(text)
    with pytest.raises(UsageError, match="is not HLO: its first line"):
        parse_hlo_file(path)
