"""The HLO text parser: a line-oriented scanner over XLA's printed format.

XLA prints one instruction per line, so the parser reads lines, not tokens:
one compiled regex finds ``[ROOT] %name = ``, the shape and opcode follow, the
operand list is split on commas (brackets are only scanned when inline shapes
or nested literals make it necessary), and the attribute text after the
operands, which repeats across layers, is read once per distinct text. This
keeps a 30,000-instruction module well under a second.

Every problem becomes an ``HloParseError`` with the file, line and column.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from xlacli.errors import HloParseError, UsageError
from xlacli.hlo.attributes import build_metadata, read_attributes, read_brace_fields
from xlacli.hlo.gc_pause import gc_paused
from xlacli.hlo.instructions import ComputationState, InstructionReader, Reference
from xlacli.hlo.lexer import Malformed, expect, found_at, read_name, skip_space
from xlacli.hlo.model import (
    EMPTY_ATTRIBUTES,
    Computation,
    HloModule,
    Metadata,
    Shape,
    StackFrameIndex,
)
from xlacli.hlo.preamble import SECTION_NAMES, PreambleBuilder, read_header
from xlacli.hlo.shapes import ShapeCache, read_shape

_COMPUTATION_HEAD = re.compile(r"\s*(ENTRY\s+)?%?([A-Za-z_][\w.\-]*)\s*")
_SIMPLE_PARAMETER = re.compile(
    r"\s*%?([A-Za-z_][\w.\-]*)\s*:\s*([a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?)\s*([,)])"
)


def parse_hlo(text: str, filename: str = "<string>") -> HloModule:
    """Parse HLO text as XLA prints it into a typed module.

    Args:
        text: The module text (``HloModule ...`` and its computations).
        filename: Named in error messages.

    Raises:
        HloParseError: The text is not valid HLO; the error names the line,
            the column and what was expected there.
    """
    with gc_paused():
        return _ModuleParser(io.StringIO(text, newline=None), filename).parse()


def parse_hlo_file(path: str | Path) -> HloModule:
    """Read and parse an HLO text file.

    Raises:
        UsageError: The file is missing or unreadable.
        HloParseError: The text is not valid HLO (or not UTF-8).
    """
    path = Path(path)
    try:
        # Read line by line: the text of a large module is never held whole.
        with gc_paused(), path.open(encoding="utf-8", newline=None) as lines:
            return _ModuleParser(lines, str(path)).parse()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a folder, expected an HLO text file") from None
    except UnicodeDecodeError:
        raise _not_utf8(path) from None
    except OSError as error:
        raise UsageError(f"{path}: cannot read: {error.strerror}") from None


def _not_utf8(path: Path) -> HloParseError:
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        return HloParseError(str(path), line, column, "UTF-8 text", "a byte that is not")
    return HloParseError(str(path), 1, 1, "UTF-8 text")


@dataclass(slots=True)
class _Signature:
    """A computation's head line, read."""

    name: str
    is_entry: bool
    parameters: tuple[tuple[str, Shape], ...] | None
    result_shape: Shape | None


