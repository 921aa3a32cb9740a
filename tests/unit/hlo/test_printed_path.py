"""The parser's fused path for printed lines reads exactly what its general path reads.

``PrintedLineReader.read`` takes runs of instruction lines straight
from the text, without the statement reader; it must never change a module,
an instruction's line, or an error. The oracle is the same parser with the
fused path turned off, over hand-written edge cases, the golden dumps,
mutated dumps, and (when it is present) every file of OpenXLA's corpus,
valid or not.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import ASSETS
from hypothesis import given
from test_corpus import CORPUS
from test_fuzz import FUZZ, SEEDS, mutated

from xlacli.errors import HloParseError
from xlacli.hlo import parse_hlo_modules
from xlacli.hlo.instructions import ComputationState
from xlacli.hlo.model import HloModule
from xlacli.hlo.printed import PrintedLineReader


def _none_printed(
    self: PrintedLineReader, state: ComputationState, lines: list[str], index: int, first: int
) -> int:
    return index


def _outcome(text: str) -> tuple[tuple[HloModule, ...], list[list[int]]] | str:
    """The modules and every instruction's line, or the error message."""
    try:
        modules = parse_hlo_modules(text, "f.hlo")
    except HloParseError as error:
        return str(error)
    lines = [
        [
            instruction.line
            for computation in module.computations
            for instruction in computation.instructions
        ]
        for module in modules
    ]
    return modules, lines


def _general_outcome(text: str) -> tuple[tuple[HloModule, ...], list[list[int]]] | str:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PrintedLineReader, "read", _none_printed)
        return _outcome(text)


def _assert_same(text: str) -> None:
    assert _outcome(text) == _general_outcome(text)


