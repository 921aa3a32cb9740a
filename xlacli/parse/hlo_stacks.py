"""Each HLO instruction's whole Python call stack, from the dumped ``HloProto``.

torch_xla's IR text keeps only the innermost frame of each node
(``step@sgd.py:375``), but with ``XLA_HLO_DEBUG`` it lowers every node's full
frame list into the module's ``stack_frame_index`` (file names, function
names, file locations and a tree of frames), and each instruction's metadata
names its innermost frame by ``stack_frame_id``. The text dump drops that
index; ``--xla_dump_hlo_as_proto`` keeps it. This reads the protobuf wire
format itself where protobuf's C runtime is missing (``hlo_proto_subset.py``
decodes the same fields with it, 50x faster): only a handful of fields are
needed, and no XLA protobuf module ships with torch_xla.

Field numbers (xla/service/hlo.proto): HloProto.hlo_module=1;
HloModuleProto.computations=3, stack_frame_index=17; HloComputationProto
.instructions=2, id=5; HloInstructionProto.name=1, metadata=7,
called_computation_ids=38; OpMetadata.op_type=1,
op_name=2, source_file=3, source_line=4, stack_frame_id=15; StackFrameIndexProto
.file_names=1, function_names=2, file_locations=3 (file_name_id=1,
function_name_id=2, line=3), stack_frames=4 (file_location_id=1,
parent_frame_id=2). Ids are 1-based; 0 means none.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from xlacli.parse.frames import Frame
from xlacli.parse.hlo_proto_subset import message_classes

_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5


@dataclass(frozen=True)
class StackedOp:
    """One HLO instruction's op and its Python stack, innermost frame first."""

    op_type: str  # "aten__add", as torch_xla writes the IR op "aten::add"
    stack: tuple[Frame, ...]
    shape: str = ""  # "11[2,8,32]": element type number and dimensions (tuples: "()")
    name: str = ""  # the instruction's name in its module ("dot.502")
    op_name: str = ""  # the metadata's op_name: the IR scope, then the op type
    # The instruction whose called computation holds this one (a reduce's body,
    # which torch_xla builds with no metadata); empty in the entry computation.
    caller: str = ""

    @property
    def ir_op(self) -> str:
        """The IR op name: ``aten__add`` -> ``aten::add``."""
        return self.op_type.replace("__", "::", 1)


def read_hlo_stacks(path: Path) -> list[StackedOp] | None:
    """The stacked instructions of a dumped ``*.hlo.pb`` in emission order;
    None when the file is missing or is not a valid dump."""
    try:
        return parse_hlo_stacks(path.read_bytes())
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return None


def parse_hlo_stacks(data: bytes) -> list[StackedOp]:
    """Parse an ``HloProto`` (or a bare ``HloModuleProto``): decoded by protobuf's
    C runtime when there is one (``hlo_proto_subset.py``), else by the wire
    reader below; the same ops either way."""
    classes = message_classes()
    if classes is not None:
        return _decoded_stacks(data, classes)
    return _wire_stacks(data)


def _decoded_stacks(data: bytes, classes: dict[str, Any]) -> list[StackedOp]:
    from google.protobuf.message import DecodeError

    module = None
    with contextlib.suppress(DecodeError):
        whole = classes["HloProto"].FromString(data)
        if whole.HasField("hlo_module"):
            inner = whole.hlo_module
            if inner.HasField("stack_frame_index") or len(inner.computations):
                module = inner
    if module is None:
        try:
            module = classes["HloModuleProto"].FromString(data)
        except DecodeError as error:
            raise ValueError(f"not an HloProto: {error}") from None
    index = module.stack_frame_index
    frames = _frames_from(
        [name.decode() for name in index.file_names],
        [name.decode() for name in index.function_names],
        [(at.file_name_id, at.function_name_id, at.line) for at in index.file_locations],
        [(frame.file_location_id, frame.parent_frame_id) for frame in index.stack_frames],
    )
    # A called computation comes before its caller in the module: callers first.
    callers: dict[int, str] = {}
    for computation in module.computations:
        for instruction in computation.instructions:
            for called in instruction.called_computation_ids:
                callers.setdefault(called, instruction.name.decode())
    shapes: dict[tuple[int, tuple[int, ...]], str] = {}
    ops: list[StackedOp] = []
    for computation in module.computations:
        caller = callers.get(computation.id, "")
        for instruction in computation.instructions:
            if not instruction.HasField("metadata"):
                continue
            metadata = instruction.metadata
            ops.append(
                _op(
                    metadata.op_type,
                    metadata.op_name,
                    frames.get(metadata.stack_frame_id, ()),
                    metadata.source_file,
                    metadata.source_line,
                    instruction.name.decode(),
                    _decoded_shape(instruction.shape, shapes)
                    if instruction.HasField("shape")
                    else "",
                    caller,
                )
            )
    return ops


def _decoded_shape(shape: Any, known: dict[tuple[int, tuple[int, ...]], str]) -> str:
    if len(shape.tuple_shapes):
        return "()"
    key = (shape.element_type, tuple(shape.dimensions))
    text = known.get(key)
    if text is None:
        text = known[key] = f"{key[0]}[{','.join(map(str, key[1]))}]"
    return text


