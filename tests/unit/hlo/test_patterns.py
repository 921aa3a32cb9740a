"""Patterns: the same change in each of N layers is one pattern with a count of N."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from xlacli.hlo import parse_hlo
from xlacli.hlo.changes import Change, InstructionRef, SourceRef
from xlacli.hlo.diff import diff_modules
from xlacli.hlo.patterns import group_patterns

LAYERS = 6


def _layered(activation: Callable[[int], str]) -> str:
    """A chain of LAYERS blocks, dot then an activation, with torch_xla-style metadata."""

    def meta(op: str, line: int) -> str:
        return f'metadata={{op_type="{op}" source_file="model.py" source_line={line}}}'

    lines = ["HloModule layers", "ENTRY %main {", "  %x = f32[4,8]{1,0} parameter(0)"]
    previous = "x"
    for layer in range(LAYERS):
        lines += [
            f"  %w{layer} = f32[8,8]{{1,0}} parameter({layer + 1})",
            f"  %dot{layer} = f32[4,8]{{1,0}} dot(%{previous}, %w{layer}), "
            f"lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, {meta('aten__mm', 10)}",
        ]
        if activation(layer) == "relu":
            lines += [
                f"  %zero{layer} = f32[] constant(0), {meta('aten__relu', 11)}",
                f"  %bz{layer} = f32[4,8]{{1,0}} broadcast(%zero{layer}), dimensions={{}}, "
                + meta("aten__relu", 11),
                f"  %act{layer} = f32[4,8]{{1,0}} maximum(%dot{layer}, %bz{layer}), "
                + meta("aten__relu", 11),
            ]
        else:
            lines.append(
                f"  %act{layer} = f32[4,8]{{1,0}} tanh(%dot{layer}), {meta('aten__tanh', 11)}"
            )
        previous = f"act{layer}"
    lines += [f"  ROOT %out = (f32[4,8]{{1,0}}) tuple(%{previous})", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("changed_layers", "count"), [(range(LAYERS), LAYERS), ([3], 1)])
def test_a_change_in_every_layer_is_one_pattern_per_kind(
    changed_layers: object, count: int
) -> None:
    before = parse_hlo(_layered(lambda layer: "relu"))
    after = parse_hlo(_layered(lambda layer: "tanh" if layer in changed_layers else "relu"))
    diff = diff_modules(before, after)
    summary = {(p.kind, p.opcode, p.reasons): p.count for p in diff.patterns}
    assert summary == {
        ("changed", "maximum → tanh", ("opcode", "operands")): count,
        ("removed", "broadcast", ()): count,
        ("removed", "constant", ()): count,
    }
    changed = next(p for p in diff.patterns if p.kind == "changed")
    assert changed.source is not None
    assert (changed.source.op_type, changed.source.location) == ("aten__tanh", "model.py:11")
    assert len(changed.examples) == min(count, 3)


def _change(name: str, line: int, kind: str = "added") -> Change:
    ref = InstructionRef("main", name, "multiply", "f32[2]{0}", 1)
    source = SourceRef("aten__mul", "aten__mul", "model.py", line)
    return Change(
        kind, None if kind == "added" else ref, ref if kind == "added" else None, source=source
    )


def test_changes_that_differ_only_by_name_group_and_sort_by_count() -> None:
    changes = [_change("a", 5), _change("b", 5), _change("c", 9), _change("d", 5, "removed")]
    patterns = group_patterns(changes)
    assert [(p.kind, p.count, p.source.line if p.source else 0) for p in patterns] == [
        ("added", 2, 5),
        ("added", 1, 9),
        ("removed", 1, 5),
    ]
    assert patterns[0].examples == ("a", "b")
    assert patterns[0].details == ("f32[2]{0}",)
