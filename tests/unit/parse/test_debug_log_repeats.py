"""The child's folding of the PT_XLA_DEBUG log (issue 23): what a step appends
that repeats the step before is cut and counted; the parser puts it back, so
the events are those of the unfolded log."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import GOLDEN
from xlacli.child import debug_log_repeats
from xlacli.child.debug_log_repeats import RepeatFolder
from xlacli.parse.debug_log import parse_debug_log

# A real log (host_sync: value reads and syncs), cut into its blocks: 0 compile,
# 1 execute, 2 compile, 3 execute, 4 compile, 5-7 execute, 8 compile, 9 execute.
_TEXT = (GOLDEN / "host_sync" / "pt-xla-debug.txt").read_text()
BLOCKS = [b for b in re.split(r"(?<=\n)(?=\n(?:Compilation|Execution) Analysis: =)", _TEXT) if b]


def _run_steps(path: Path, steps: list[list[int]], folder: RepeatFolder | None = None) -> str:
    """Append each step's blocks as torch_xla would, noting each step, and fold
    at the end (as the child does when it closes); returns the unfolded text."""
    folder = folder or RepeatFolder(path)
    unfolded = ""
    for blocks in steps:
        appended = "".join(BLOCKS[i] for i in blocks)
        with path.open("a", encoding="utf-8") as file:  # torch_xla opens in append mode
            file.write(appended)
        unfolded += appended
        folder.after_step()
    folder.flush()
    return unfolded


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.01  # each step a hundredth of a second
        return self.now


def test_the_golden_log_has_ten_blocks():
    assert len(BLOCKS) == 10
    assert all(b.startswith("\n") for b in BLOCKS)


def test_repeated_steps_fold_and_parse_back_to_the_same_events(tmp_path):
    path = tmp_path / "pt-xla-debug.txt"
    steps = [[0, 1], [2, 3], [4, 5], *[[6, 7]] * 40, [], [6, 7], [8, 9], *[[9]] * 30, [6]]
    unfolded = _run_steps(path, steps)
    folded = path.read_text()
    assert parse_debug_log(folded) == parse_debug_log(unfolded)
    assert len(parse_debug_log(folded)) == 2 * 3 + 2 * 41 + 2 + 30 + 1
    assert re.findall(r"^Repeated Analysis: .*$", folded, re.MULTILINE) == [
        "Repeated Analysis: the last 2 blocks, 40 more times",
        "Repeated Analysis: the last 1 blocks, 29 more times",
    ]
    assert len(folded) < len(unfolded) / 5


@pytest.mark.parametrize("fold_steps", [1, 3, 64])
def test_folding_in_batches_gives_the_same_file(tmp_path, monkeypatch, fold_steps):
    """Folded every step, every third step or once at the end: the same file."""
    monkeypatch.setattr(debug_log_repeats, "FOLD_STEPS", fold_steps)
    steps = [[0, 1], [2, 3], *[[6, 7]] * 10, [], [6, 7], [8, 9], *[[9]] * 7, [6], [6]]
    path = tmp_path / "pt-xla-debug.txt"
    unfolded = _run_steps(path, steps)
    folded = path.read_text()
    assert parse_debug_log(folded) == parse_debug_log(unfolded)
    assert re.findall(r"^Repeated Analysis: .*$", folded, re.MULTILINE) == [
        "Repeated Analysis: the last 2 blocks, 10 more times",
        "Repeated Analysis: the last 1 blocks, 6 more times",
        "Repeated Analysis: the last 1 blocks, 1 more times",
    ]


def test_what_runs_after_the_last_step_survives_the_fold(tmp_path):
    """A script's work after its loop (an evaluation's value read) appends blocks
    no step ends: folding the steps before them keeps them whole."""
    path = tmp_path / "pt-xla-debug.txt"
    folder = RepeatFolder(path)
    unfolded = ""
    for blocks in [[0, 1], *[[5]] * 4]:
        appended = "".join(BLOCKS[i] for i in blocks)
        with path.open("a", encoding="utf-8") as file:
            file.write(appended)
        unfolded += appended
        folder.after_step()
    after_loop = BLOCKS[2] + BLOCKS[3]
    with path.open("a", encoding="utf-8") as file:
        file.write(after_loop)
    folder.flush()  # the run ends
    folded = path.read_text()
    assert folded.endswith(after_loop)
    assert parse_debug_log(folded) == parse_debug_log(unfolded + after_loop)
    assert "the last 1 blocks, 3 more times" in folded


def test_a_slow_run_folds_by_the_clock(tmp_path, monkeypatch):
    """Steps a hundredth of a second apart: folded every half second (50 steps),
    not only at the end."""
    path = tmp_path / "pt-xla-debug.txt"
    folder = RepeatFolder(path, clock=Clock())
    for _ in range(60):
        with path.open("a", encoding="utf-8") as file:
            file.write(BLOCKS[5])
        folder.after_step()
    assert "Repeated Analysis: the last 1 blocks, " in path.read_text()


@pytest.mark.parametrize("fold_steps", [1, 2, 64])
def test_the_file_is_whole_after_every_step(tmp_path, monkeypatch, fold_steps):
    """A run killed between two steps keeps every block written so far."""
    monkeypatch.setattr(debug_log_repeats, "FOLD_STEPS", fold_steps)
    path = tmp_path / "pt-xla-debug.txt"
    folder = RepeatFolder(path)
    unfolded = ""
    for blocks in [[0, 1], *[[5]] * 5, [8, 9], *[[9]] * 3]:
        appended = "".join(BLOCKS[i] for i in blocks)
        with path.open("a", encoding="utf-8") as file:
            file.write(appended)
        unfolded += appended
        folder.after_step()
        assert parse_debug_log(path.read_text()) == parse_debug_log(unfolded)


def test_a_log_emptied_by_someone_else_starts_again(tmp_path):
    """The pytest plugin empties the log between tests (torch_xla appends to it)."""
    path = tmp_path / "pt-xla-debug.txt"
    _run_steps(path, [[5], [5], [5]])
    path.write_text("")
    unfolded = _run_steps(path, [[6], [6]])
    assert parse_debug_log(path.read_text()) == parse_debug_log(unfolded)


def test_text_that_is_not_whole_blocks_is_never_folded(tmp_path):
    path = tmp_path / "pt-xla-debug.txt"
    folder = RepeatFolder(path)
    for _ in range(3):
        with path.open("a", encoding="utf-8") as file:
            file.write("some other line\n")
        folder.after_step()
    assert path.read_text() == "some other line\n" * 3


def test_no_log_no_folding(tmp_path):
    RepeatFolder(tmp_path / "missing.txt").after_step()  # torch_xla wrote nothing yet
    assert not (tmp_path / "missing.txt").exists()
