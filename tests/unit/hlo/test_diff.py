"""The structural diff: invariance to names and order, and known single changes found exactly."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import ASSETS, FEATURES_HLO, GOLDEN_FILES
from hlo_transforms import renumber, reorder

from xlacli.hlo import HloModule, parse_hlo, parse_hlo_file
from xlacli.hlo.changes import Change, ModuleDiff
from xlacli.hlo.diff import diff_modules

STAGES = ("before_optimizations", "after_optimizations")


def _golden(name: str, stage: str) -> HloModule:
    return parse_hlo_file(ASSETS / f"torch_{name}.{stage}.txt")


def _of_kind(diff: ModuleDiff, kind: str) -> list[Change]:
    return [change for change in diff.changes if change.kind == kind]


def _assert_counts_add_up(diff: ModuleDiff, left: HloModule, right: HloModule) -> None:
    assert diff.unchanged + diff.count("changed") + diff.count("removed") == left.instruction_count
    assert diff.unchanged + diff.count("changed") + diff.count("added") == right.instruction_count


@pytest.mark.parametrize("path", [*GOLDEN_FILES, None], ids=lambda p: p.name if p else "features")
def test_renumbered_and_reordered_modules_are_identical(path: Path | None) -> None:
    module = parse_hlo_file(path) if path else parse_hlo(FEATURES_HLO)
    for seed in (1, 2):
        diff = diff_modules(module, reorder(renumber(module, seed), seed + 10))
        assert diff.identical, diff.changes[:3]
        assert diff.unchanged == module.instruction_count


@pytest.mark.parametrize("stage", STAGES)
def test_swapped_activation_is_found_with_its_source_lines(stage: str) -> None:
    relu, gelu = _golden("mlp_relu", stage), _golden("mlp_gelu", stage)
    diff = diff_modules(relu, gelu)
    _assert_counts_add_up(diff, relu, gelu)
    removed = _of_kind(diff, "removed")
    assert sorted(c.opcode for c in removed) == ["broadcast", "constant", "maximum"]
    assert {c.source.op_type for c in removed if c.source} == {"aten__relu"}
    assert all(c.source and c.source.file.endswith("torch/nn/functional.py") for c in removed)
    added = _of_kind(diff, "added")
    assert Counter(c.opcode for c in added) == Counter(
        {"constant": 3, "broadcast": 3, "multiply": 3, "erf": 1, "add": 1}
    )
    assert {c.source.op_type for c in added if c.source} == {"aten__gelu"}
    [changed] = _of_kind(diff, "changed")
    # Before optimization the next dot reads the new activation; after, the
    # fusion that holds the activation has a new body.
    expected = ("dot", ("operands",)) if stage == STAGES[0] else ("fusion", ("calls",))
    assert (changed.opcode, changed.reasons) == expected


@pytest.mark.parametrize("stage", STAGES)
def test_changed_dimension_is_a_shape_change_and_nothing_else(stage: str) -> None:
    narrow, wide = _golden("mlp_relu", stage), _golden("mlp_wide", stage)
    diff = diff_modules(narrow, wide)
    _assert_counts_add_up(diff, narrow, wide)
    assert not _of_kind(diff, "added") and not _of_kind(diff, "removed")
    changed = _of_kind(diff, "changed")
    assert changed
    for change in changed:
        assert "shape" in change.reasons
        assert set(change.reasons) <= {"shape", "calls"}
        assert "16" in change.details[0] and "32" in change.details[0]
    assert diff.header_changes == ("entry_computation_layout",)
    assert not diff.identical


@pytest.mark.parametrize("stage", STAGES)
def test_extra_op_is_added_at_its_python_line(stage: str) -> None:
    plain, extra = _golden("mlp_relu", stage), _golden("mlp_extra", stage)
    diff = diff_modules(plain, extra)
    _assert_counts_add_up(diff, plain, extra)
    assert not _of_kind(diff, "removed")
    [multiply] = [c for c in _of_kind(diff, "added") if c.opcode == "multiply"]
    assert multiply.source is not None
    assert multiply.source.op_type == "aten__mul"
    script = ASSETS / "make_goldens.py"
    line = script.read_text().splitlines().index("        return x * 2") + 1
    # The golden was captured in another checkout: compare the path within the repository.
    assert multiply.source.file.endswith("/tests/assets/hlo/make_goldens.py")
    assert multiply.source.line == line
    # The extra scalar operand shifts later parameter numbers: an interface change.
    renumbered = [c for c in _of_kind(diff, "changed") if c.opcode == "parameter"]
    assert renumbered and all(c.reasons in (("attributes",), ("shape",)) for c in renumbered)


def test_jax_before_and_after_optimization_differ_and_add_up() -> None:
    before = parse_hlo_file(ASSETS / "jax_cnn.before_optimizations.txt")
    after = parse_hlo_file(ASSETS / "jax_cnn.after_optimizations.txt")
    diff = diff_modules(before, after)
    _assert_counts_add_up(diff, before, after)
    assert not diff.identical
    assert "is_scheduled" in diff.header_changes
    sources = {c.source.location for c in diff.changes if c.source}
    assert any(location.startswith("examples/genjax2.py:") for location in sources)


SMALL = """\
HloModule m
ENTRY %e (p: f32[4,8]) -> f32[4,8] {
  %p = f32[4,8]{1,0} parameter(0)
  %c = f32[] constant(2)
  %b = f32[4,8]{1,0} broadcast(%c), dimensions={}
  %m = f32[4,8]{1,0} maximum(%p, %b), metadata={op_type="max" source_file="m.py" source_line=7}
  %t = f32[8,4]{1,0} transpose(%m), dimensions={1,0}
  ROOT %r = f32[4,8]{1,0} transpose(%t), dimensions={1,0}
}
"""


@pytest.mark.parametrize(
    ("old", "new", "opcode", "reasons"),
    [
        ("constant(2)", "constant(3)", "constant", ("constant",)),
        ("f32[4,8]{1,0} maximum", "f32[4,8]{0,1} maximum", "maximum", ("layout",)),
        ("f32[4,8]{1,0} maximum(%p, %b)", "f32[4,8]{1,0} minimum(%p, %b)", "minimum", ("opcode",)),
        (
            "transpose(%m), dimensions={1,0}",
            "transpose(%m), dimensions={0,1}",
            "transpose",
            ("attributes",),
        ),
        ("maximum(%p, %b)", "maximum(%b, %p)", "maximum", ("operands",)),
    ],
)
def test_one_edit_gives_one_change_with_its_reason(
    old: str, new: str, opcode: str, reasons: tuple[str, ...]
) -> None:
    diff = diff_modules(parse_hlo(SMALL), parse_hlo(SMALL.replace(old, new)))
    [change] = diff.changes
    assert (change.kind, change.opcode, change.reasons) == ("changed", opcode, reasons)
    assert change.source is not None and change.source.location == "m.py:7"
    assert change.source.inherited == (opcode != "maximum" and opcode != "minimum")


def test_metadata_alone_is_no_difference() -> None:
    moved = SMALL.replace("source_line=7", "source_line=70")
    assert diff_modules(parse_hlo(SMALL), parse_hlo(moved)).identical


def _wide_tuple(count: int, value: int) -> HloModule:
    constants = [f"  n{i} = f32[{i + 1}] constant({{{', '.join([str(value)] * (i + 1))}}})"
                 for i in range(count)]  # fmt: skip
    shapes = ", ".join(f"f32[{i + 1}]" for i in range(count))
    operands = ", ".join(f"n{i}" for i in range(count))
    return parse_hlo(
        "\n".join(["HloModule m", "ENTRY e {", *constants,
                   f"  ROOT t = ({shapes}) tuple({operands})", "}"])
    )  # fmt: skip


def test_a_wide_root_tuple_pairs_each_operand_with_its_kind() -> None:
    # 300 changed operands under a changed root: pairing by opcode and shape is grouped,
    # where a nested loop per operand made this cubic (a 746-output step: over 9 minutes).
    left, right = _wide_tuple(300, 1), _wide_tuple(301, 2)
    diff = diff_modules(left, right)
    changed = {(c.left.name, c.right.name) for c in diff.changes if c.kind == "changed"}
    assert changed == {(f"n{i}", f"n{i}") for i in range(300)} | {("t", "t")}
    assert [c.right.name for c in diff.changes if c.kind == "added"] == ["n300"]
