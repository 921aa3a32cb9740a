"""The statement reader's fast path cuts text exactly as its general path does.

The fast path hands out a printed line without the joining machinery; it must
never change what a statement is. The oracle is the same reader with the fast
path turned off, over hand-written edge cases, the golden dumps and (when it
is present) every file of OpenXLA's corpus, valid or not.
"""

from __future__ import annotations

import pytest
from conftest import ASSETS
from test_corpus import CORPUS

from xlacli.hlo.statements import StatementReader


class _GeneralReader(StatementReader):
    """The reader with its fast path off: every statement takes the general path."""

    def _next_simple(self) -> str | None:
        return None


def _statements(reader: StatementReader) -> list[tuple[int, str]]:
    return [(reader.line, text) for text in reader]


def _assert_same_statements(text: str) -> None:
    lines = text.splitlines(keepends=True)
    fast = StatementReader(lines, first_line=3)
    general = _GeneralReader(lines, first_line=3)
    assert _statements(fast) == _statements(general)
    # What errors at the end of the text name (mid-text, the general path has read one more).
    assert (fast.last_line, fast.ended_with_newline) == (
        general.last_line,
        general.ended_with_newline,
    )


EDGE_CASES = {
    "printed": "HloModule m\n\nENTRY %e (p: f32[2]{0}) -> f32[2]{0} {\n"
    "  ROOT %p = f32[2]{0} parameter(0)\n}\n\n",
    "continuation": 'ENTRY e {\n  p = f32[] parameter(0)\n  , metadata={op_name="x"}\n}',
    "wrapped head": "%c (p: f32[],\n q: f32[]) -> f32[] {\n ROOT a = f32[] add(p, q)\n}",
    "one line": "ENTRY e { ROOT c = f32[] constant(0) }",
    "brace after instruction": "ENTRY e {\n ROOT c = f32[] constant(0) }\n",
    "comments": "ENTRY e { // x\n /* y */ ROOT c = f32[] constant(0)\n} // e",
    "open comment": "ENTRY e {\n /* a\n b */ ROOT c = f32[] constant(0)\n}",
    "trailing comma": "ENTRY e {\n ROOT t = (f32[], f32[]) tuple(a,\n b)\n}",
    "blank before continuation": "ENTRY e {\n c = f32[] constant(0)\n\n , sharding={}\n}",
    "instruction opening a body": "ENTRY e {\n s = f32[] call(), to_apply={\n"
    " ROOT c = f32[] constant(0)\n }\n}",
    "string with brackets": 'ENTRY e {\n c = f32[] constant(0), metadata={op_name="a(["}\n}',
    "no final newline": "ENTRY e {\n ROOT c = f32[] constant(0)\n}",
    "index comment": "%c (p: (f32[], /*index=1*/f32[])) -> f32[] {\n ROOT g = f32[] "
    "get-tuple-element(p), index=1\n}\n",
}


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_fast_path_cuts_edge_cases_as_the_general_path(name: str) -> None:
    _assert_same_statements(EDGE_CASES[name])


def test_fast_path_cuts_the_golden_dumps_as_the_general_path() -> None:
    for path in sorted(ASSETS.glob("*.txt")):
        _assert_same_statements(path.read_text())


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the HLO corpus is not at {CORPUS}")
def test_fast_path_cuts_every_corpus_file_as_the_general_path() -> None:
    paths = sorted(CORPUS.glob("*/*.hlo"))
    assert paths
    for path in paths:
        _assert_same_statements(path.read_text(encoding="utf-8", errors="replace"))
