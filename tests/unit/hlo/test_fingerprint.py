"""Fingerprints ignore names, ids, order and metadata, and see everything else."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ASSETS, GOLDEN_FILES
from hlo_transforms import renumber, reorder

from xlacli.errors import HloParseError
from xlacli.hlo import HloModule, parse_hlo, parse_hlo_file
from xlacli.hlo.fingerprint import fingerprint, module_fingerprint
from xlacli.hlo.graph import build_graph

BASE = """\
HloModule m
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e (p: f32[4,8]) -> f32[4] {
  %p = f32[4,8]{1,0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[4]{0} reduce(%p, %zero), dimensions={1}, to_apply=%sum
}
"""


def _local_of_root(text: str) -> tuple[int, int]:
    module = parse_hlo(text)
    graph = build_graph(module)
    fingerprints = fingerprint(graph)
    root = graph.node_of(module.entry.root)
    return fingerprints.local[root], fingerprints.subgraph[root]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("%r = f32[4]{0}", "%renamed.7 = f32[4]{0}"),  # name
        ("to_apply=%sum", 'to_apply=%sum, metadata={op_type="aten__sum" source_line=3}'),
        ("%zero)", "%zero), control-predecessors={%p}"),
    ],
)
def test_names_metadata_and_control_edges_do_not_count(old: str, new: str) -> None:
    assert _local_of_root(BASE) == _local_of_root(BASE.replace(old, new))


@pytest.mark.parametrize(
    ("old", "new", "local_changes"),
    [
        ("f32[4]{0} reduce", "f32[4]{0} reduce", False),
        ("dimensions={1}", "dimensions={0}", True),  # an attribute
        ("constant(0)", "constant(1)", False),  # below the root: only the subgraph changes
        ("ROOT %s = f32[] add", "ROOT %s = f32[] maximum", False),  # in the called computation
        ("%p = f32[4,8]{1,0}", "%p = f32[4,8]{0,1}", False),  # a layout below
    ],
)
def test_what_a_node_computes_reaches_its_subgraph_fingerprint(
    old: str, new: str, local_changes: bool
) -> None:
    base_local, base_subgraph = _local_of_root(BASE)
    local, subgraph = _local_of_root(BASE.replace(old, new))
    assert (local != base_local) == local_changes
    assert (subgraph != base_subgraph) == (old != new)


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.name)
def test_module_fingerprint_survives_renumbering_and_reordering(path: Path) -> None:
    module = parse_hlo_file(path)
    assert module_fingerprint(module) == module_fingerprint(reorder(renumber(module, 5), 6))


def test_module_fingerprint_sees_a_changed_activation() -> None:
    relu = parse_hlo_file(ASSETS / "torch_mlp_relu.after_optimizations.txt")
    gelu = parse_hlo_file(ASSETS / "torch_mlp_gelu.after_optimizations.txt")
    assert module_fingerprint(relu) != module_fingerprint(gelu)


def test_cycles_are_reported_as_malformed_hlo() -> None:
    module: HloModule = parse_hlo(
        "HloModule m\nENTRY e {\n  a = f32[] negate(b)\n  ROOT b = f32[] negate(a)\n}\n"
    )
    with pytest.raises(HloParseError, match="cycle") as raised:
        build_graph(module)
    assert raised.value.line in (3, 4)
