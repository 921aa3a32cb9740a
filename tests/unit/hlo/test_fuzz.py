"""Property: on mutated HLO the parser returns a module or raises HloParseError, nothing else.

Mutations of real dumps (characters deleted, inserted or replaced with the
format's own punctuation, lines dropped, duplicated or swapped, the text cut
short) reach the error paths of every part of the parser. When a mutant
still parses, printing and diffing it must not fail either. Runs are
derandomized so that CI sees the same examples every time.
"""

from __future__ import annotations

import pytest
from conftest import ASSETS, FEATURES_HLO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xlacli.errors import HloParseError
from xlacli.hlo import parse_hlo, print_module
from xlacli.hlo.diff import diff_modules

SEEDS = {
    "features": FEATURES_HLO,
    "jax_after": (ASSETS / "jax_cnn.after_optimizations.txt").read_text(),
    "jax_before": (ASSETS / "jax_cnn.before_optimizations.txt").read_text(),
    "torch_train": (ASSETS / "torch_mlp_train.after_optimizations.txt").read_text(),
}
PUNCTUATION = [*list('{}[]()%=,":/*<>?.-_ \n\t\\'), "ROOT ", "ENTRY ", "/*index=5*/", "}", "f32["]
FUZZ = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    """A text with one to three random edits."""
    for _ in range(draw(st.integers(1, 3))):
        lines = text.split("\n")
        kind = draw(st.sampled_from(["delete", "insert", "replace", "line", "truncate"]))
        at = draw(st.integers(0, max(len(text) - 1, 0)))
        if kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 12)) :]
        elif kind == "insert":
            text = text[:at] + draw(st.sampled_from(PUNCTUATION)) + text[at:]
        elif kind == "replace":
            text = text[:at] + draw(st.sampled_from(PUNCTUATION)) + text[at + 1 :]
        elif kind == "line":
            first = draw(st.integers(0, len(lines) - 1))
            second = draw(st.integers(0, len(lines) - 1))
            edit = draw(st.sampled_from(["drop", "duplicate", "swap"]))
            if edit == "drop":
                del lines[first]
            elif edit == "duplicate":
                lines.insert(second, lines[first])
            else:
                lines[first], lines[second] = lines[second], lines[first]
            text = "\n".join(lines)
        else:
            text = text[:at]
    return text


def _check(original: str, text: str) -> None:
    try:
        module = parse_hlo(text, "fuzz.hlo")
    except HloParseError as error:
        assert 1 <= error.line <= text.count("\n") + 1
        assert error.column >= 1
        assert error.message.startswith(f"fuzz.hlo:{error.line}:{error.column}: ")
        return
    assert parse_hlo(print_module(module)) == module
    try:
        diff_modules(parse_hlo(original), module)
    except HloParseError as error:  # a mutation that parses but forms a cycle
        assert "cycle" in error.found


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_parser_raises_only_parse_errors_on_mutated_text(name: str) -> None:
    original = SEEDS[name]

    @FUZZ
    @given(mutated(original))
    def check(text: str) -> None:
        _check(original, text)

    check()


TOKENS = [*PUNCTUATION, "a", "b.1", "0", "12", "add", "parameter", "ENTRY %e {", "HloModule m"]


@FUZZ
@given(
    st.sampled_from(["", "HloModule m\n", "HloModule m\nENTRY e {\n"]),
    st.lists(st.sampled_from(TOKENS), max_size=60).map("".join),
)
def test_parser_raises_only_parse_errors_on_noise(prefix: str, noise: str) -> None:
    _check(FEATURES_HLO, prefix + noise)
