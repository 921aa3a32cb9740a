"""faulthandler's dump of every thread's stack (``faulthandler.dump_traceback``).

Thread 0x00007f55ab7fe640 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 324 in wait

Current thread 0x00007f55e0e4c740 (most recent call first):
  File "/work/train.py", line 22 in average
  File "/work/train.py", line 61 in main
  File "/work/train.py", line 70 in <module>
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xlacli.parse.frames import Frame

_THREAD = re.compile(r"^(Current thread|Thread) (0x[0-9a-f]+) \(most recent call first\):")
_FRAME = re.compile(r'^\s+File "(?P<file>.*)", line (?P<line>\d+) in (?P<function>.*)$')


@dataclass(frozen=True)
class ThreadStack:
    """One thread's frames, innermost first."""

    thread: str
    frames: tuple[Frame, ...]
    current: bool  # the thread that handled the signal

    @property
    def is_main(self) -> bool:
        """The main thread's outermost frame is a module (the script, runpy,
        the child); a thread started by ``threading`` starts in ``_bootstrap``."""
        return bool(self.frames) and self.frames[-1].function == "<module>"


def parse_stack_dump(text: str) -> tuple[ThreadStack, ...]:
    """Every thread of the last dump in ``text`` (lines around it are ignored)."""
    stacks: list[ThreadStack] = []
    header: tuple[str, bool] | None = None
    frames: list[Frame] = []
    for line in text.splitlines():
        thread = _THREAD.match(line)
        if thread is not None:
            if header is not None:
                stacks.append(ThreadStack(header[0], tuple(frames), header[1]))
            header, frames = (thread[2], thread[1] == "Current thread"), []
            continue
        frame = _FRAME.match(line)
        if frame is not None and header is not None:
            frames.append(Frame(frame["function"], frame["file"], int(frame["line"])))
    if header is not None:
        stacks.append(ThreadStack(header[0], tuple(frames), header[1]))
    return tuple(stacks)


def main_thread(stacks: tuple[ThreadStack, ...]) -> ThreadStack | None:
    """The main thread's stack, else the one that handled the signal."""
    return next((s for s in stacks if s.is_main), None) or next(
        (s for s in stacks if s.current), None
    )
