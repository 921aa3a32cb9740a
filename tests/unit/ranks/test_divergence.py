from __future__ import annotations

from tests.unit.ranks.reports import FIRST, STEP, compile_event, graph, rank_report
from xlacli.analysis.ranks.divergence import find_divergence


def test_identical_ranks_agree():
    report = rank_report([("aaaa1111",)] * 3, [STEP], [FIRST])
    assert find_divergence({0: report, 1: report}) is None


def test_master_only_value_read_is_an_extra_graph_on_rank_0():
    read = graph("bbbb2222", "/w/train.py:31", trigger="host_sync")
    rank0 = rank_report(
        [("aaaa1111",), ("aaaa1111",), ("bbbb2222", "aaaa1111")],
        [STEP, read],
        [FIRST, compile_event(2, "bbbb2222", "host_sync", "/w/train.py:31")],
    )
    rank1 = rank_report([("aaaa1111",)] * 3, [STEP], [FIRST])
    divergence = find_divergence({0: rank0, 1: rank1})
    assert divergence is not None
    assert (divergence.step, divergence.category) == (2, "host_sync")
    assert divergence.location == "/w/train.py:31"
    reference, other = divergence.groups
    assert reference.ranks == (1,) and reference.reference
    assert other.ranks == (0,) and [g.hash for g in other.only_here] == ["bbbb2222"]
    assert "rank 0 ran an extra graph" in divergence.summary
    assert "train.py:31 that rank 1 did not" in divergence.summary


def test_short_batch_names_the_inputs_of_both_sides():
    short = graph("cccc3333", "/w/train.py:32")
    rank1 = rank_report(
        [("aaaa1111",), ("cccc3333",)],
        [STEP, short],
        [FIRST, compile_event(1, "cccc3333", "input_shape", "/w/train.py:20", "16 -> 12")],
        inputs={1: ("input /w/train.py:20 f32[12,8]",)},
    )
    rank0 = rank_report(
        [("aaaa1111",)] * 2, [STEP], [FIRST], inputs={1: ("input /w/train.py:20 f32[16,8]",)}
    )
    divergence = find_divergence({0: rank0, 1: rank1})
    assert divergence is not None
    assert (divergence.step, divergence.category) == (1, "input_shape")
    assert divergence.location == "/w/train.py:20"
    assert "rank 1 ran a different graph" in divergence.summary
    assert "f32[12,8] (at train.py:20) where rank 0 had f32[16,8]" in divergence.summary


def test_the_majority_is_the_reference():
    other = graph("dddd4444", "/w/train.py:32")
    same = rank_report([("aaaa1111",)] * 2, [STEP], [FIRST])
    odd = rank_report(
        [("aaaa1111",), ("dddd4444",)],
        [STEP, other],
        [FIRST, compile_event(1, "dddd4444", "graph_structure", "/w/train.py:28")],
    )
    divergence = find_divergence({0: same, 1: same, 2: odd, 3: same})
    assert divergence is not None
    assert divergence.groups[0].ranks == (0, 1, 3)
    assert divergence.groups[1].ranks == (2,)
    assert divergence.category == "graph_structure"
    assert "rank 2 ran a different graph" in divergence.summary
    assert "that ranks 0, 1, 3 did not" in divergence.summary


def test_a_rank_with_fewer_steps_diverges_by_step_count():
    long = rank_report([("aaaa1111",)] * 3, [STEP], [FIRST])
    short = rank_report([("aaaa1111",)] * 2, [STEP], [FIRST])
    divergence = find_divergence({0: long, 1: long, 2: short})
    assert divergence is not None
    assert (divergence.step, divergence.category) == (2, "step_count")
    assert divergence.summary.startswith("step 2: rank 2 ran 2 steps; ranks 0, 1 ran more")


def test_collectives_in_the_diverging_graph_are_named():
    read = graph("bbbb2222", "/w/train.py:31", trigger="host_sync")
    rank0 = rank_report([("aaaa1111", "bbbb2222")], [STEP, read], [FIRST])
    rank1 = rank_report([("aaaa1111",)], [STEP], [FIRST])

    def collectives(rank: int, graph_hash: str) -> tuple[str, ...]:
        return ("all-reduce",) if graph_hash == "bbbb2222" else ()

    divergence = find_divergence({0: rank0, 1: rank1}, collectives)
    assert divergence is not None and divergence.collectives
    only = [g for group in divergence.groups for g in group.only_here]
    assert [g.collectives for g in only] == [("all-reduce",)]


def test_a_structural_divergence_is_placed_at_the_first_line_the_reference_lacks():
    from xlacli.analysis.ranks.divergence import first_added_line
    from xlacli.parse.ir_dump import parse_ir_node

    def nodes(text: str):
        return [parse_ir_node(line) for line in text.strip().splitlines()]

    reference = nodes(
        """
  %0 = f32[16,4]{1,0} aten::addmm(%1, %2, %3), location=forward@linear.py:134
  %1 = f32[16,4]{1,0} aten::pow(%0, %4), location=main@train.py:26
"""
    )
    branched = nodes(
        """
  %0 = f32[16,4]{1,0} aten::addmm(%1, %2, %3), location=forward@linear.py:134
  %1 = f32[16,4]{1,0} aten::pow(%0, %4), location=main@train.py:26
  %2 = f32[4,8]{1,0} aten::abs(%5), location=main@train.py:28
"""
    )
    assert first_added_line(branched, reference, "/w/train.py:32") == "/w/train.py:28"
    assert first_added_line(reference, reference, "/w/train.py:32") is None


def test_a_value_read_from_the_first_step_is_still_rank_0s_extra_graph():
    read = graph("bbbb2222", "/w/train.py:31", trigger="host_sync")
    rest = graph("cccc3333", "/w/train.py:32")
    rank0 = rank_report(
        [("bbbb2222", "cccc3333")] * 2,
        [read, rest],
        [
            compile_event(0, "bbbb2222", "first_compile", "/w/train.py:31"),
            compile_event(0, "cccc3333", "first_compile", "/w/train.py:32"),
        ],
    )
    rank1 = rank_report([("aaaa1111",)] * 2, [STEP], [FIRST])
    divergence = find_divergence({0: rank0, 1: rank1})
    assert divergence is not None
    assert (divergence.step, divergence.category) == (0, "host_sync")
    assert divergence.location == "/w/train.py:31"
    assert "rank 0 ran an extra graph" in divergence.summary


def test_a_sync_only_one_rank_reaches_is_placed_where_the_stacks_part():
    from xlacli.analysis.ranks.divergence import parting_line

    runpy = ("_run_code (<frozen runpy>:88)",)
    evaluate = (
        "sync (/v/site-packages/torch_xla/torch_xla.py:87)",
        "evaluate (/w/train.py:16)",
        "main (/w/train.py:35)",
        "<module> (/w/train.py:40)",
        *runpy,
    )
    loader = (
        "sync (/v/site-packages/torch_xla/torch_xla.py:87)",
        "next (/v/site-packages/torch_xla/distributed/parallel_loader.py:46)",
        "main (/w/train.py:29)",
        "<module> (/w/train.py:40)",
        *runpy,
    )
    assert parting_line(evaluate, loader) == "/w/train.py:35"
    assert parting_line(loader, loader) is None
