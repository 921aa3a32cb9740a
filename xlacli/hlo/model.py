"""The typed model of an HLO module, as XLA prints it.

Every class is a frozen dataclass with slots: a 30,000-instruction module is
held as small shared objects (shapes, attribute maps and metadata repeat and
are shared by the parser), which keeps memory a small multiple of the text.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

# Attribute values as printed, by key (read-only: the parser shares them).
Attributes = Mapping[str, str]
EMPTY_ATTRIBUTES: Attributes = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Layout:
    """A layout: ``{1,0}``, or with tiles and memory space ``{1,0:T(8,128)S(1)}``.

    Attributes:
        minor_to_major: Dimension numbers, most minor first.
        extra: The text after ``:`` (tiles, element size, memory space), or "".
    """

    minor_to_major: tuple[int, ...]
    extra: str = ""

    def __str__(self) -> str:
        dims = ",".join(map(str, self.minor_to_major))
        return f"{{{dims}:{self.extra}}}" if self.extra else f"{{{dims}}}"


# Bits per element where the type's name does not say it (``f8e4m3fn`` is 8, ``s4`` 4).
_ELEMENT_BITS = {"pred": 8, "c64": 64, "c128": 128, "token": 0, "opaque": 0}
_LEADING_BITS = re.compile(r"[a-z]+(\d+)")
_ELEMENT_SIZE = re.compile(r"E\((\d+)\)")


def element_bits(element_type: str) -> int:
    """Bits per element of an XLA primitive type (0 for ``token`` and ``opaque``)."""
    bits = _ELEMENT_BITS.get(element_type)
    if bits is None:
        number = _LEADING_BITS.match(element_type)
        bits = int(number.group(1)) if number else 0
    return bits


@dataclass(frozen=True, slots=True)
class ArrayShape:
    """An array (or ``token[]``) shape such as ``f32[<=10,5]{1,0}``.

    Attributes:
        element_type: ``f32``, ``bf16``, ``pred``, ``token``...
        dimensions: Sizes; the bound for a bounded dynamic dimension, -1 for ``?``.
        dynamic: One flag per dimension (true when printed ``<=N`` or ``?``);
            empty when no dimension is dynamic.
        layout: The layout, or None when the text printed none.
    """

    element_type: str
    dimensions: tuple[int, ...]
    dynamic: tuple[bool, ...] = ()
    layout: Layout | None = None

    def without_layout(self) -> ArrayShape:
        """The same shape with no layout, to compare sizes and types alone."""
        return ArrayShape(self.element_type, self.dimensions, self.dynamic, None)

    @property
    def byte_size(self) -> int:
        """The bytes the array takes in memory (dynamic dimensions at their bound).

        Sub-byte types (``s4``, ``f4e2m1fn``) take a byte per element unless
        the layout packs them (``E(4)``), as in XLA's ``ShapeUtil::ByteSizeOf``.
        """
        bits = element_bits(self.element_type)
        if 0 < bits < 8:
            packed = _ELEMENT_SIZE.search(self.layout.extra) if self.layout else None
            bits = int(packed.group(1)) if packed else 8
        # Asked of every instruction of a graph (150k): only a dynamic shape can
        # hold -1 (``?``).
        sizes = self.dimensions
        elements = math.prod(max(size, 0) for size in sizes) if self.dynamic else math.prod(sizes)
        return (elements * bits + 7) // 8

    def __str__(self) -> str:
        if self.dynamic:
            dims = ",".join(
                ("?" if size < 0 else f"<={size}") if is_dynamic else str(size)
                for size, is_dynamic in zip(self.dimensions, self.dynamic, strict=True)
            )
        else:
            dims = ",".join(map(str, self.dimensions))
        layout = str(self.layout) if self.layout is not None else ""
        return f"{self.element_type}[{dims}]{layout}"


@dataclass(frozen=True, slots=True)
class TupleShape:
    """A tuple shape, possibly nested or empty: ``(f32[2], (s32[], token[]))``."""

    elements: tuple[Shape, ...]

    def without_layout(self) -> TupleShape:
        """The same tuple with no layout on any element."""
        return TupleShape(tuple(element.without_layout() for element in self.elements))

    def __str__(self) -> str:
        # XLA marks every fifth element of a long tuple: (a, b, c, d, e, /*index=5*/f).
        return (
            "("
            + ", ".join(
                f"/*index={index}*/{element}" if index and index % 5 == 0 else str(element)
                for index, element in enumerate(self.elements)
            )
            + ")"
        )


@dataclass(frozen=True, slots=True)
class BufferShape:
    """A buffer type, ``b(f32[2,4])``: the shape of a buffer that custom calls pass around."""

    element: ArrayShape | TupleShape

    def without_layout(self) -> BufferShape:
        """The same buffer with no layout on its element shape."""
        return BufferShape(self.element.without_layout())

    def __str__(self) -> str:
        return f"b({self.element})"


@dataclass(frozen=True, slots=True)
class OmittedShape:
    """No shape printed: XLA's parser infers it (``%t = tuple(%a, %b)``); printed as nothing."""

    def without_layout(self) -> OmittedShape:
        """Itself: there is no layout to drop."""
        return self

    def __str__(self) -> str:
        return ""


