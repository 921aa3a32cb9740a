"""A recompile after a failed Dynamo guard, as one explanation.

It is placed at the line that read the guarded value (Dynamo's note, else the
first read of an argument, else the frame's line), and its ``also`` names where
the user's code changed that value between steps: the assignments to an
attribute or a global (``analysis/dynamo/guards.py``), or, for a value the compiled
function received, the caller's assignment to the variable it passed and the
call itself (``analysis/dynamo/guard_callers.py``).
"""

from __future__ import annotations

from xlacli.analysis.dynamo.global_state import changed_states, state_changed_at
from xlacli.analysis.dynamo.guard_callers import passed_value
from xlacli.analysis.dynamo.guards import GuardedValue, assignment_lines, guarded_value
from xlacli.analysis.recompiles.hints import hint_for
from xlacli.parse.frames import CodeRoots, Frame
from xlacli.paths import split_location
from xlacli.report.run_report import CompileCause, DynamoFrameRecord


def guard_cause(
    frame: DynamoFrameRecord,
    lazy: CompileCause,
    roots: CodeRoots,
    caller: Frame | None = None,
) -> CompileCause:
    """A recompile after a failed guard, at the line that read the guarded
    value (else the frame's), with where the user changed it as ``also``.
    ``lazy`` (what the IR comparison found) is folded into the one explanation;
    ``caller`` is the user's frame that called the compiled function."""
    assert frame.guard_failure is not None
    file, line = split_location(frame.location)
    in_user_code = roots.is_user(Frame(frame.function, file, line or 0))
    # The guard names the value; a constant the IR comparison saw change is the same fact.
    compared = (
        f"; {lazy.detail}" if lazy.category not in ("first_compile", "constant_value") else ""
    )
    # A frame in library code (torch.compile's wrapper around an nn.Sequential)
    # says nothing: the guard's own note, else the IR comparison's line does.
    location = frame.guard_read or (frame.location if in_user_code else lazy.location)
    states = changed_states(frame.guard_failure)
    if states and caller is not None:
        return _state_cause(frame, states, caller, compared)
    guarded = guarded_value(frame.guard_failure)
    return CompileCause(
        category="dynamo_guard",
        location=location,
        library_location=None if in_user_code or frame.guard_read else frame.location,
        detail=f"Dynamo recompiled {frame.function}: guard failed: {frame.guard_failure}"
        + guard_note(frame.guard_failure)
        + compared,
        hint=hint_for("dynamo_guard"),
        also=changed_at(frame, guarded, location, caller) if guarded else (),
    )


def _state_cause(
    frame: DynamoFrameRecord, states: tuple[str, ...], caller: Frame, compared: str
) -> CompileCause:
    """A guard on torch's global state: at the call made under the other state,
    with the block that changed it as ``also`` (``analysis/dynamo/global_state.py``)."""
    changed = state_changed_at(caller.location, states)
    also = (
        (_also(changed, f"{', '.join(states)} changed here for the call below"),) if changed else ()
    )
    return CompileCause(
        category="dynamo_guard",
        location=caller.location,
        library_location=None,
        detail=f"Dynamo recompiled {frame.function}: guard failed: {frame.guard_failure} "
        f"(this call runs under another {' and '.join(states)} than the first: Dynamo traces "
        "the frame again for it)" + compared,
        hint="expected once per state: the frame keeps both traces and both graphs (an "
        "evaluation loop under torch.no_grad() after training); only a state that changes "
        "more often than Dynamo's cache holds keeps recompiling",
        also=also,
    )


def changed_at(
    frame: DynamoFrameRecord, guarded: GuardedValue, read_at: str | None, caller: Frame | None
) -> tuple[CompileCause, ...]:
    """Where the user's code changed the guarded value: its assignments, and
    for an argument the call that passed it."""
    if guarded.kind == "argument":
        return _passed_at(frame, guarded, read_at, caller)
    if read_at is None:
        return ()
    file = split_location(read_at)[0]
    files = dict.fromkeys([file, split_location(frame.location)[0]])
    is_global = guarded.kind == "global"
    return tuple(
        _also(
            f"{path}:{line}",
            f"{guarded.name} changed here between steps (Dynamo guards its value)",
        )
        for path in files
        for line in assignment_lines(path, guarded.name, is_global=is_global)
        if f"{path}:{line}" != read_at
    )


def _passed_at(
    frame: DynamoFrameRecord, guarded: GuardedValue, read_at: str | None, caller: Frame | None
) -> tuple[CompileCause, ...]:
    name = guarded.name if guarded.index is None else f"{guarded.name}[{guarded.index}]"
    passed = passed_value(frame.location, guarded.name, caller, guarded.index)
    if passed is None:
        # The compiled function is not the user's (torch.compile of an
        # nn.Sequential): the call is still where the value came in.
        return (_also(caller.location, f"{name} passed here"),) if caller else ()
    what = "its shape" if (frame.guard_failure or "").startswith("tensor ") else "its value"
    variable = passed.variable or name
    found = [
        _also(location, f"{variable} assigned here between steps (Dynamo guards {what})")
        for location in passed.assigned
        if location not in (read_at, passed.passed_at)
    ]
    if passed.passed_at not in (None, read_at):
        found.append(_also(passed.passed_at, f"passed here to {frame.function} as {name}"))
    return tuple(found)


def _also(location: str, detail: str) -> CompileCause:
    return CompileCause(
        category="dynamo_guard", location=location, library_location=None, detail=detail
    )


def guard_note(guard: str) -> str:
    """What Dynamo's internal names in a guard stand for."""
    if "___stack" in guard:
        return (
            " (___stackN is a Python value Dynamo received at a graph break, e.g. an .item() "
            "result: the frame is traced again for each new value)"
        )
    return ""
