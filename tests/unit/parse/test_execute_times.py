"""Execution times that do not count the device twice (issue 38): each
execution's time starts at the later of its dispatch and the end of the one
before it, on hand-built samples."""

from __future__ import annotations

import pytest

from xlacli.parse.execute_times import device_times


def test_executions_that_never_overlap_keep_their_samples():
    # Dispatched 1 s apart, each running 0.25 s.
    assert device_times([0.25, 0.25, 0.25], [10.25, 11.25, 12.25]) == [0.25, 0.25, 0.25]


def test_a_graph_queued_behind_others_keeps_only_its_own_time():
    # Three dispatched at once (t=0): the device runs 1 s, 1 s, then 0.001 s;
    # torch_xla's samples run from the dispatch: 1, 2 and 2.001 s.
    own = device_times([1.0, 2.0, 2.001], [1.0, 2.0, 2.001])
    assert own == pytest.approx([1.0, 1.0, 0.001])
    assert sum(own) == pytest.approx(2.001)  # the time the device was busy


def test_a_gap_between_executions_is_nobodys():
    own = device_times([1.0, 3.0, 0.5], [1.0, 3.0, 10.0])
    assert own == pytest.approx([1.0, 2.0, 0.5])


def test_an_execution_covered_by_the_ones_before_counts_nothing():
    assert device_times([5.0, 1.0], [5.0, 4.0]) == [5.0, 0.0]


def test_no_samples():
    assert device_times([], []) == []
