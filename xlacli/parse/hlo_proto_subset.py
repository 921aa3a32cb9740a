"""The few fields of XLA's ``HloProto`` that ``hlo_stacks.py`` reads, as a
protobuf schema decoded by protobuf's C runtime (upb).

A dumped module of a 24-layer decoder is 3 MB of protobuf; walking its wire
format field by field in Python took 3 s a file, 40% of the parent's work on
such a run (docs/performance.md, issue 40). upb decodes it in milliseconds:
this schema names only the fields xlacli reads, and upb skips the rest (every
other field of the real schema is an unknown field here, kept as bytes and
never looked at). No XLA protobuf module ships with torch_xla, so the subset
is declared here, with the field numbers of xla/service/hlo.proto and
xla/xla_data.proto. Strings are declared as bytes: a name that is not UTF-8
fails where the report reads it, as with the wire reader, not in the decoder.

``message_classes()`` is None where protobuf is missing or is its pure-Python
implementation (slower than the wire reader): ``hlo_stacks.py`` then walks
the wire format itself.
"""

from __future__ import annotations

import functools
from typing import Any

_PACKAGE = "xlacli_hlo_subset"

# message -> [(field name, number, type, label, message type)]: the subset read.
_INT32, _INT64, _BYTES, _MESSAGE = "int32", "int64", "bytes", "message"
_SCHEMA: dict[str, list[tuple[str, int, str, bool, str | None]]] = {
    "HloProto": [("hlo_module", 1, _MESSAGE, False, "HloModuleProto")],
    "HloModuleProto": [
        ("computations", 3, _MESSAGE, True, "HloComputationProto"),
        ("stack_frame_index", 17, _MESSAGE, False, "StackFrameIndexProto"),
    ],
    "HloComputationProto": [
        ("instructions", 2, _MESSAGE, True, "HloInstructionProto"),
        ("id", 5, _INT64, False, None),
    ],
    "HloInstructionProto": [
        ("name", 1, _BYTES, False, None),
        ("shape", 3, _MESSAGE, False, "ShapeProto"),
        ("metadata", 7, _MESSAGE, False, "OpMetadata"),
        ("called_computation_ids", 38, _INT64, True, None),
    ],
    "ShapeProto": [
        ("element_type", 2, _INT32, False, None),
        ("dimensions", 3, _INT64, True, None),
        ("tuple_shapes", 4, _MESSAGE, True, "ShapeProto"),
    ],
    "OpMetadata": [
        ("op_type", 1, _BYTES, False, None),
        ("op_name", 2, _BYTES, False, None),
        ("source_file", 3, _BYTES, False, None),
        ("source_line", 4, _INT32, False, None),
        ("stack_frame_id", 15, _INT32, False, None),
    ],
    "StackFrameIndexProto": [
        ("file_names", 1, _BYTES, True, None),
        ("function_names", 2, _BYTES, True, None),
        ("file_locations", 3, _MESSAGE, True, "FileLocation"),
        ("stack_frames", 4, _MESSAGE, True, "StackFrame"),
    ],
    "FileLocation": [
        ("file_name_id", 1, _INT32, False, None),
        ("function_name_id", 2, _INT32, False, None),
        ("line", 3, _INT32, False, None),
    ],
    "StackFrame": [
        ("file_location_id", 1, _INT32, False, None),
        ("parent_frame_id", 2, _INT32, False, None),
    ],
}


@functools.cache
def message_classes() -> dict[str, Any] | None:
    """The subset's message classes by name; None without protobuf's C runtime."""
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
        from google.protobuf.internal import api_implementation
    except ImportError:
        return None
    if api_implementation.Type() == "python":
        return None
    field = descriptor_pb2.FieldDescriptorProto
    types = {_INT32: field.TYPE_INT32, _INT64: field.TYPE_INT64, _BYTES: field.TYPE_BYTES}
    file = descriptor_pb2.FileDescriptorProto(
        name=f"{_PACKAGE}.proto", package=_PACKAGE, syntax="proto3"
    )
    for message_name, fields in _SCHEMA.items():
        message = file.message_type.add(name=message_name)
        for name, number, kind, repeated, message_type in fields:
            added = message.field.add(
                name=name,
                number=number,
                type=field.TYPE_MESSAGE if kind == _MESSAGE else types[kind],
                label=field.LABEL_REPEATED if repeated else field.LABEL_OPTIONAL,
            )
            if message_type is not None:
                added.type_name = f".{_PACKAGE}.{message_type}"
    try:
        pool = descriptor_pool.DescriptorPool()
        pool.Add(file)
        return {
            name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
            for name in _SCHEMA
        }
    except (AttributeError, TypeError):  # a protobuf older than 4.21
        return None