def _wire_stacks(data: bytes) -> list[StackedOp]:
    """The wire reader: only the fields read, walked in Python."""
    module = _first(data, 1)
    if module is None or (_first(module, 17) is None and _first(module, 3) is None):
        module = data
    frames = _frame_table(_first(module, 17) or b"")
    ops: list[tuple[StackedOp, int]] = []  # each op and the id of its computation
    callers: dict[int, str] = {}  # computation id -> the first instruction calling it
    for field, computation in _fields(module):
        if field != 3 or not isinstance(computation, bytes):
            continue
        computation_id = _int(dict(_fields(computation)), 5)
        for sub, instruction in _fields(computation):
            if sub != 2 or not isinstance(instruction, bytes):
                continue
            name = (_first(instruction, 1) or b"").decode()
            for called in _ints(instruction, 38):
                callers.setdefault(called, name)
            metadata = _first(instruction, 7)
            if metadata is None:
                continue
            shape = _shape(_first(instruction, 3))
            ops.append((_stacked(metadata, frames, name, shape), computation_id))
    return _with_callers(ops, callers)


def _with_callers(ops: list[tuple[StackedOp, int]], callers: dict[int, str]) -> list[StackedOp]:
    """Each op with the instruction that calls its computation, if one does."""
    return [
        replace(op, caller=callers[computation]) if computation in callers else op
        for op, computation in ops
    ]


def _ints(data: bytes, wanted: int) -> Iterator[int]:
    """A repeated integer field, packed or not."""
    for field, value in _fields(data):
        if field != wanted:
            continue
        if isinstance(value, int):
            yield value
            continue
        position = 0
        while position < len(value):
            number, position = _varint(value, position)
            yield number


def _stacked(
    metadata: bytes, frames: dict[int, tuple[Frame, ...]], name: str, shape: str
) -> StackedOp:
    fields = dict(_fields(metadata))
    frame_id = fields.get(15, 0)
    return _op(
        _bytes(fields, 1),
        _bytes(fields, 2),
        frames.get(frame_id, ()) if isinstance(frame_id, int) else (),
        _bytes(fields, 3),
        _int(fields, 4),
        name,
        shape,
    )


def _op(
    op_type: bytes,
    op_name: bytes,
    stack: tuple[Frame, ...],
    source_file: bytes,
    source_line: int,
    name: str,
    shape: str,
    caller: str = "",
) -> StackedOp:
    """One op from its metadata; a single frame from the source line when the
    module's frame index names none."""
    if not stack and source_file:
        stack = (Frame("", source_file.decode(), source_line),)
    return StackedOp(
        op_type.decode(), stack, shape=shape, name=name, op_name=op_name.decode(), caller=caller
    )


def _bytes(fields: dict[int, int | bytes], key: int) -> bytes:
    value = fields.get(key, b"")
    return value if isinstance(value, bytes) else b""


def _shape(shape: bytes | None) -> str:
    """A ``ShapeProto`` (element_type=2, dimensions=3, tuple_shapes=4) as a short key."""
    if shape is None:
        return ""
    element_type, dimensions, is_tuple = 0, [], False
    for field, value in _fields(shape):
        if field == 2 and isinstance(value, int):
            element_type = value
        elif field == 3 and isinstance(value, int):
            dimensions.append(value)
        elif field == 3 and isinstance(value, bytes):  # packed
            position = 0
            while position < len(value):
                dimension, position = _varint(value, position)
                dimensions.append(dimension)
        elif field == 4:
            is_tuple = True
    return "()" if is_tuple else f"{element_type}[{','.join(map(str, dimensions))}]"


def _frame_table(index: bytes) -> dict[int, tuple[Frame, ...]]:
    """Frame id -> the stack it ends, innermost first."""
    files: list[str] = []
    functions: list[str] = []
    locations: list[tuple[int, int, int]] = []
    parents: list[tuple[int, int]] = []
    for field, value in _fields(index):
        if field == 1 and isinstance(value, bytes):
            files.append(value.decode())
        elif field == 2 and isinstance(value, bytes):
            functions.append(value.decode())
        elif field == 3 and isinstance(value, bytes):
            loc = dict(_fields(value))
            locations.append((_int(loc, 1), _int(loc, 2), _int(loc, 3)))
        elif field == 4 and isinstance(value, bytes):
            stack_frame = dict(_fields(value))
            parents.append((_int(stack_frame, 1), _int(stack_frame, 2)))
    return _frames_from(files, functions, locations, parents)


def _frames_from(
    files: list[str],
    functions: list[str],
    locations: list[tuple[int, int, int]],
    parents: list[tuple[int, int]],
) -> dict[int, tuple[Frame, ...]]:
    """The frame table from the index's lists (ids 1-based)."""
    table: dict[int, tuple[Frame, ...]] = {}
    for frame_id in range(1, len(parents) + 1):  # parents come before their children
        location_id, parent = parents[frame_id - 1]
        file_id, function_id, line = locations[location_id - 1]
        frame = Frame(_name(functions, function_id), _name(files, file_id), line)
        table[frame_id] = (frame, *table.get(parent, ()))
    return table


def _name(names: list[str], one_based: int) -> str:
    return names[one_based - 1] if 0 < one_based <= len(names) else ""


def _int(fields: dict[int, int | bytes], key: int) -> int:
    value = fields.get(key, 0)
    return value if isinstance(value, int) else 0


def _first(data: bytes, wanted: int) -> bytes | None:
    for field, value in _fields(data):
        if field == wanted and isinstance(value, bytes):
            return value
    return None


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """``(field number, value)`` of each field: ints for varints, bytes otherwise."""
    position = 0
    while position < len(data):
        key, position = _varint(data, position)
        field, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, position = _varint(data, position)
            yield field, value
        elif wire == _BYTES:
            size, position = _varint(data, position)
            if position + size > len(data):
                raise ValueError("truncated protobuf field")
            yield field, data[position : position + size]
            position += size
        elif wire in (_FIXED64, _FIXED32):
            width = 8 if wire == _FIXED64 else 4
            yield field, data[position : position + width]
            position += width
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def _varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, position
