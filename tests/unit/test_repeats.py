"""Folded sequences (xlacli/repeats.py)."""

from xlacli.repeats import FOLD_RUN, KEEP_HEAD, KEEP_TAIL, Stretch, shown_of_run, stretches


def test_a_repeating_block_is_one_stretch_and_the_rest_single_items():
    keys = ["a", "b", *(["x", "y"] * 5), "c"]
    assert stretches(keys) == [
        Stretch(0, 1, 1), Stretch(1, 1, 1), Stretch(2, 2, 5), Stretch(12, 1, 1),
    ]  # fmt: skip


def test_fewer_than_three_repeats_stay_as_they_are_and_a_break_is_never_inside():
    assert all(s.repeats == 1 for s in stretches(["x", "y", "x", "y"]))
    cut = stretches(["x"] * 3 + ["x"] * 4, breaks={3})
    assert cut == [Stretch(0, 1, 3), Stretch(3, 1, 4)]


def test_the_stretch_covering_most_wins_shortest_period_first():
    assert stretches(["x"] * 6) == [Stretch(0, 1, 6)]
    assert stretches(["x", "y", "z"] * 4) == [Stretch(0, 3, 4)]


def test_a_timeline_shows_a_long_runs_ends_and_a_short_run_whole():
    assert shown_of_run(5, 5 + FOLD_RUN) == (
        range(5, 5 + FOLD_RUN),
        range(5 + FOLD_RUN, 5 + FOLD_RUN),
    )
    head, tail = shown_of_run(5, 1005)
    assert (len(head), len(tail)) == (KEEP_HEAD, KEEP_TAIL)
    assert (head.start, tail.stop, tail.start - head.stop) == (
        5,
        1005,
        1000 - KEEP_HEAD - KEEP_TAIL,
    )