OMITTED_SHAPE = OmittedShape()
Shape = ArrayShape | TupleShape | BufferShape | OmittedShape


@dataclass(frozen=True, slots=True)
class ProgramShape:
    """Parameter and result shapes, as in ``entry_computation_layout={(...)->...}``."""

    parameters: tuple[Shape, ...]
    result: Shape

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.parameters)) + f")->{self.result}"


@dataclass(frozen=True, slots=True)
class Alias:
    """One ``input_output_alias`` entry: output index aliases a parameter (index)."""

    output_index: tuple[int, ...]
    parameter_number: int
    parameter_index: tuple[int, ...]
    kind: str = ""


@dataclass(frozen=True, slots=True)
class Metadata:
    """An instruction's ``metadata={...}``: which framework op and source line made it.

    ``source_file`` and ``source_line`` are either printed in the metadata
    (torch_xla with ``XLA_HLO_DEBUG=1``) or resolved from ``stack_frame_id``
    through the module's ``StackFrames`` preamble (newer JAX); ``resolved``
    tells which, so that the printer writes back what the text had.
    """

    op_type: str = ""
    op_name: str = ""
    source_file: str = ""
    source_line: int = 0
    stack_frame_id: int = 0
    resolved: bool = False
    extra: tuple[tuple[str, str], ...] = ()

    @property
    def source(self) -> str:
        """``file:line``, or "" when the metadata names no source."""
        if not self.source_file:
            return ""
        return f"{self.source_file}:{self.source_line}" if self.source_line else self.source_file


EMPTY_METADATA = Metadata()


@dataclass(frozen=True, slots=True)
class FileLocation:
    """One ``FileLocations`` preamble entry."""

    file_name_id: int
    function_name_id: int
    line: int
    end_line: int = 0
    column: int = 0
    end_column: int = 0


@dataclass(frozen=True, slots=True)
class StackFrame:
    """One ``StackFrames`` preamble entry (ids are the preamble's own)."""

    file_location_id: int
    parent_frame_id: int = 0


@dataclass(frozen=True, slots=True)
class StackFrameIndex:
    """The newer preamble: ``FileNames``, ``FunctionNames``, ``FileLocations``, ``StackFrames``."""

    file_names: Mapping[int, str]
    function_names: Mapping[int, str]
    file_locations: Mapping[int, FileLocation]
    stack_frames: Mapping[int, StackFrame]

    def location(self, frame_id: int) -> tuple[str, int, str] | None:
        """The innermost ``(file, line, function)`` of a frame, or None if unknown."""
        frame = self.stack_frames.get(frame_id)
        if frame is None:
            return None
        where = self.file_locations.get(frame.file_location_id)
        if where is None:
            return None
        file_name = self.file_names.get(where.file_name_id, "")
        function = self.function_names.get(where.function_name_id, "")
        return file_name, where.line, function


@dataclass(frozen=True, slots=True)
class Instruction:
    """One HLO instruction line.

    Attributes:
        name: The name without ``%``.
        opcode: ``add``, ``fusion``, ``get-tuple-element``...
        shape: The result shape.
        operands: Operand names (without ``%``) in order, in the same computation.
        attributes: Every ``key=value`` after the operands except ``metadata``,
            values as printed (``dimensions`` -> ``"{1,0}"``).
        metadata: The parsed ``metadata={...}`` (empty when the line has none).
        is_root: Whether the line starts with ``ROOT``.
        parameter_number: N for ``parameter(N)``, else None.
        literal: The literal text of a ``constant(...)``, else None.
        called_computations: Names from ``calls=``, ``to_apply=``, ``body=``,
            ``condition=``, ``branch_computations=``... in the order printed.
        line: The 1-based line in the source text (not part of equality).
    """

    name: str
    opcode: str
    shape: Shape
    operands: tuple[str, ...] = ()
    attributes: Attributes = field(default_factory=lambda: EMPTY_ATTRIBUTES)
    metadata: Metadata = EMPTY_METADATA
    is_root: bool = False
    parameter_number: int | None = None
    literal: str | None = None
    called_computations: tuple[str, ...] = ()
    line: int = field(default=0, compare=False)

    @property
    def fusion_kind(self) -> str:
        """``kLoop``, ``kInput``, ``kOutput``, ``kCustom`` for a fusion, else ""."""
        return self.attributes.get("kind", "")


