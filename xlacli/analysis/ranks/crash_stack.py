"""The Python stack of a child killed by a signal, as the user needs it.

``faulthandler`` (``child/stack_dumps.py``) prints the crashing thread's
stack into child.log, innermost first, then xlacli's harness and runpy below
the script's ``<module>``, then the extension modules loaded. The end of the
log is therefore the wrong end: the crashing frames are those at the top of
the dump. This keeps them, innermost first, without xlacli's frames or the
interpreter's start-up below the user's outermost frame.
"""

from __future__ import annotations

from xlacli.parse.frames import CodeRoots, Frame
from xlacli.parse.stack_dump import ThreadStack, parse_stack_dump
from xlacli.paths import display_path

FRAMES_SHOWN = 10
_FATAL = "Fatal Python error: "


def crash_frames(log: str, roots: CodeRoots) -> tuple[Frame, ...]:
    """The crashing thread's frames, innermost first, that are not xlacli's
    nor the start-up below the user's outermost frame (empty: no dump)."""
    stacks = parse_stack_dump(log[log.rfind(_FATAL) :] if _FATAL in log else log)
    crashed = _crashed(stacks)
    if crashed is None:
        return ()
    frames = [frame for frame in crashed.frames if not roots.is_xlacli(frame)]
    users = [index for index, frame in enumerate(frames) if roots.is_user(frame)]
    return tuple(frames[: users[-1] + 1] if users else frames)


def crash_details(log: str, roots: CodeRoots, shown: int = FRAMES_SHOWN) -> str | None:
    """What to print under "killed by SIGSEGV": the fatal error's line and the
    innermost frames (``name (file:line)``), or None when the log has no dump."""
    frames = crash_frames(log, roots)
    if not frames:
        return None
    fatal = next((line for line in log.splitlines() if line.startswith(_FATAL)), None)
    lines = [fatal] if fatal else []
    lines.append("Python stack at the crash, innermost first:")
    lines += [
        f"  {frame.function} ({display_path(frame.file)}:{frame.line})" for frame in frames[:shown]
    ]
    if len(frames) > shown:
        lines.append(f"  ... {len(frames) - shown} outer frames (all in the run's child.log)")
    return "\n".join(lines)


def _crashed(stacks: tuple[ThreadStack, ...]) -> ThreadStack | None:
    """The thread that took the signal, else the main thread."""
    return next((s for s in stacks if s.current and s.frames), None) or next(
        (s for s in stacks if s.is_main), None
    )
