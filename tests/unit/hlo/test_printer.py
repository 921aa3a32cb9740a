"""The printer: parse, print, parse gives the same module; torch_xla dumps print back exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FEATURES_HLO, GOLDEN_FILES
from hlo_transforms import renumber, reorder

from xlacli.hlo import HloModule, parse_hlo, parse_hlo_file, print_module
from xlacli.hlo.printer import instruction_text


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.name)
def test_round_trip_gives_the_same_module(path: Path) -> None:
    module = parse_hlo_file(path)
    printed = print_module(module)
    again = parse_hlo(printed, "printed")
    assert again == module
    assert print_module(again) == printed


@pytest.mark.parametrize(
    "path",
    [p for p in GOLDEN_FILES if p.name != "jax_cnn.before_optimizations.txt"],
    ids=lambda p: p.name,
)
def test_dumps_that_use_percent_names_print_back_byte_for_byte(path: Path) -> None:
    # jax_cnn.before_optimizations.txt prints names without %, which the printer adds.
    assert print_module(parse_hlo_file(path)) == path.read_text()


def test_round_trip_of_every_construct(features: HloModule) -> None:
    printed = print_module(features)
    assert parse_hlo(printed) == features
    assert "%cc = f32[8,128]{1,0} custom-call(%fusion.1)" in printed
    assert "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])" in printed
    assert '}, execution_thread="main"' in printed


def test_resolved_sources_print_back_as_stack_frame_ids(features: HloModule) -> None:
    exp = features.computation("fused_exp").root
    assert exp.metadata.source == "layers/block.py:31"
    text = instruction_text(exp)
    assert text.endswith('metadata={op_type="aten__exp" op_name="model/exp" stack_frame_id=2}')


def test_long_operand_lists_carry_index_comments() -> None:
    operands = ", ".join(f"%p{k}" for k in range(7))
    parameters = "\n".join(f"  %p{k} = f32[] parameter({k})" for k in range(7))
    module = parse_hlo(
        f"HloModule m\nENTRY %e {{\n{parameters}\n  ROOT %t = (f32[], f32[], f32[], f32[], "
        f"f32[], f32[], f32[]) tuple({operands})\n}}\n"
    )
    assert "tuple(%p0, %p1, %p2, %p3, %p4, /*index=5*/%p5, %p6)" in print_module(module)


@pytest.mark.parametrize(
    "path", [*GOLDEN_FILES[:4], None], ids=lambda p: p.name if p else "features"
)
def test_renumbered_and_reordered_modules_print_and_parse_back(path: Path | None) -> None:
    module = parse_hlo_file(path) if path else parse_hlo(FEATURES_HLO)
    changed = reorder(renumber(module, seed=3), seed=4)
    assert parse_hlo(print_module(changed)) == changed
