"""The child's folding of the PT_XLA_DEBUG log (issue 23): what a step appends
that repeats the step before is cut and counted; the parser puts it back, so
the events are those of the unfolded log."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import GOLDEN
from xlacli.child.debug_log_repeats import RepeatFolder
from xlacli.parse.debug_log import parse_debug_log

# A real log (host_sync: value reads and syncs), cut into its blocks: 0 compile,
# 1 execute, 2 compile, 3 execute, 4 compile, 5-7 execute, 8 compile, 9 execute.
_TEXT = (GOLDEN / "host_sync" / "pt-xla-debug.txt").read_text()
BLOCKS = [b for b in re.split(r"(?<=\n)(?=\n(?:Compilation|Execution) Analysis: =)", _TEXT) if b]


def _run_steps(path: Path, steps: list[list[int]]) -> str:
    """Append each step's blocks as torch_xla would, folding after each step;
    returns the unfolded text."""
    folder = RepeatFolder(path)
    unfolded = ""
    for blocks in steps:
        appended = "".join(BLOCKS[i] for i in blocks)
        with path.open("a", encoding="utf-8") as file:  # torch_xla opens in append mode
            file.write(appended)
        unfolded += appended
        folder.after_step()
    return unfolded


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


def test_the_file_is_whole_after_every_step(tmp_path):
    """A run killed between two steps keeps every block written so far."""
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
