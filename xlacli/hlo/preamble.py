"""The module header line and the newer preamble sections.

``HloModule name, key=value, ...`` carries the typed ``entry_computation_layout``
and ``input_output_alias``. Newer XLA prints, between the header and the
first computation, the tables that ``stack_frame_id`` in metadata points into::

    FileNames
    1 "examples/model.py"
    FunctionNames
    1 "forward"
    FileLocations
    1 {file_name_id=1 function_name_id=1 line=13 end_line=13 column=10 end_column=49}
    StackFrames
    1 {file_location_id=1 parent_frame_id=1}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType

from xlacli.hlo.attributes import read_attributes, read_brace_fields
from xlacli.hlo.lexer import Malformed, expect, found_at, read_name, read_string, skip_space
from xlacli.hlo.model import (
    Alias,
    Attributes,
    FileLocation,
    ProgramShape,
    StackFrame,
    StackFrameIndex,
)
from xlacli.hlo.shapes import ShapeCache, read_program_shape

SECTION_NAMES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_ENTRY = re.compile(r"\s*(\d+)\s+")
_ALIAS = re.compile(
    r"\s*\{([\d,\s]*)\}\s*:\s*\(\s*(\d+)\s*,\s*\{([\d,\s]*)\}\s*(?:,\s*([\w-]+)\s*)?\)\s*"
)


@dataclass(frozen=True, slots=True)
class ModuleHeader:
    """What the ``HloModule`` line says."""

    name: str
    attributes: Attributes
    entry_computation_layout: ProgramShape | None
    input_output_alias: tuple[Alias, ...]


def read_header(line: str, shapes: ShapeCache) -> ModuleHeader:
    """Read the ``HloModule name, key=value, ...`` line."""
    offset = skip_space(line, 0)
    if not line.startswith("HloModule", offset):
        raise Malformed(offset, "'HloModule' and the module name", found_at(line, offset))
    name, offset = read_name(line, offset + len("HloModule"), "a module name")
    colon = skip_space(line, offset)
    if line.startswith(":", colon):  # the older ``HloModule name:``
        offset = colon + 1
    raw = read_attributes(line, offset)
    layout = None
    if "entry_computation_layout" in raw:
        value, at = raw["entry_computation_layout"]
        layout, end = read_program_shape(line, expect(line, at, "{"), shapes)
        end = expect(line, end, "}")
        if end != at + len(value):
            raise Malformed(end, "the end of entry_computation_layout", found_at(line, end))
    aliases: tuple[Alias, ...] = ()
    if "input_output_alias" in raw:
        aliases = _read_aliases(*raw["input_output_alias"])
    attributes = MappingProxyType({key: value for key, (value, _) in raw.items()})
    return ModuleHeader(name, attributes, layout, aliases)


def _read_aliases(value: str, offset: int) -> tuple[Alias, ...]:
    if not (value.startswith("{") and value.endswith("}")):
        raise Malformed(offset, "'{' and alias entries such as {0}: (0, {}, may-alias)")
    aliases = []
    position, end = 1, len(value) - 1
    while value[position:end].strip():
        match = _ALIAS.match(value, position, end)
        if not match:
            raise Malformed(
                offset + position,
                "an alias such as {0}: (0, {}, may-alias)",
                found_at(value[:end], position),
            )
        output, parameter, parameter_index, kind = match.groups()
        aliases.append(Alias(_index(output), int(parameter), _index(parameter_index), kind or ""))
        position = match.end()
        if value.startswith(",", position):
            position += 1
        elif value[position:end].strip():
            raise Malformed(
                offset + position, "',' between aliases", found_at(value[:end], position)
            )
    return tuple(aliases)


def _index(text: str) -> tuple[int, ...]:
    return tuple(int(piece) for piece in text.split(",")) if text.strip() else ()


@dataclass(slots=True)
class PreambleBuilder:
    """Collects preamble entries line by line, then builds the typed index."""

    file_names: dict[int, str] = field(default_factory=dict)
    function_names: dict[int, str] = field(default_factory=dict)
    file_locations: dict[int, FileLocation] = field(default_factory=dict)
    stack_frames: dict[int, StackFrame] = field(default_factory=dict)

    def add(self, section: str, line: str) -> None:
        """Read one ``N value`` entry of ``section``."""
        match = _ENTRY.match(line)
        if not match:
            raise Malformed(skip_space(line, 0), f"a numbered {section} entry", found_at(line, 0))
        entry_id = int(match.group(1))
        offset = match.end()
        if section in ("FileNames", "FunctionNames"):
            text, end = read_string(line, offset)
            if line[end:].strip():
                raise Malformed(end, "the end of the line", found_at(line, end))
            names = self.file_names if section == "FileNames" else self.function_names
            names[entry_id] = text
            return
        fields = _int_fields(read_brace_fields(line[offset:].rstrip(), offset), offset)
        try:
            if section == "FileLocations":
                self.file_locations[entry_id] = FileLocation(**fields)
            else:
                self.stack_frames[entry_id] = StackFrame(**fields)
        except TypeError:
            raise Malformed(
                offset, f"the fields of a {section} entry", repr(sorted(fields))
            ) from None

    def build(self) -> StackFrameIndex | None:
        """The typed index, or None when the text had no preamble."""
        if not (self.file_names or self.function_names or self.file_locations or self.stack_frames):
            return None
        return StackFrameIndex(
            MappingProxyType(self.file_names),
            MappingProxyType(self.function_names),
            MappingProxyType(self.file_locations),
            MappingProxyType(self.stack_frames),
        )


def _int_fields(fields: dict[str, str], offset: int) -> dict[str, int]:
    try:
        return {key: int(value) for key, value in fields.items()}
    except ValueError:
        raise Malformed(offset, "whole numbers in the entry", repr(fields)) from None
