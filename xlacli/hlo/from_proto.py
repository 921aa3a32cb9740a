"""An ``HloModuleProto`` (or an ``HloProto`` around one) in protobuf text, as an ``HloModule``.

What ``hlo-translate`` and ``--xla_dump_hlo_as_proto`` (after ``protoc
--decode``) give: a module by ids instead of names. Read as XLA's
``CreateFromProto`` reads it:

- computations by ``id``; the entry by ``entry_computation_id``, else
  ``entry_computation_name``, else computation 0 (the id left out is 0),
  else the last; each computation's root by
  ``root_id`` (else its last instruction), its signature from its
  parameters and root (``program_shape`` is what XLA derives from them);
  ``execution_thread`` kept as after a printed ``}``; a module ``schedule``
  orders the instructions and sets ``is_scheduled=true``;
- instructions: ``operand_ids`` and ``control_predecessor_ids``
  (``control-predecessors``) as names; ``called_computation_ids`` under the
  key XLA prints for the opcode (``calls``, ``to_apply``, ``condition`` and
  ``body`` (the proto lists the body first), ``select`` and ``scatter``,
  ``true_computation``/``false_computation`` for a ``pred`` branch,
  ``branch_computations``, ``called_computations`` for custom calls);
  ``shape`` and ``literal`` (``xlacli.hlo.proto_values``); ``metadata``,
  its ``stack_frame_id`` resolved through ``stack_frame_index`` as for
  text; ``parameter_number``; the other fields as attributes
  (``xlacli.hlo.proto_attributes``);
- the module: ``name``, ``host_program_shape`` (``entry_computation_layout``),
  ``input_output_alias``, ``buffer_donor``, ``frontend_attributes``,
  ``stack_frame_index``.

Other module fields (``spmd_output_sharding``, ``device_assignment``...) are
kept as header attributes under their field name with their textproto as the
value, so a diff still sees them; only the ids (instruction, computation,
module) are dropped: names stand for them. An ``HloProto``'s
``buffer_assignment`` is not part of the module. Real torch_xla dumps read
this way give the module XLA printed as text (``tests/assets/hlo/proto_*``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from types import MappingProxyType

from xlacli.hlo.model import (
    EMPTY_ATTRIBUTES,
    Alias,
    FileLocation,
    HloModule,
    ProgramShape,
    StackFrame,
    StackFrameIndex,
    TupleShape,
)
from xlacli.hlo.proto_computations import ComputationReader, typed, unique_ids, valid_name
from xlacli.hlo.proto_forms import frontend_attributes_text
from xlacli.hlo.proto_text import ProtoSource, parse_proto_text
from xlacli.hlo.proto_tree import ProtoMessage, format_values
from xlacli.hlo.proto_values import enum_name, read_program_shape

# Fields of HloModuleProto and HloProto: a text starting with one is a proto.
_SCALAR_FIELDS = frozenset(
    {"name", "entry_computation_name", "entry_computation_id", "id", "is_dynamic",
     "use_auto_spmd_partitioning"}
)  # fmt: skip
_MESSAGE_FIELDS = frozenset(
    {"computations", "host_program_shape", "schedule", "input_output_alias", "buffer_donor",
     "cross_program_prefetches", "spmd_output_sharding", "spmd_parameters_shardings",
     "profile_info", "device_assignment", "stack_frame_index", "frontend_attributes",
     "hlo_module", "buffer_assignment"}
)  # fmt: skip
_FIRST_FIELD = re.compile(r"([A-Za-z_]\w*)\s*([:{<])")
# What a line inside a message starts with: a field (name: / name { / name < / name [) or
# the closing brace. No HLO instruction line does (``ROOT %p = ...``, ``p.1 = ...``).
_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # bytes kept by surrogateescape
_PROTO_LINE = re.compile(r"(?:[A-Za-z_]\w*\s*[:{<\[]|[}>\[])")
# Read into the model; any other field is kept as a header attribute.
_MODULE_HANDLED = frozenset(
    {"name", "entry_computation_name", "entry_computation_id", "computations", "id",
     "stack_frame_index", "schedule", "host_program_shape", "input_output_alias"}
)  # fmt: skip


def is_proto_text(lines: Iterable[str]) -> bool:
    """Whether text starts like an ``HloModuleProto``/``HloProto`` in text format.

    Only the first lines that are neither blank nor ``#`` comments are read:
    the first must open a field of those messages (``name: "m"``,
    ``computations {``), which no HLO text line does (``HloModule m``,
    ``ENTRY %e {``); after ``field {`` what follows (on that line, else the
    next line that is not blank or a ``#``/``//`` comment) must be a field
    or ``}``, not an instruction (a headerless module whose first
    computation is called ``schedule``).
    """
    significant = (
        stripped
        for stripped in map(str.strip, lines)
        if stripped and not stripped.startswith(("#", "//"))
    )
    first = next(significant, "")
    match = _FIRST_FIELD.match(first)
    if match is None:
        return False
    name, delimiter = match.groups()
    if delimiter == ":":
        return name in _SCALAR_FIELDS or name in _MESSAGE_FIELDS
    rest = first[match.end() :].strip() or next(significant, "")
    # Nothing after the head: a proto cut short more likely than an empty computation.
    return name in _MESSAGE_FIELDS and (not rest or _PROTO_LINE.match(rest) is not None)


def parse_proto_module(text: str, filename: str = "<string>") -> HloModule:
    """Read an ``HloModuleProto`` (or ``HloProto``) in protobuf text format.

    Raises:
        HloParseError: The text is not valid protobuf text, or not a module
            (an id that names nothing, an unknown element type...); the error
            names the line and column.
    """
    source = ProtoSource(text, filename)
    module = parse_proto_text(text, filename)
    if "hlo_module" in module.fields:  # an HloProto
        wrapped = module.message("hlo_module")
        if wrapped is None:
            source.fail(module, "hlo_module", "an HloModuleProto message", "a value")
        module = wrapped
    return _read_module(source, module)


def _read_module(source: ProtoSource, proto: ProtoMessage) -> HloModule:
    protos = proto.messages("computations")
    if not protos:
        source.fail(proto, None, "a computation in computations", "none")
    names = unique_ids(source, protos, "a computation")
    entry = _entry(source, proto, protos)
    stack_frames = _stack_frame_index(source, proto.message("stack_frame_index"))
    reader = ComputationReader(source, names, stack_frames)
    sequences = _schedule(source, proto.message("schedule"))
    computations = tuple(
        reader.computation(c, c is entry, sequences.get(c.number("id"))) for c in protos
    )
    attributes, layout, aliases = _header(source, proto)
    return HloModule(
        name=valid_name(source, proto, "module")
        if proto.text("name")
        else names[entry.number("id")],
        computations=computations,
        attributes=MappingProxyType(attributes) if attributes else EMPTY_ATTRIBUTES,
        entry_computation_layout=layout,
        input_output_alias=aliases,
        stack_frames=stack_frames,
        filename=source.filename,
    )


def _entry(
    source: ProtoSource, proto: ProtoMessage, protos: tuple[ProtoMessage, ...]
) -> ProtoMessage:
    if "entry_computation_id" in proto.fields:
        wanted: object = source.integer(proto, "entry_computation_id")
        field, key = "entry_computation_id", "id"
    elif "entry_computation_name" in proto.fields:
        wanted = proto.text("entry_computation_name")
        field, key = "entry_computation_name", "name"
    else:  # entry_computation_id left out is 0: XLA's entry is computation 0, if any
        return next((c for c in protos if c.number("id") == 0), protos[-1])
    for computation in protos:
        if computation.get(key) == wanted:
            return computation
    source.fail(proto, field, f"the {key} of a computation", repr(wanted))


def _header(
    source: ProtoSource, proto: ProtoMessage
) -> tuple[dict[str, str], ProgramShape | None, tuple[Alias, ...]]:
    """The header attributes as XLA prints them, the entry layout and the aliases."""
    attributes: dict[str, str] = {}
    if "schedule" in proto.fields:
        attributes["is_scheduled"] = "true"
    layout = None
    program_shape = proto.message("host_program_shape")
    if program_shape is not None:
        layout = typed(source, lambda: read_program_shape(program_shape))
        # Printed as XLA does, every fifth parameter marked: (a, b, c, d, e, /*index=5*/f).
        parameters = TupleShape(layout.parameters)
        attributes["entry_computation_layout"] = f"{{{parameters}->{layout.result}}}"
    aliases = typed(source, lambda: _aliases(proto.message("input_output_alias")))
    if aliases:
        attributes["input_output_alias"] = "{ " + ", ".join(map(_alias_text, aliases)) + " }"
    donors = _buffer_donors(proto.message("buffer_donor"))
    if donors:
        attributes["buffer_donor"] = donors
    frontend = proto.message("frontend_attributes")
    text = frontend_attributes_text(frontend) if frontend is not None else None
    if text:
        attributes["frontend_attributes"] = text
    mapped = {"frontend_attributes": text is not None, "buffer_donor": donors is not None}
    for field, values in proto.fields.items():
        if field not in _MODULE_HANDLED and not mapped.get(field):
            attributes[field] = format_values(values)
    return attributes, layout, aliases


def _stack_frame_index(source: ProtoSource, index: ProtoMessage | None) -> StackFrameIndex | None:
    if index is None or not index.fields:  # an empty index prints, and reads back, as none
        return None
    for field in ("file_names", "function_names"):  # proto3 strings: UTF-8 text only
        for number, name in enumerate(index.all(field)):
            if not isinstance(name, str) or _NOT_UTF8.search(name):
                source.fail(index, field, f"UTF-8 text in {field}", repr(name), number)
    locations = {
        number: FileLocation(
            file_name_id=where.number("file_name_id"),
            function_name_id=where.number("function_name_id"),
            line=where.number("line"),
            end_line=where.number("end_line"),
            column=where.number("column"),
            end_column=where.number("end_column"),
        )
        for number, where in enumerate(index.messages("file_locations"), start=1)
    }
    frames = {
        number: StackFrame(frame.number("file_location_id"), frame.number("parent_frame_id"))
        for number, frame in enumerate(index.messages("stack_frames"), start=1)
    }
    return StackFrameIndex(
        MappingProxyType(dict(enumerate(map(str, index.all("file_names")), start=1))),
        MappingProxyType(dict(enumerate(map(str, index.all("function_names")), start=1))),
        MappingProxyType(locations),
        MappingProxyType(frames),
    )


def _schedule(source: ProtoSource, schedule: ProtoMessage | None) -> dict[int, tuple[int, ...]]:
    if schedule is None:
        return {}
    sequences = {}
    for entry in schedule.messages("sequences"):  # map<int64, InstructionSequence>
        value = entry.message("value")
        if value is not None:
            sequences[source.integer(entry, "key")] = source.integers(value, "instruction_ids")
    return sequences


def _aliases(config: ProtoMessage | None) -> tuple[Alias, ...]:
    if config is None:
        return ()
    return tuple(
        Alias(
            tuple(entry.numbers("output_shape_index")),
            entry.number("parameter_number"),
            tuple(entry.numbers("parameter_shape_index")),
            # XLA's CreateFromProto: only MAY_ALIAS may alias; a kind left out
            # (UNDEFINED_ALIAS) must.
            "may-alias" if enum_name(entry, "kind") == "MAY_ALIAS" else "must-alias",
        )
        for entry in config.messages("entries")
    )


def _buffer_donors(config: ProtoMessage | None) -> str | None:
    """``{ (0, {}), (1, {}) }``, as XLA prints ``buffer_donor``; None when there is none."""
    if config is None or set(config.fields) - {"entries"}:
        return None
    entries = [
        f"({entry.number('parameter_number')}, "
        f"{{{','.join(map(str, entry.numbers('parameter_shape_index')))}}})"
        for entry in config.messages("entries")
    ]
    return "{ " + ", ".join(entries) + " }" if entries else ""


def _alias_text(alias: Alias) -> str:
    output = ",".join(map(str, alias.output_index))
    index = ",".join(map(str, alias.parameter_index))
    return f"{{{output}}}: ({alias.parameter_number}, {{{index}}}, {alias.kind})"
