"""Memory peaks and biggest buffers at the user's line, the library line beside it.

The walk itself (``parse/stack_walk.py``) is the one diff-hlo's source column
and the recompile explanations use: an op's innermost frame, often inside a
library, walked out to the user's call through the stacks torch_xla dumps.
Buffers are named by the optimized module's instructions, so the optimized
module's own stacks (``hlo.after.pb``) walk each buffer by its name; the
unoptimized module's walk its library lines where one user line reaches them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from xlacli.parse.frames import CodeRoots
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.parse.stack_walk import SourceWalk, line_walk
from xlacli.report.memory import BufferRecord, GraphMemory, GraphPrecision


def graph_walk(
    optimized: Iterable[StackedOp] | None, unoptimized: Iterable[StackedOp] | None, roots: CodeRoots
) -> SourceWalk:
    """One graph's walk: the optimized module's names, both modules' library lines."""
    return line_walk(optimized, roots).with_libraries_of(line_walk(unoptimized, roots))


def memory_at_user_lines(
    memory: GraphMemory, walk: SourceWalk, backward: str | None = None
) -> GraphMemory:
    """The peak's and the buffers' lines as the user's, the library's kept beside.

    ``backward``: the ``loss.backward()`` line of the graph's step, for the
    buffers of ops the autograd engine made (an op with no line of its own).
    """
    biggest = tuple(_buffer_at_user_line(buffer, walk, backward) for buffer in memory.biggest)
    walked = walk.walk(memory.peak_site, memory.peak_at or "")
    if walked is None:
        return dataclasses.replace(memory, biggest=biggest)
    return dataclasses.replace(
        memory, peak_site=walked.user, peak_library_site=walked.library, biggest=biggest
    )


def _buffer_at_user_line(
    buffer: BufferRecord, walk: SourceWalk, backward: str | None
) -> BufferRecord:
    if buffer.source is None and buffer.op and backward is not None:
        return dataclasses.replace(buffer, source=backward)
    walked = walk.walk(buffer.source, buffer.name.partition("{")[0])
    if walked is None:
        return buffer
    return dataclasses.replace(buffer, source=walked.user, library_source=walked.library)


def precision_at_user_lines(precision: GraphPrecision, walk: SourceWalk) -> GraphPrecision:
    """The user's line of each library line the f64 instructions come from."""
    walked = {source: walk.walk(source) for source in precision.f64_sources}
    users = {source: found.user for source, found in walked.items() if found is not None}
    return dataclasses.replace(precision, f64_user_lines=users) if users else precision
