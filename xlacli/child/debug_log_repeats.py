"""The PT_XLA_DEBUG log, with what repeats step after step folded into one line.

torch_xla appends an "Execution Analysis" block at every execution (~1.3 KB
with its 64 frames), so the log grows with the steps even when every step
runs the same graph from the same lines: 13 MB after 10,000 steps of one
cached graph, all of it the same block. torch_xla opens the file in append
mode for each block and closes it again (``debug_util.cpp``), so the child
may shorten it between two syncs. After each step the child reads what the
step appended; when it is byte for byte what the step before appended, it is
cut off and counted in one line kept after the last copy
(``parse/debug_log.py``'s ``repeat_line``), rewritten in place as the count
grows. The parser puts the repeated events back: the report is the one the
unfolded log gives, and the log (and the parent's memory) grows with what
changes, not with the steps.

The file is always whole between two steps: a run killed at any point keeps
every block torch_xla wrote before its last completed step.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from xlacli.parse.debug_log import repeat_line

# The first line of each block the parser reads as an event (an "Unexpected
# Execution Analysis" block is not one, and does not match: a space precedes it).
_BLOCK_STARTS = (
    b"\nCompilation Analysis: Compilation Cause\n",
    b"\nExecution Analysis: Execution Cause\n",
)
_FIRST_LINES = (b"\nCompilation Analysis: =", b"\nExecution Analysis: =")


class RepeatFolder:
    """Folds each step's blocks into a count when they repeat the step before's."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._kept_end = 0  # where the last step's blocks kept in full end
        self._end = 0  # the file's end as this folder left it (kept blocks + count line)
        self._last = b""  # what the last step kept in full appended
        self._blocks = 0  # how many events that is
        self._repeats = 0
        self._failed = False

    def after_step(self) -> None:
        """A step (or the setup) is done: fold what it appended if it repeats."""
        if self._failed:
            return
        try:
            self._fold()
        except OSError as error:  # the folding is a saving: never fail the run for it
            self._failed = True
            print(f"xlacli: the debug log is kept unfolded: {error}", file=sys.stderr)

    def _fold(self) -> None:
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return
        if size < self._end:  # emptied by someone else: start again
            self._kept_end = self._end = 0
            self._last, self._blocks, self._repeats = b"", 0, 0
        if size == self._end:
            return  # nothing ran since the last step: the next may still repeat
        with self.path.open("r+b") as file:
            file.seek(self._end)
            appended = file.read(size - self._end)
            if self._blocks and appended == self._last:
                self._repeats += 1
                line = repeat_line(self._blocks, self._repeats).encode()
                file.seek(self._kept_end)
                file.write(line)
                file.truncate()
                self._end = self._kept_end + len(line)
                return
        self._last, self._blocks, self._repeats = appended, _blocks_in(appended), 0
        self._kept_end = self._end = size


def _blocks_in(text: bytes) -> int:
    """How many events ``text`` holds; 0 when it does not start with a block
    (then it is never folded: a count must stand for whole blocks)."""
    if not text.startswith(_FIRST_LINES):
        return 0
    return sum(text.count(start) for start in _BLOCK_STARTS)