def _instruction_factory() -> Callable[..., Instruction]:
    # A parse makes 30,000 instructions. A frozen dataclass's __init__ sets
    # each field through object.__setattr__ (1.2 us for eleven fields);
    # setting the slots directly gives the same object in half the time.
    # By name, so that reordering the fields cannot swap two values silently.
    setter = {slot: Instruction.__dict__[slot].__set__ for slot in Instruction.__slots__}
    name_, opcode_, shape_, operands_ = (setter[f] for f in ("name", "opcode", "shape", "operands"))
    attributes_, metadata_, is_root_ = setter["attributes"], setter["metadata"], setter["is_root"]
    parameter_number_, literal_ = setter["parameter_number"], setter["literal"]
    called_, line_ = setter["called_computations"], setter["line"]
    new = object.__new__

    def make(
        name: str,
        opcode: str,
        shape: Shape,
        operands: tuple[str, ...],
        attributes: Attributes,
        metadata: Metadata,
        is_root: bool,
        parameter_number: int | None,
        literal: str | None,
        called_computations: tuple[str, ...],
        line: int,
    ) -> Instruction:
        instruction = new(Instruction)
        name_(instruction, name)
        opcode_(instruction, opcode)
        shape_(instruction, shape)
        operands_(instruction, operands)
        attributes_(instruction, attributes)
        metadata_(instruction, metadata)
        is_root_(instruction, is_root)
        parameter_number_(instruction, parameter_number)
        literal_(instruction, literal)
        called_(instruction, called_computations)
        line_(instruction, line)
        return instruction

    return make


# Instruction(...) with every field given, positionally, for the parser's hot loop.
make_instruction = _instruction_factory()


@dataclass(frozen=True, slots=True)
class Computation:
    """A computation: its instructions in text order, and its optional signature.

    Attributes:
        name: The name without ``%``.
        instructions: In text order.
        is_entry: Whether it is the module's ENTRY computation.
        parameters: ``(name, shape)`` pairs of the printed signature, or None
            when the computation was printed without one.
        result_shape: The signature's result shape, or None.
        attributes: ``key=value`` printed after the closing brace
            (``execution_thread=...``).
    """

    name: str
    instructions: tuple[Instruction, ...]
    is_entry: bool = False
    parameters: tuple[tuple[str, Shape], ...] | None = None
    result_shape: Shape | None = None
    attributes: Attributes = field(default_factory=lambda: EMPTY_ATTRIBUTES)

    @property
    def root(self) -> Instruction:
        """The ROOT instruction (the last one when none is marked, as XLA reads it)."""
        if self.instructions[-1].is_root:  # where XLA prints it
            return self.instructions[-1]
        for instruction in self.instructions:
            if instruction.is_root:
                return instruction
        return self.instructions[-1]


@dataclass(frozen=True, slots=True)
class HloModule:
    """A parsed HLO module.

    Attributes:
        name: The module name from the ``HloModule`` line.
        attributes: Header ``key=value`` pairs, values as printed.
        computations: In text order.
        entry_computation_layout: The typed ``entry_computation_layout``, if printed.
        input_output_alias: The typed ``input_output_alias`` entries.
        stack_frames: The preamble tables, or None when the text has none.
        filename: Where the text came from (not part of equality).
    """

    name: str
    computations: tuple[Computation, ...]
    attributes: Attributes = field(default_factory=lambda: EMPTY_ATTRIBUTES)
    entry_computation_layout: ProgramShape | None = None
    input_output_alias: tuple[Alias, ...] = ()
    stack_frames: StackFrameIndex | None = None
    filename: str = field(default="<string>", compare=False)

    @property
    def entry(self) -> Computation:
        """The ENTRY computation."""
        for computation in self.computations:
            if computation.is_entry:
                return computation
        return self.computations[-1]

    @property
    def is_scheduled(self) -> bool:
        return self.attributes.get("is_scheduled") == "true"

    @property
    def instruction_count(self) -> int:
        """Instructions in all computations (fused ones included)."""
        return sum(len(computation.instructions) for computation in self.computations)

    def opcode_counts(self) -> Counter[str]:
        """How many instructions of each opcode, over all computations."""
        return Counter(
            instruction.opcode
            for computation in self.computations
            for instruction in computation.instructions
        )

    def computation(self, name: str) -> Computation:
        """The computation called ``name``; raises KeyError if there is none."""
        for computation in self.computations:
            if computation.name == name:
                return computation
        raise KeyError(name)