class _ModuleParser:
    """One parse: the lines, the current line number and the per-parse caches."""

    def __init__(self, lines: Iterable[str], filename: str):
        self.lines = lines
        self.filename = filename
        self.lineno = 0  # the line being read, for error messages
        self.line = ""
        self.shapes: ShapeCache = {}
        self.metadata: dict[str, Metadata] = {}
        self.stack_frames: StackFrameIndex | None = None
        self.reader = InstructionReader(self.shapes, self._metadata)
        self.computation_lines: dict[str, int] = {}
        self.entry_line = 0

    def parse(self) -> HloModule:
        try:
            return self._module()
        except Malformed as problem:
            found = problem.found
            if found is None:
                found = found_at(self.line, problem.offset)
            raise HloParseError(
                self.filename, self.lineno, problem.offset + 1, problem.expected, found
            ) from None

    def _content_lines(self) -> Iterator[str]:
        """Yield the lines that are not blank or ``//`` comments, keeping ``lineno``.

        After the last line, ``lineno`` is the line after it and ``line`` is
        empty, which is where an error about the end of the file points.
        """
        index, ended_line = 0, True
        for index, line in enumerate(self.lines, start=1):
            ended_line = line.endswith("\n")
            stripped = line.strip()
            if stripped and not stripped.startswith("//"):
                self.lineno = index
                self.line = line[:-1] if ended_line else line
                yield self.line
        # A file whose last line has no newline ends on that line, not after it.
        self.lineno, self.line = (index + 1 if ended_line else index), ""

    def _module(self) -> HloModule:
        lines = self._content_lines()
        header_line = next(lines, None)
        if header_line is None:
            raise Malformed(0, "'HloModule' and the module name", "an empty file")
        header = read_header(header_line, self.shapes)
        preamble = PreambleBuilder()
        section = ""
        computations: list[Computation] = []
        for line in lines:
            stripped = line.strip()
            if not computations and stripped in SECTION_NAMES:
                section = stripped
            elif section and not computations and stripped[0].isdigit():
                preamble.add(section, line)
            else:
                if not computations:
                    self.stack_frames = preamble.build()
                computations.append(self._computation(line, lines))
        if not computations:
            raise Malformed(0, "a computation", "end of file")
        for reference in self.reader.called:
            if reference.name not in self.computation_lines:
                self._unresolved(reference)
        return HloModule(
            name=header.name,
            computations=tuple(computations),
            attributes=header.attributes,
            entry_computation_layout=header.entry_computation_layout,
            input_output_alias=header.input_output_alias,
            stack_frames=self.stack_frames,
            filename=self.filename,
        )

    def _unresolved(self, reference: Reference) -> None:
        raise HloParseError(
            self.filename,
            reference.line,
            reference.column,
            reference.expected,
            repr(reference.name),
        )

    def _computation(self, head: str, lines: Iterator[str]) -> Computation:
        signature = self._computation_head(head)
        head_line = self.lineno
        state = ComputationState(signature.name)
        read = self.reader.read
        for line in lines:
            if line.lstrip().startswith("}"):
                return self._computation_end(signature, state, line)
            read(state, line, self.lineno)
        self.lineno, self.line = head_line, head
        raise Malformed(
            len(head.rstrip()) - 1, f"'}}' to close computation {signature.name}", "end of file"
        )

    def _computation_head(self, line: str) -> _Signature:
        match = _COMPUTATION_HEAD.match(line)
        if not match or line.startswith("ROOT", skip_space(line, 0)):
            raise Malformed(
                skip_space(line, 0), "a computation such as 'ENTRY %main {'", found_at(line, 0)
            )
        offset = match.end()
        parameters: tuple[tuple[str, Shape], ...] | None = None
        result_shape = None
        if line.startswith("(", offset):
            parameters, offset = self._signature(line, offset)
            offset = expect(line, offset, "->")
            result_shape, offset = read_shape(line, offset, self.shapes)
        offset = expect(line, offset, "{")
        if line[offset:].strip():
            raise Malformed(offset, "the end of the line after '{'", found_at(line, offset))
        name, is_entry = match.group(2), bool(match.group(1))
        if name in self.computation_lines:
            line_seen = self.computation_lines[name]
            raise Malformed(
                match.start(2), f"a computation name not used before (line {line_seen})", repr(name)
            )
        if is_entry:
            if self.entry_line:
                raise Malformed(
                    match.start(1), f"one ENTRY (line {self.entry_line} has it)", "ENTRY"
                )
            self.entry_line = self.lineno
        self.computation_lines[name] = self.lineno
        return _Signature(name, is_entry, parameters, result_shape)

    def _signature(self, line: str, offset: int) -> tuple[tuple[tuple[str, Shape], ...], int]:
        parameters: list[tuple[str, Shape]] = []
        position = skip_space(line, offset + 1)
        if line.startswith(")", position):
            return (), position + 1
        while True:
            # Fused computations repeat the same few shapes: one match per parameter.
            simple = _SIMPLE_PARAMETER.match(line, position)
            if simple and simple.group(2) in self.shapes:
                parameters.append((simple.group(1), self.shapes[simple.group(2)]))
                position = simple.end()
                if simple.group(3) == ")":
                    return tuple(parameters), position
                continue
            name, position = read_name(line, position, "a parameter name")
            position = expect(line, position, ":")
            shape, position = read_shape(line, position, self.shapes)
            parameters.append((name, shape))
            position = skip_space(line, position)
            if line.startswith(")", position):
                return tuple(parameters), position + 1
            if not line.startswith(",", position):
                raise Malformed(position, "',' or ')'", found_at(line, position))
            position += 1

    def _computation_end(
        self, signature: _Signature, state: ComputationState, line: str
    ) -> Computation:
        if not state.instructions:
            raise Malformed(line.index("}"), f"an instruction in computation {state.name}", "'}'")
        raw = read_attributes(line, line.index("}") + 1)
        for reference in state.pending:
            if reference.name not in state.defined:
                self._unresolved(reference)
        attributes = (
            MappingProxyType({key: value for key, (value, _) in raw.items()})
            if raw
            else EMPTY_ATTRIBUTES
        )
        return Computation(
            name=state.name,
            instructions=tuple(state.instructions),
            is_entry=signature.is_entry,
            parameters=signature.parameters,
            result_shape=signature.result_shape,
            attributes=attributes,
        )

    def _metadata(self, text: str, offset: int) -> Metadata:
        metadata = self.metadata.get(text)
        if metadata is None:
            fields = read_brace_fields(text, offset)
            index = self.stack_frames
            locate = (lambda frame: _source_of(index, frame)) if index else (lambda frame: None)
            metadata = build_metadata(fields, offset, locate)
            self.metadata[text] = metadata
        return metadata


def _source_of(index: StackFrameIndex, frame_id: int) -> tuple[str, int] | None:
    location = index.location(frame_id)
    return (location[0], location[1]) if location else None
