"""The computations of an ``HloModuleProto``: instructions by id, as named ``Instruction``s.

See ``xlacli.hlo.from_proto`` for what is read and how; this is the part
that walks one computation: ids to names, the root, called computations
under the key XLA prints for the opcode, constants, metadata.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import MappingProxyType
from typing import TypeVar

from xlacli.hlo.attributes import CALLED_COMPUTATION_KEYS, build_metadata, frame_locator
from xlacli.hlo.lexer import Malformed
from xlacli.hlo.model import (
    EMPTY_ATTRIBUTES,
    EMPTY_METADATA,
    Computation,
    Instruction,
    Metadata,
    Shape,
    StackFrameIndex,
)
from xlacli.hlo.proto_attributes import instruction_attributes
from xlacli.hlo.proto_text import ProtoSource
from xlacli.hlo.proto_tree import ProtoMessage, format_value, quote_text
from xlacli.hlo.proto_values import ShapeDefect, literal_text, read_shape

T = TypeVar("T")
_HANDLED = frozenset(
    {"name", "opcode", "shape", "metadata", "literal", "parameter_number", "id", "operand_ids",
     "control_predecessor_ids", "called_computation_ids"}
)  # fmt: skip
_TO_APPLY = frozenset(
    {"call", "map", "reduce-window", "reduce", "all-reduce", "reduce-scatter", "all-reduce-start",
     "scatter", "sort"}
)  # fmt: skip
_VALID_NAME = re.compile(r"[A-Za-z_][\w.\-]*")
_OPCODE = re.compile(r"[a-z][a-z0-9\-]*")
_METADATA_STRINGS = ("op_type", "op_name", "source_file")
_METADATA_NUMBERS = ("source_line", "stack_frame_id")


def valid_name(source: ProtoSource, message: ProtoMessage, what: str) -> str:
    """The message's ``name``, made an HLO name as XLA sanitizes it (others become '_')."""
    name = message.text("name")
    if not name:
        source.fail(message, "name", f"a name for the {what}", "none")
    if _VALID_NAME.fullmatch(name):
        return name
    cleaned = re.sub(r"[^\w.\-]", "_", name)
    return cleaned if _VALID_NAME.match(cleaned) else "_" + cleaned


def unique_ids(source: ProtoSource, protos: tuple[ProtoMessage, ...], what: str) -> dict[int, str]:
    """Each message's id with its name; XLA rejects an id or a name used twice (an id
    left out is 0, so two messages without one are a repeat too)."""
    names: dict[int, str] = {}
    used: set[str] = set()
    for proto in protos:
        name = valid_name(source, proto, what.split()[-1])
        if name in used:
            source.fail(proto, "name", f"{what} name not used before", repr(name))
        used.add(name)
        number = source.integer(proto, "id")
        if number in names:
            source.fail(proto, "id", f"{what} id not used before", str(number))
        names[number] = name
    return names


def typed(source: ProtoSource, read: Callable[[], T]) -> T:
    """``read()``, a shape or literal the model cannot hold raised at its place in the text."""
    try:
        return read()
    except ShapeDefect as defect:
        source.fail(defect.message, defect.field, defect.expected, defect.found)


