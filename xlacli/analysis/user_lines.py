"""The user's line behind a library line, for every view (memory peaks, buffers).

HLO metadata names an op's innermost frame, often inside a library
(``torch/nn/modules/linear.py:134``). The HLO protobuf torch_xla writes keeps
each op's whole Python stack: an op whose innermost frame is that library line
was called from the user's line found by walking out of the libraries, as the
recompile explanations do. A library line reached from no user code (xlacli's
own harness moving the weights), or from several user lines, stays what it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from xlacli.parse.frames import CodeRoots, first_user_frame
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.report.memory import GraphMemory


def user_lines(stacks: Iterable[StackedOp] | None, roots: CodeRoots) -> dict[str, str]:
    """Library ``file:line`` (an op's innermost frame) -> the user's ``file:line``;
    only lines reached from one user line (``linear.py:134`` under three layers'
    calls names none of them rather than the wrong one)."""
    found: dict[str, set[str]] = {}
    for op in stacks or ():
        if not op.stack or roots.is_user(op.stack[0]):
            continue
        user = first_user_frame(op.stack, roots)
        if user is not None:
            found.setdefault(op.stack[0].location, set()).add(user.location)
    return {library: users.pop() for library, users in found.items() if len(users) == 1}


def memory_at_user_lines(memory: GraphMemory, walked: Mapping[str, str]) -> GraphMemory:
    """The peak's and the buffers' lines as the user's, the library's kept beside."""
    biggest = tuple(
        dataclasses.replace(buffer, source=walked[buffer.source], library_source=buffer.source)
        if buffer.source is not None and buffer.source in walked
        else buffer
        for buffer in memory.biggest
    )
    peak = memory.peak_site
    if peak is not None and peak in walked:
        return dataclasses.replace(
            memory, peak_site=walked[peak], peak_library_site=peak, biggest=biggest
        )
    return dataclasses.replace(memory, biggest=biggest)