EDGE_CASES = {
    "printed": "HloModule m\n\nENTRY %e (p: f32[2]{0}) -> f32[2]{0} {\n"
    "  %p = f32[2]{0} parameter(0)\n  ROOT %n = f32[2]{0} negate(f32[2]{0} %p)\n}\n",
    "continuation": 'ENTRY e {\n  p = f32[] parameter(0)\n  , metadata={op_name="x"}\n'
    "  ROOT n = f32[] negate(p)\n}",
    "comment after": "ENTRY e {\n  p = f32[] parameter(0) // x\n  ROOT n = f32[] negate(p)\n}",
    "comment inside": "ENTRY e {\n  p = f32[] parameter(0), /* x */ sharding={replicated}\n"
    "  ROOT n = f32[] negate(p)\n}",
    "slashes in a string": 'ENTRY e {\n  p = f32[] parameter(0), metadata={op_name="a//b"}\n'
    "  ROOT n = f32[] negate(p)\n}",
    "forward reference": "ENTRY e {\n  ROOT n = f32[] negate(p)\n  p = f32[] parameter(0)\n}",
    "duplicate name": "ENTRY e {\n  p = f32[] parameter(0)\n  p = f32[] parameter(1)\n"
    "  ROOT n = f32[] negate(p)\n}",
    "two roots": "ENTRY e {\n  ROOT p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n"
    "  c = f32[] constant(0)\n}",
    "bad attribute": "ENTRY e {\n  p = f32[] parameter(0), dimensions=\n"
    "  ROOT n = f32[] negate(p)\n}",
    "closing brace in an attribute": "ENTRY e {\n  p = f32[] parameter(0), a={x}}\n"
    "  ROOT n = f32[] negate(p)\n}",
    "braces out of order in an attribute": "ENTRY e {\n  p = f32[] parameter(0), a=}{\n"
    "  ROOT n = f32[] negate(p)\n}",
    "braces out of order in a literal": "ENTRY e {\n  c = f32[2] constant(}{1, 2})\n"
    "  ROOT n = f32[2] negate(c)\n}",
    # Lines whose parts the attribute or shape readers accept but whose brackets,
    # comments or ending make the statement reader cut or join them (found by review).
    "unclosed tile": "ENTRY e {\n  p = f32[8,128]{1,0:T(8,128} parameter(0)\n"
    "  ROOT n = f32[8,128] negate(p)\n}",
    "bracket in an operand layout": "ENTRY e {\n  p = f32[2]{0} parameter(0)\n"
    "  a = f32[2]{0} negate(f32[2]{0:[} %p)\n  ROOT n = f32[2] negate(a)\n}",
    "bracket in a sharding": "ENTRY e {\n  p = f32[2] parameter(0), sharding={devices=]<=[2]}\n"
    "  ROOT n = f32[2] negate(p)\n}",
    "attribute ending with an arrow": "ENTRY e {\n  p = f32[] parameter(0), a=x->\n"
    "  ROOT n = f32[] negate(p)\n}",
    "arrow then the rest": "ENTRY e {\n  p = f32[] parameter(0), a=x->\n  y, b=c\n"
    "  ROOT n = f32[] negate(p)\n}",
    "line comment in a layout": "ENTRY e {\n  p = f32[2]{0://x} parameter(0)\n"
    "  ROOT n = f32[2] negate(p)\n}",
    "block comment in a layout": "ENTRY e {\n  p = f32[2]{0:/*x*/T(2)} parameter(0)\n"
    "  ROOT n = f32[2] negate(p)\n}",
    "bad shape": "ENTRY e {\n  p = f33[] parameter(0)\n  ROOT n = f32[] negate(p)\n}",
    "bad parameter number": "ENTRY e {\n  p = f32[] parameter(x)\n  ROOT n = f32[] negate(p)\n}",
    "blank line after": "ENTRY e {\n  p = f32[] parameter(0)\n\n  ROOT n = f32[] negate(p)\n}",
    "wrapped attribute": "ENTRY e {\n  p = f32[2] parameter(0), sharding={devices=[2]\n"
    "  0,1}\n  ROOT n = f32[2] negate(p)\n}",
    "index comment": "ENTRY e {\n  p = f32[] parameter(0)\n"
    "  t = (f32[], f32[]) tuple(p, /*index=1*/p)\n"
    "  ROOT g = f32[] get-tuple-element(t), index=1\n}",
    "inline body": "ENTRY e {\n  p = f32[] parameter(0)\n"
    '  s = ((f32[]), f32[]) call-start(p), async_execution_thread="x", '
    "to_apply={ a = f32[] parameter(0)\n ROOT n = f32[] negate(a) }\n"
    "  ROOT d = f32[] call-done(s)\n}",
    "layout with tiles": "ENTRY e {\n  p = f32[8,128]{1,0:T(8,128)} parameter(0)\n"
    "  ROOT n = f32[8,128]{1,0:T(8,128)} negate(p)\n}",
    "last line": "ENTRY e {\n  ROOT p = f32[] parameter(0)}",
    "operand shapes": "ENTRY e {\n  p = f32[2]{0} parameter(0)\n"
    "  a = f32[2]{0} add(f32[2]{0} %p, f32[2]{0} %p)\n  ROOT n = f32[2]{0} negate(f32[2]{0} %a)\n}",
    "bad operand shape": "ENTRY e {\n  p = f32[] parameter(0)\n"
    "  a = f32[] add(f32[] %p, f33[] %p)\n  ROOT n = f32[] negate(p)\n}",
    "operand shape and junk": "ENTRY e {\n  p = f32[] parameter(0)\n  a = f32[] add(f32[] x %p)\n"
    "  ROOT n = f32[] negate(p)\n}",
    "operand shape, forward name": "ENTRY e {\n  p = f32[] parameter(0)\n"
    "  a = f32[] add(f32[] %p, f32[] %b)\n  b = f32[] negate(p)\n  ROOT n = f32[] negate(a)\n}",
    "two modules": "HloModule a\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}"
    "\n// -----\nHloModule b\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
}


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_fused_path_reads_edge_cases_as_the_general_path(name: str) -> None:
    _assert_same(EDGE_CASES[name])


def test_fused_path_reads_the_golden_dumps_as_the_general_path() -> None:
    paths = sorted(ASSETS.glob("*.txt"))
    assert paths
    for path in paths:
        _assert_same(path.read_text())


@given(mutated(SEEDS["torch_train"]))
@FUZZ
def test_fused_path_reads_mutated_dumps_as_the_general_path(text: str) -> None:
    _assert_same(text)


def _corpus_files() -> Iterator[str]:
    for path in sorted(CORPUS.glob("*/*.hlo")):
        yield path.read_text(encoding="utf-8", errors="replace")


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the HLO corpus is not at {CORPUS}")
def test_fused_path_reads_every_corpus_file_as_the_general_path() -> None:
    different = [text[:80] for text in _corpus_files() if _outcome(text) != _general_outcome(text)]
    assert not different, different[:5]
