"""The bucket solver (exact DP over the sorted sizes) and the bucket advisor."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.unit.advice.graphs import ROOTS
from xlacli.analysis.advice.bucket_code import pad_code
from xlacli.analysis.advice.buckets import advise_buckets, bucket_options, solve_buckets
from xlacli.analysis.advice.inputs import AdviceInputs
from xlacli.report.run_report import CompileCause, CompileEvent, StepRecord


def _padding(sizes: list[tuple[int, int]], edges: tuple[int, ...]) -> int:
    return sum(count * (min(e for e in edges if e >= size) - size) for size, count in sizes)


def test_known_optimal_edges() -> None:
    # two tight clusters and an outlier: the outlier gets its own bucket
    sizes = [(10, 5), (11, 5), (100, 1)]
    assert solve_buckets(sizes, 1) == ((100,), 5 * 90 + 5 * 89)
    assert solve_buckets(sizes, 2) == ((11, 100), 5)
    assert solve_buckets(sizes, 3) == ((10, 11, 100), 0)
    # 1..16 once each into 2 buckets: the best split is at 8 (equal halves)
    uniform = [(size, 1) for size in range(1, 17)]
    assert solve_buckets(uniform, 2) == ((8, 16), 28 + 28)


def test_frequent_sizes_pull_an_edge_to_them() -> None:
    sizes = [(16, 1), (17, 100), (32, 1)]
    edges, _ = solve_buckets(sizes, 2)
    assert edges == (17, 32)


@pytest.mark.parametrize("seed", range(20))
def test_matches_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    sizes = sorted({rng.randint(1, 64): rng.randint(1, 9) for _ in range(7)}.items())
    for k in range(1, len(sizes) + 1):
        edges, padding = solve_buckets(sizes, k)
        assert _padding(sizes, edges) == padding
        best = min(
            _padding(sizes, (*combo, sizes[-1][0]))
            for combo in itertools.combinations([s for s, _ in sizes[:-1]], k - 1)
        )
        assert padding == best


def test_options_go_from_one_bucket_to_every_size() -> None:
    options = bucket_options([(8, 3), (12, 2)])
    assert [option.edges for option in options] == [(12,), (8, 12)]
    assert options[0].padding_waste == pytest.approx(12 / 60)  # 3 x 4 padded of 60 processed
    assert options[1].padding_waste == 0


def test_pad_code_pads_to_the_next_edge() -> None:
    import torch

    namespace: dict = {}
    exec(pad_code((16, 24), 1, 5), namespace)
    padded = namespace["pad_to_bucket"](torch.ones(2, 17, 3))
    assert tuple(padded.shape) == (2, 24, 3)
    assert padded[:, 17:].abs().sum() == 0
    assert tuple(namespace["pad_to_bucket"](torch.ones(2, 30, 3)).shape) == (2, 30, 3)


def _shape_run(lengths: list[int]) -> AdviceInputs:
    hashes = {length: f"h{length}" for length in lengths}
    events, seen = [], [lengths[0]]
    for step, length in enumerate(lengths):
        if length in seen:
            continue
        cause = CompileCause(
            "input_shape", "/project/data.py:9", None,
            f"input 0 shape s64[4,{seen[-1]}] -> s64[4,{length}]",
        )  # fmt: skip
        events.append(CompileEvent(step, hashes[length], 0.5, True, cause, hashes[seen[-1]]))
        seen.append(length)
    steps = tuple(
        StepRecord(step, 0.01, 0, 1, (f"input 0 s64[4,{n}]",), (hashes[n],))
        for step, n in enumerate(lengths)
    )
    return AdviceInputs((), ROOTS, events=tuple(events), step_records=steps)


def test_advisor_collects_every_step_size_at_the_site() -> None:
    lengths = [5, 7, 16, 5, 16, 16, 9, 16]
    (advice,) = advise_buckets(_shape_run(lengths))
    assert advice.dimension == "input 0, dim 1"
    assert advice.location == "/project/data.py:9"
    assert advice.sizes == ((5, 2), (7, 1), (9, 1), (16, 4))
    assert advice.steps == 8
    assert advice.compiles_seen == 4
    chosen = advice.options[advice.chosen]
    assert chosen.padding_waste <= 0.2
    assert all(option.padding_waste > 0.2 for option in advice.options[: advice.chosen])


def test_advisor_is_silent_without_shape_recompiles() -> None:
    assert advise_buckets(_shape_run([16, 16, 16])) == ()


def test_a_cause_naming_two_changes_is_advised_on_its_first() -> None:
    """Issue 38 (the newcomer pass): a short last batch shortens the inputs and their
    labels, one cause naming both; the advice names the first input, not the text
    between the two arrows."""
    lengths = [32, 32, 32, 4, 32, 32, 4]
    run = _shape_run(lengths)
    events = tuple(
        CompileEvent(
            e.step,
            e.graph_hash,
            e.compile_time_s,
            e.steady_state,
            CompileCause(
                "input_shape",
                "/project/train.py:33",
                None,
                f"input /project/train.py:33 shape f32[{a},16] -> f32[{b},16]; "
                f"input /project/train.py:34 shape s64[{a}] -> s64[{b}]",
            ),
            e.compared_with,
        )
        for e, (a, b) in zip(run.events, [(32, 4)], strict=True)
    )
    steps = tuple(StepRecord(step, 0.01, 0, 1, (), (f"h{n}",)) for step, n in enumerate(lengths))
    (advice,) = advise_buckets(AdviceInputs((), ROOTS, events=events, step_records=steps))
    assert advice.dimension == "input /project/train.py:33, dim 0"
    assert advice.sizes == ((4, 2), (32, 5))


def _two_dims_run() -> AdviceInputs:
    """Dim 0 spreads too far to bucket within 20%; dim 1 buckets well."""
    shapes = [(10, 30), (100, 31), (10, 30), (10, 60), (10, 61), (10, 30)]
    hashes = {shape: f"h{index}" for index, shape in enumerate(dict.fromkeys(shapes))}
    events, seen = [], [shapes[0]]
    for step, shape in enumerate(shapes):
        if shape in seen:
            continue
        before = seen[-1]
        detail = f"input 0 shape f32[{before[0]},{before[1]}] -> f32[{shape[0]},{shape[1]}]"
        cause = CompileCause("input_shape", "/project/data.py:9", None, detail)
        events.append(CompileEvent(step, hashes[shape], 0.5, True, cause, hashes[before]))
        seen.append(shape)
    steps = tuple(StepRecord(s, 0.01, 0, 1, (), (hashes[shape],)) for s, shape in enumerate(shapes))
    return AdviceInputs((), ROOTS, events=tuple(events), step_records=steps)


def test_one_advice_per_site_the_other_dimension_noted() -> None:
    """Issue 37: a site got an advised block and a "keep the sizes" block."""
    (advice,) = advise_buckets(_two_dims_run())
    assert advice.dimension == "input 0, dim 1"
    assert advice.code and "EDGES = (31, 61)" in advice.code
    (note,) = advice.also
    assert note.startswith("input 0, dim 0 also changes here")
    assert "kept" in note


def test_no_code_when_no_bucketing_pays() -> None:
    """The page and the terminal print the same: no snippet when the sizes are kept."""
    lengths = [10, 100, 10, 100]
    (advice,) = advise_buckets(_shape_run(lengths))
    assert advice.options[advice.chosen].compiles == len(advice.sizes)
    assert advice.code == ""


def test_a_loss_target_is_found_through_its_reshapes() -> None:
    from xlacli.analysis.advice.loss_targets import loss_targets
    from xlacli.parse.ir_dump import parse_ir_node

    lines = [
        "%0 = s64[2,9]{1,0} xla::device_data(), location=to_device@steps.py:107",
        "%1 = s64[18]{0} aten::view(%0), location=f@m.py:3",
        "%2 = f32[18,5]{1,0} xla::device_data(), location=f@m.py:3",
        "%3 = f32[] aten::nll_loss(%2, %1), location=cross_entropy@functional.py:3458",
    ]
    nodes = [node for line in lines if (node := parse_ir_node(line)) is not None]
    assert loss_targets(nodes) == {("s64[2,9]", "nll_loss"): 1}
