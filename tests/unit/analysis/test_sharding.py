"""Shardings, collectives and sharding recompiles, on HLO text like XLA's."""

from __future__ import annotations

import pytest

from xlacli.analysis.check.baseline import Baseline, collective_counts
from xlacli.analysis.check.checks import REGRESSION, compare
from xlacli.analysis.spmd.collectives import find_collectives
from xlacli.analysis.spmd.graph import graph_spmd, mesh_from_events, sharding_sites
from xlacli.analysis.spmd.sharding import axis_notation, parse_tile_sharding
from xlacli.analysis.spmd.sharding_change import ShardingContext, input_sharding_change
from xlacli.hlo.parser import parse_hlo
from xlacli.report.sharding import CollectiveOp, GraphSpmd, MeshRecord, graph_spmd_from_dict
from xlacli.run_folder.events import ShardingEvent, StartEvent

MESH_2X2 = MeshRecord((2, 2), ("data", "model"), (0, 1, 2, 3))


@pytest.mark.parametrize(
    ("sharding", "expected"),
    [
        # Strings torch_xla 2.9 printed for mark_sharding on a 2x2 (data, model) mesh.
        ("{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}", "(model, None)"),
        ("{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}", "(None, model)"),
        ("{devices=[2,1,1,2]0,1,2,3 last_tile_dim_replicate}", "(data, None, None)"),
        ("{devices=[2,2]0,2,1,3 last_tile_dim_replicate}", "(model)"),
        ("{devices=[2,2]<=[4]}", "(data, model)"),
        ("{devices=[4,1]0,1,2,3}", "(data×model, None)"),
        ("{replicated}", "replicated"),
        ("{maximal device=1}", "device 1"),
        ("{manual}", "manual"),
    ],
)
def test_axis_notation_reads_the_partition_spec_back(sharding, expected):
    assert axis_notation(sharding, MESH_2X2) == expected


def test_a_sharding_no_spec_makes_stays_in_hlo_form():
    text = "{devices=[4,1]3,2,1,0}"
    assert axis_notation(text, MESH_2X2) == text
    assert axis_notation("{devices=[4,1]0,1,2,3}", None) == "{devices=[4,1]0,1,2,3}"


def test_iota_tile_assignments_are_transposed():
    tile = parse_tile_sharding("{devices=[4,1]<=[2,2]T(1,0)}")
    assert tile is not None and tile.devices == (0, 2, 1, 3) and not tile.replicated_last


BEFORE = """HloModule m, entry_computation_layout={(f32[8,16]{1,0}, f32[4,16]{1,0})->(f32[8,4]{1,0})}

ENTRY %main (p0: f32[8,16], p1: f32[4,16]) -> (f32[8,4]) {
  %p1 = f32[4,16]{1,0} parameter(1), sharding={replicated}
  %p0 = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %t = f32[16,4]{0,1} transpose(%p1), dimensions={1,0}
  %dot = f32[8,4]{1,0} dot(%p0, %t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %s = f32[8,4]{1,0} custom-call(%dot), custom_call_target="Sharding", sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  ROOT %tuple = (f32[8,4]{1,0}) tuple(%s)
}
"""

AFTER = """HloModule m, is_scheduled=true

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %a = f32[] add(%x, %y)
}

ENTRY %main_spmd (param: f32[4,16], param.1: f32[4,16]) -> (f32[4,4]) {
  %param.1 = f32[4,16]{1,0} parameter(1), sharding={replicated}
  %param = f32[4,16]{1,0} parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %ag = f32[8,16]{1,0} all-gather(%param), channel_id=1, replica_groups={{0,2},{1,3}}, dimensions={0}, use_global_device_ids=true, metadata={op_type="aten__mm" source_file="/home/me/model.py" source_line=12}
  %ars = f32[4,4]{1,0} all-reduce-start(%param.1), channel_id=2, replica_groups=[2,2]<=[4], to_apply=%add
  %ard = f32[4,4]{1,0} all-reduce-done(%ars)
  %cps = (f32[4,16]{1,0}, f32[4,16]{1,0}, u32[], u32[]) collective-permute-start(%param), channel_id=3, source_target_pairs={{0,1},{1,0}}
  %cpd = f32[4,16]{1,0} collective-permute-done(%cps)
  ROOT %tuple = (f32[4,4]{1,0}) tuple(%ard)
}
"""


def test_collectives_are_counted_once_with_their_bytes_and_groups():
    ops = find_collectives(parse_hlo(AFTER))
    assert [(op.kind, op.bytes, op.is_async) for op in ops] == [
        ("all-gather", 8 * 16 * 4, False),
        ("all-reduce", 4 * 4 * 4, True),
        ("collective-permute", 4 * 16 * 4, True),
    ]
    assert ops[0].replica_groups == "{{0,2},{1,3}}" and ops[0].location == "/home/me/model.py:12"
    assert ops[2].replica_groups == "{{0,1},{1,0}}"