class ComputationReader:
    """Reads the computations of one module (its computation names and stack frames known)."""

    def __init__(
        self,
        source: ProtoSource,
        computation_names: dict[int, str],
        stack_frames: StackFrameIndex | None,
    ):
        self.source = source
        self.computation_names = computation_names
        self.locate = frame_locator(stack_frames)

    def computation(
        self, proto: ProtoMessage, is_entry: bool, sequence: tuple[int, ...] | None
    ) -> Computation:
        """One computation; ``sequence`` is its schedule (instruction ids), if any."""
        protos = proto.messages("instructions")
        if not protos:
            self.source.fail(proto, "name", f"an instruction in {proto.text('name')}", "none")
        names = unique_ids(self.source, protos, "an instruction")
        if sequence is not None and sorted(sequence) == sorted(names):
            by_id = {p.number("id"): p for p in protos}
            protos = tuple(by_id[i] for i in sequence)
        shapes = {p.number("id"): self._shape(p) for p in protos}
        # protobuf leaves a zero out: no root_id is root 0 when there is an instruction 0.
        root_id = self.source.integer(proto, "root_id")
        if "root_id" not in proto.fields and root_id not in names:
            root_id = protos[-1].number("id")
        if root_id not in names:
            self.source.fail(proto, "root_id", "the id of an instruction of it", str(root_id))
        instructions = tuple(
            self.instruction(p, names, shapes, p.number("id") == root_id) for p in protos
        )
        parameters = sorted(
            (i.parameter_number, i.name, i.shape) for i in instructions if i.opcode == "parameter"
        )
        thread = proto.text("execution_thread")
        return Computation(
            name=self.computation_names[proto.number("id")],
            instructions=instructions,
            is_entry=is_entry,
            # XLA prints a computation's signature without layouts.
            parameters=tuple((name, shape.without_layout()) for _, name, shape in parameters),
            result_shape=shapes[root_id].without_layout(),
            attributes=MappingProxyType({"execution_thread": quote_text(thread)})
            if thread and thread != "main"
            else EMPTY_ATTRIBUTES,
        )

    def _shape(self, proto: ProtoMessage) -> Shape:
        shape = proto.message("shape")
        if shape is None:
            self.source.fail(proto, "name", f"a shape for {proto.text('name')}", "none")
        return typed(self.source, lambda: read_shape(shape))

    def instruction(
        self, proto: ProtoMessage, names: dict[int, str], shapes: dict[int, Shape], is_root: bool
    ) -> Instruction:
        """One instruction, its ids named."""
        opcode = proto.text("opcode")
        if not _OPCODE.fullmatch(opcode):  # what the HLO text parser reads back
            self.source.fail(proto, "opcode", "an opcode such as add", repr(opcode) or "none")
        shape = shapes[proto.number("id")]
        operand_ids = self.source.integers(proto, "operand_ids")
        operands = self._named(names, proto, "operand_ids")
        if operands and opcode in ("parameter", "constant"):  # printed (N), (literal): lost
            self.source.fail(
                proto, "operand_ids", f"no operands for a {opcode}", str(len(operands))
            )
        calls = self._called(proto, opcode, shapes.get(operand_ids[0]) if operand_ids else None)
        pairs = typed(self.source, lambda: instruction_attributes(proto, opcode, _HANDLED)) + calls
        if opcode == "compare" and operand_ids:
            pairs = _without_default_comparison_type(pairs, shapes.get(operand_ids[0]))
        literal = self._literal(proto, shape, pairs) if opcode == "constant" else None
        predecessors = [f"%{n}" for n in self._named(names, proto, "control_predecessor_ids")]
        if predecessors:
            pairs.append(("control-predecessors", "{" + ", ".join(predecessors) + "}"))
        metadata = proto.message("metadata")
        return Instruction(
            name=names[proto.number("id")],
            opcode=opcode,
            shape=shape,
            operands=operands,
            attributes=MappingProxyType(dict(pairs)) if pairs else EMPTY_ATTRIBUTES,
            metadata=self._metadata(metadata) if metadata is not None else EMPTY_METADATA,
            is_root=is_root,
            parameter_number=proto.number("parameter_number") if opcode == "parameter" else None,
            literal=literal,
            called_computations=_called_names(calls),
        )

    def _named(self, names: dict[int, str], proto: ProtoMessage, field: str) -> tuple[str, ...]:
        """The names of the ids in ``field``; an id that names nothing raised at that id."""
        named = []
        for index, wanted in enumerate(self.source.integers(proto, field)):
            name = names.get(wanted)
            if name is None:
                what = "a computation" if field == "called_computation_ids" else "an instruction"
                message = f"the id of {what} of the module"
                self.source.fail(proto, field, message, str(wanted), index)
            named.append(name)
        return tuple(named)

    def _called(
        self, proto: ProtoMessage, opcode: str, first_operand: Shape | None
    ) -> list[tuple[str, str]]:
        called = self._named(self.computation_names, proto, "called_computation_ids")
        refs = [f"%{name}" for name in called]
        if not refs:
            return []
        listed = "{" + ", ".join(refs) + "}"
        single = refs[0] if len(refs) == 1 else listed
        if opcode == "while" and len(refs) == 2:
            return [("condition", refs[1]), ("body", refs[0])]  # the proto holds the body first
        if opcode == "select-and-scatter" and len(refs) == 2:
            return [("select", refs[0]), ("scatter", refs[1])]
        if opcode == "conditional":
            if len(refs) == 2 and getattr(first_operand, "element_type", "") == "pred":
                return [("true_computation", refs[0]), ("false_computation", refs[1])]
            return [("branch_computations", listed)]
        if opcode in _TO_APPLY:
            return [("to_apply", single)]
        if opcode == "custom-call":
            return [("called_computations", listed)]
        return [("calls", single)]

    def _literal(self, proto: ProtoMessage, shape: Shape, pairs: list[tuple[str, str]]) -> str:
        literal = proto.message("literal")
        if literal is None:
            return "{...}"  # what XLA prints for a constant without its value
        text = typed(self.source, lambda: literal_text(literal, shape))
        if text is None:  # an element type not read here: the value is kept as textproto
            pairs.append(("literal", format_value(literal)))
            return "{...}"
        return text

    def _metadata(self, proto: ProtoMessage) -> Metadata:
        # The fields as XLA prints them, typed (and stack_frame_id resolved) as for text.
        fields: dict[str, str] = {}
        for field, values in proto.fields.items():
            value = values[-1]
            if field in _METADATA_STRINGS and isinstance(value, str):
                fields[field] = quote_text(value)  # bytes too, escaped as elsewhere
            elif field in _METADATA_NUMBERS and isinstance(value, int) and value >= 0:
                fields[field] = str(value)
            elif len(values) == 1 and not isinstance(value, ProtoMessage):
                fields[field] = format_value(value)
            else:
                fields[field] = "{" + ",".join(map(format_value, values)) + "}"
        try:
            return build_metadata(fields, 0, self.locate)
        except Malformed as problem:
            self.source.fail(proto, None, problem.expected, problem.found or "")


def _without_default_comparison_type(
    pairs: list[tuple[str, str]], operand: Shape | None
) -> list[tuple[str, str]]:
    # XLA prints type= only when it is not the default for the operands' element type.
    element_type = getattr(operand, "element_type", "")
    if element_type.startswith(("f", "bf", "c")):
        default = "FLOAT"
    elif element_type.startswith("s"):
        default = "SIGNED"
    else:
        default = "UNSIGNED"  # unsigned integers and pred
    return [(key, value) for key, value in pairs if (key, value) != ("type", default)]


def _called_names(pairs: list[tuple[str, str]]) -> tuple[str, ...]:
    # In the order the text parser gives them: by CALLED_COMPUTATION_KEYS.
    values = dict(pairs)
    names: list[str] = []
    for key in CALLED_COMPUTATION_KEYS:
        if key in values:
            pieces = values[key].strip("{}").split(",")
            names.extend(piece.strip().lstrip("%") for piece in pieces if piece.strip())
    return tuple(names)
