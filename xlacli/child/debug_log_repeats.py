"""The PT_XLA_DEBUG log, with what repeats step after step folded into one line.

torch_xla appends an "Execution Analysis" block at every execution (~1.3 KB
with its 64 frames), so the log grows with the steps even when every step
runs the same graph from the same lines: 13 MB after 10,000 steps of one
cached graph, all of it the same block. torch_xla opens the file in append
mode for each block and closes it again (``debug_util.cpp``), so the child
may shorten it between two syncs. The child notes where each step's blocks
end and, every few dozen steps, reads what the steps appended; a step's
blocks that are byte for byte the step before's are cut off and counted in
one line kept after the last copy
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
import time
from collections.abc import Callable
from pathlib import Path

from xlacli.parse.debug_log import repeat_line

# The first line of each block the parser reads as an event (an "Unexpected
# Execution Analysis" block is not one, and does not match: a space precedes it).
_BLOCK_STARTS = (
    b"\nCompilation Analysis: Compilation Cause\n",
    b"\nExecution Analysis: Execution Cause\n",
)
_FIRST_LINES = (b"\nCompilation Analysis: =", b"\nExecution Analysis: =")
FOLD_STEPS = 64
FOLD_SECONDS = 0.5


class RepeatFolder:
    """Folds each step's blocks into a count when they repeat the step before's.

    A step costs one ``stat`` (where its blocks end); the steps' blocks are
    folded together every ``FOLD_STEPS`` steps or ``FOLD_SECONDS`` (reading
    and rewriting the file at every step cost more than a small model's step).
    """

    def __init__(self, path: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self._kept_end = 0  # where the last step's blocks kept in full end
        self._end = 0  # the file's end as this folder left it (kept blocks + count line)
        self._last = b""  # what the last step kept in full appended
        self._blocks = 0  # how many events that is
        self._repeats = 0
        self._step_ends: list[int] = []  # where each step not folded yet ended
        self._clock = clock
        self._folded_at = clock()
        self._failed = False

    def after_step(self) -> None:
        """A step (or the setup) is done: note where its blocks end; fold the
        steps noted so far when enough are waiting."""
        if self._failed:
            return
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return
        except OSError as error:
            self._give_up(error)
            return
        last = self._step_ends[-1] if self._step_ends else self._end
        if size < last:  # emptied by someone else: start again
            self._kept_end = self._end = 0
            self._last, self._blocks, self._repeats = b"", 0, 0
            self._step_ends = []
        elif size == last:
            return  # nothing ran since the last step: the next may still repeat
        self._step_ends.append(size)
        waited = self._clock() - self._folded_at
        if len(self._step_ends) >= FOLD_STEPS or waited >= FOLD_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Fold every step noted so far (the run ends, or enough are waiting)."""
        ends, self._step_ends = self._step_ends, []
        self._folded_at = self._clock()
        if not ends or self._failed:
            return
        try:
            self._fold(ends)
        except OSError as error:  # the folding is a saving: never fail the run for it
            self._give_up(error)

    def _give_up(self, error: OSError) -> None:
        self._failed = True
        print(f"xlacli: the debug log is kept unfolded: {error}", file=sys.stderr)

    def _fold(self, ends: list[int]) -> None:
        """Each step's blocks (``ends``: where each step's end), folded into the
        count after the last ones kept when they repeat them; the file is
        rewritten once, from the last blocks kept in full. What follows the
        last step (a script's work after its loop) is kept as it is."""
        with self.path.open("r+b") as file:
            file.seek(self._kept_end)
            region = file.read()
            if len(region) < ends[-1] - self._kept_end:  # shortened meanwhile
                return
            after = region[ends[-1] - self._kept_end :]
            kept = bytearray()  # blocks kept in full since _kept_end
            count = region[: self._end - self._kept_end]  # the count line there now
            start = self._end
            for end in ends:
                appended = region[start - self._kept_end : end - self._kept_end]
                start = end
                if self._blocks and appended == self._last:
                    self._repeats += 1
                    count = repeat_line(self._blocks, self._repeats).encode()
                    continue
                kept += count + appended
                count = b""
                self._last, self._blocks, self._repeats = appended, _blocks_in(appended), 0
            rewritten = bytes(kept) + count + after
            if rewritten != region:
                file.seek(self._kept_end)
                file.write(rewritten)
                file.truncate()
        self._kept_end += len(kept)
        self._end = self._kept_end + len(count)


def _blocks_in(text: bytes) -> int:
    """How many events ``text`` holds; 0 when it does not start with a block
    (then it is never folded: a count must stand for whole blocks)."""
    if not text.startswith(_FIRST_LINES):
        return 0
    return sum(text.count(start) for start in _BLOCK_STARTS)