def test_graph_spmd_joins_shardings_shards_and_sites():
    mesh = MeshRecord((2, 2), ("data", "model"), (0, 1, 2, 3))
    sites = {("{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", "f32[8,16]"): "/m.py:9"}
    spmd = graph_spmd(parse_hlo(BEFORE), parse_hlo(AFTER), devices=4, mesh=mesh, sites=sites)
    assert spmd is not None
    first = spmd.inputs[0]
    assert (first.type, first.per_device_type, first.axes, first.location) == (
        "f32[8,16]",
        "f32[4,16]",
        "(data, None)",
        "/m.py:9",
    )
    assert spmd.inputs[1].axes == "replicated"
    assert spmd.outputs[0].axes == "(data, None)" and spmd.outputs[0].per_device_type == "f32[4,4]"
    assert spmd.collective_counts() == {
        "all-gather": (1, 512),
        "all-reduce": (1, 64),
        "collective-permute": (1, 256),
    }
    assert graph_spmd_from_dict(_as_dict(spmd)) == spmd


def _as_dict(spmd: GraphSpmd) -> dict:
    import dataclasses
    import json

    return json.loads(json.dumps(dataclasses.asdict(spmd)))


def test_the_mesh_and_sites_come_from_the_child_events():
    mesh = {"shape": [4], "axis_names": ["data"], "device_ids": [0, 1, 2, 3]}
    record = {
        "site": "/m.py:3",
        "spec": ["data"],
        "mesh": mesh,
        "type": "f32[8]",
        "hlo_sharding": "{x}",
    }
    events = [ShardingEvent(0, shardings=[record])]
    assert mesh_from_events(StartEvent(spmd=True), events) == MeshRecord(
        (4,), ("data",), (0, 1, 2, 3)
    )
    assert sharding_sites(events) == {("{x}", "f32[8]"): "/m.py:3"}


def test_a_changed_input_sharding_is_found_with_its_line():
    old = parse_hlo(BEFORE)
    new = parse_hlo(
        BEFORE.replace(
            "parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
            "parameter(0), sharding={devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}",
        )
    )
    sites = {("{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}", "f32[8,16]"): "/m.py:20"}
    context = ShardingContext(sites, MESH_2X2)
    location, detail = input_sharding_change(old, new, context)
    assert location == "/m.py:20"
    assert detail.startswith(
        "parameter 0 f32[8,16] sharding (data, None) {devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}"
        " -> (None, model) {devices=[1,2,2]"
    )
    assert input_sharding_change(old, old, context) is None


def test_a_changed_sharding_annotation_on_an_activation_is_found_with_its_line():
    old = parse_hlo(BEFORE)
    new = parse_hlo(
        BEFORE.replace(
            'custom_call_target="Sharding", sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}',
            'custom_call_target="Sharding", sharding={devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}',
        )
    )
    sites = {("{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}", "f32[8,4]"): "/m.py:31"}
    location, detail = input_sharding_change(old, new, ShardingContext(sites, MESH_2X2))
    assert location == "/m.py:31"
    assert detail.startswith("the sharding annotation on f32[8,4] (data, None)")
    assert "-> (None, model)" in detail


def test_the_mesh_a_script_only_built_is_the_run_s_mesh():
    mesh = {"shape": [4], "axis_names": ["data"], "device_ids": [0, 1, 2, 3], "site": "/m.py:9"}
    events = [ShardingEvent(None, meshes=[mesh])]
    assert mesh_from_events(StartEvent(), events) == MeshRecord((4,), ("data",), (0, 1, 2, 3))


def test_check_flags_an_added_all_gather():
    def baseline(spmd: GraphSpmd) -> Baseline:
        return Baseline(
            "m.py",
            "CPU",
            2,
            2,
            False,
            "",
            1,
            1,
            0,
            (1, 1),
            collectives=collective_counts("m.py#0", spmd),
        )

    op = CollectiveOp("all-reduce", "all-reduce", 64, "{{0,1}}", False, None)
    gather = CollectiveOp("all-gather", "all-gather", 512, "{{0,1}}", False, None)
    before = GraphSpmd(4, None, (), (), (op,))
    after = GraphSpmd(4, None, (), (), (op, gather))
    outcome = compare(baseline(before), baseline(after))
    regressed = {result.name for result in outcome.regressions}
    assert regressed == {"collectives m.py#0 all-gather", "collectives m.py#0 all-gather bytes"}
    assert all(r.status == REGRESSION for r in outcome.regressions)


def test_diff_hlo_names_sharding_and_collective_changes():
    from xlacli.analysis.spmd.changes import spmd_change_summary
    from xlacli.hlo.diff import diff_modules

    resharded = BEFORE.replace(
        "parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
        "parameter(0), sharding={devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}",
    )
    diff = diff_modules(parse_hlo(BEFORE), parse_hlo(resharded))
    assert spmd_change_summary(diff.changes) == {"sharding changed": 1}
    gathered = (
        AFTER.replace(
            "  %cps = ",
            "  %ag2 = f32[8,16]{1,0} all-gather(%param.1), replica_groups={{0,1}}, dimensions={0}\n"
            "  %cps = ",
        )
        .replace("tuple(%ard)", "tuple(%ard, %ag2)")
        .replace("-> (f32[4,4])", "-> (f32[4,4], f32[8,16])")
    )
    gathered = gathered.replace(
        "ROOT %tuple = (f32[4,4]{1,0})", "ROOT %tuple = (f32[4,4]{1,0}, f32[8,16]{1,0})"
    )
    diff = diff_modules(parse_hlo(AFTER), parse_hlo(gathered))
    assert spmd_change_summary(diff.changes).get("collective added") == 1
