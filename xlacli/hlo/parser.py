"""The HLO text parser: statements as XLA's parser reads them, fast paths as XLA prints them.

Runs of instruction lines as XLA prints them are read straight from the
lines (``xlacli.hlo.printed``): one compiled regex per line
finds ``[ROOT] %name = shape opcode(operands)`` and the attribute text,
which repeats across layers and is read once per distinct text. Everything
else goes through ``StatementReader``, which cuts the text into statements
(wrapped and commented text joined and blanked). What people
write by hand (omitted shapes, inline operands and bodies, ``%t#0``, no
``HloModule`` line, several modules separated by ``// -----``) takes the
general paths. A statement that ends too early (an error at its very end)
is joined with the next line and read again, the way XLA's parser, which
ignores line breaks, would read on.

Every problem becomes an ``HloParseError`` with the file, line and column.
Text that is an ``HloModuleProto`` in protobuf text format (its first
significant line opens one of its fields) goes to ``xlacli.hlo.from_proto``.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable
from functools import partial
from itertools import repeat
from pathlib import Path
from types import MappingProxyType
from typing import NoReturn, TypeVar

from xlacli.errors import HloParseError, UsageError
from xlacli.hlo.attributes import (
    build_metadata,
    frame_locator,
    read_attributes,
    read_brace_fields,
)
from xlacli.hlo.from_proto import is_proto_text, parse_proto_module
from xlacli.hlo.gc_pause import gc_paused
from xlacli.hlo.heads import Signature, read_head
from xlacli.hlo.instructions import ComputationState, InstructionReader, Reference
from xlacli.hlo.lexer import Malformed, found_at
from xlacli.hlo.model import (
    EMPTY_ATTRIBUTES,
    Computation,
    HloModule,
    Metadata,
    StackFrameIndex,
)
from xlacli.hlo.preamble import SECTION_NAMES, ModuleHeader, PreambleBuilder, read_header
from xlacli.hlo.printed import PrintedLineReader
from xlacli.hlo.reflow import reflow_hlo
from xlacli.hlo.shapes import ShapeCache
from xlacli.hlo.statements import MODULE_SEPARATOR, StatementReader, locate

T = TypeVar("T")


def parse_hlo(text: str, filename: str = "<string>") -> HloModule:
    """Parse HLO text as XLA prints it (or as people write it) into a typed module.

    Args:
        text: The module text (``HloModule ...`` and its computations; the
            header may be left out), or an ``HloModuleProto`` in protobuf text.
        filename: Named in error messages.

    Raises:
        HloParseError: The text is not valid HLO; the error names the line,
            the column and what was expected there.
    """
    with gc_paused():
        return _parse_one(io.StringIO(text, newline=None).readlines(), filename)


def parse_hlo_modules(text: str, filename: str = "<string>") -> tuple[HloModule, ...]:
    """Parse text holding one module or several separated by ``// -----`` lines.

    Raises:
        HloParseError: A module is not valid HLO, or the text holds none.
    """
    with gc_paused():
        return _parse_chunks(io.StringIO(text, newline=None), filename)


def parse_hlo_file(path: str | Path) -> HloModule:
    """Read and parse an HLO text file holding one module.

    Raises:
        UsageError: The file is missing or unreadable.
        HloParseError: The text is not valid HLO (or not UTF-8).
    """
    return _read_file(path, _parse_one)


def parse_hlo_file_modules(path: str | Path) -> tuple[HloModule, ...]:
    """Read and parse an HLO text file of modules separated by ``// -----`` lines.

    Raises:
        UsageError: The file is missing or unreadable.
        HloParseError: A module is not valid HLO (or the file not UTF-8).
    """
    return _read_file(path, _parse_chunks)


def parse_hlo_bytes(data: bytes, filename: str) -> HloModule:
    """Parse the bytes of an HLO text file holding one module, as
    ``parse_hlo_file`` parses the file (a copy read once, that cannot change
    under the parse).

    Raises:
        UsageError: The text is not HLO.
        HloParseError: The text is not valid HLO (or not UTF-8).
    """
    path = Path(filename)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _not_utf8(path, data) from None
    with gc_paused():
        return _parse_lines(io.StringIO(text, newline=None).readlines(), path, _parse_one)


def _read_file(path: str | Path, parse: Callable[[Iterable[str], str], T]) -> T:
    path = Path(path)
    try:
        with gc_paused():
            # A list of lines: the statement reader and the fast path index them.
            with path.open(encoding="utf-8", newline=None) as handle:
                lines = handle.readlines()
            return _parse_lines(lines, path, parse)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a folder, expected an HLO text file") from None
    except UnicodeDecodeError:
        raise _not_utf8(path) from None
    except OSError as error:
        raise UsageError(f"{path}: cannot read: {error.strerror}") from None


def _parse_lines(lines: list[str], path: Path, parse: Callable[[Iterable[str], str], T]) -> T:
    try:
        return parse(lines, str(path))
    except HloParseError:
        if not _looks_like_hlo(lines):
            raise _not_hlo(path, lines) from None
        # Statements sharing a line (XLA reads line breaks as whitespace):
        # read again one statement a line, else the first error stands.
        reflowed = reflow_hlo("".join(lines)).splitlines(keepends=True)
        if reflowed == lines:
            raise
        try:
            return parse(reflowed, str(path))
        except HloParseError:
            pass
        raise


_HLO_START = re.compile(r"\s*(HloModule\b|ENTRY\b|ROOT\b|%|[\w.\-]+\s*[({=:])")


def _looks_like_hlo(lines: list[str]) -> bool:
    """Whether a file that failed to parse was meant as HLO (then its parse error
    is the news) rather than another kind of file given by mistake: its first
    significant line opens a module, a computation or an instruction."""
    for line in lines:
        stripped = line.strip()
        if stripped and not stripped.startswith("//"):
            return _HLO_START.match(stripped) is not None
    return True


def _not_hlo(path: Path, lines: list[str]) -> UsageError:
    first = next((line.strip() for line in lines if line.strip()), "")
    return UsageError(
        f"{path} is not HLO: its first line ({first[:40]}) opens no module, "
        "computation or instruction",
        hint="diff-hlo compares HLO text files (as XLA dumps them), HloModuleProto text, "
        "XLA dump folders or xlacli run folders",
    )


def _as_proto(lines: Iterable[str], filename: str) -> tuple[list[str], HloModule | None]:
    """The lines as a list, and the module when they are an HloModuleProto in text format."""
    lines = lines if isinstance(lines, list) else list(lines)
    return lines, parse_proto_module("".join(lines), filename) if is_proto_text(lines) else None


def _parse_one(lines: Iterable[str], filename: str) -> HloModule:
    lines, proto = _as_proto(lines, filename)
    return proto if proto is not None else _ModuleParser(lines, filename).parse()


def _parse_chunks(lines: Iterable[str], filename: str) -> tuple[HloModule, ...]:
    lines, proto = _as_proto(lines, filename)
    if proto is not None:  # one HloModuleProto in protobuf text format
        return (proto,)
    if not any(map(str.__contains__, lines, repeat("-----"))):  # one module (one C loop)
        return tuple(_parse_chunk(lines, 1, filename)) or _no_module(filename, len(lines))
    modules = []
    chunk: list[str] = []
    first_line = 1
    number = 0
    for number, line in enumerate(lines, start=1):
        # The substring test first: the regex runs on separator lines only.
        if "-----" in line and MODULE_SEPARATOR.match(line):
            modules.extend(_parse_chunk(chunk, first_line, filename))
            chunk, first_line = [], number + 1
        else:
            chunk.append(line)
    modules.extend(_parse_chunk(chunk, first_line, filename))
    return tuple(modules) or _no_module(filename, number)


def _no_module(filename: str, lines: int) -> NoReturn:
    raise HloParseError(filename, max(lines, 1), 1, "an HLO module", "none")


def _parse_chunk(chunk: list[str], first_line: int, filename: str) -> list[HloModule]:
    if not any(line.strip() and not line.lstrip().startswith("//") for line in chunk):
        return []  # nothing but comments between two separators
    return [_ModuleParser(chunk, filename, first_line).parse()]


def _not_utf8(path: Path, data: bytes | None = None) -> HloParseError:
    data = path.read_bytes() if data is None else data
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        return HloParseError(str(path), line, column, "UTF-8 text", "a byte that is not")
    return HloParseError(str(path), 1, 1, "UTF-8 text")


class _ModuleParser:
    """One parse: the statements, and the per-parse caches."""

    def __init__(self, lines: Iterable[str], filename: str, first_line: int = 1):
        self.statements = StatementReader(lines, first_line)
        self.filename = filename
        self.shapes: ShapeCache = {}
        self.metadata: dict[str, Metadata] = {}
        self.stack_frames: StackFrameIndex | None = None
        self.reader = InstructionReader(self.shapes, self._metadata, self._inline_body)
        self.printed = PrintedLineReader(self.shapes, self._metadata)
        self.computation_lines: dict[str, int] = {}
        self.entry_line = 0
        self.inline: list[Computation] = []  # bodies written inline, awaiting their caller

    def parse(self) -> HloModule:
        try:
            return self._module()
        except Malformed as problem:
            raise self._error(self.statements, problem) from None

    def _error(self, reader: StatementReader, problem: Malformed) -> HloParseError:
        found = problem.found
        if found is None:
            found = found_at(reader.text, problem.offset)
        line, column = reader.position(problem.offset)
        return HloParseError(self.filename, line, column, problem.expected, found)

    def _at_end(self, expected: str) -> HloParseError:
        reader = self.statements
        line = reader.last_line + 1 if reader.ended_with_newline else max(reader.last_line, 1)
        return HloParseError(self.filename, line, 1, expected, "end of file")

    def _attempt(
        self,
        reader: StatementReader,
        read: Callable[[str], T],
        text: str,
        failed: Malformed | None = None,
    ) -> T:
        """Read a statement; while it fails at its very end, join the next line and retry.

        ``failed``: the problem of a first read of ``text`` already made.
        """
        problem = failed
        while True:
            if problem is None:
                try:
                    return read(text)
                except Malformed as error:
                    problem = error
            if problem.offset < len(text.rstrip()):
                raise self._error(reader, problem) from None
            more = reader.more()
            if more is None or len(more.rstrip()) <= len(text.rstrip()):
                raise self._error(reader, problem) from None  # nothing more to read
            text, problem = more, None

    def _module(self) -> HloModule:
        statements = self.statements
        text = next(statements, None)
        if text is None:
            raise HloParseError(
                self.filename, 1, 1, "'HloModule' and the module name", "an empty file"
            )
        header: ModuleHeader | None = None
        if text.split(None, 1)[0] in ("HloModule", "HloModule:"):
            header = self._attempt(statements, lambda t: read_header(t, self.shapes), text)
            text = next(statements, None)
        preamble = PreambleBuilder()
        section = ""
        computations: list[Computation] = []
        while text is not None:
            stripped = text.strip()
            if not computations and stripped in SECTION_NAMES:
                section = stripped
            elif section and not computations and stripped[0].isdigit():
                self._attempt(statements, partial(preamble.add, section), text)
            else:
                if not computations:
                    self.stack_frames = preamble.build()
                computations.extend(self._computation(text))
            text = next(statements, None)
        if not computations:
            raise self._at_end("a computation")
        # A computation called but not defined is accepted, as a call to something
        # outside the text (test snippets leave fused computations out): a diff
        # tool reads what it is given, it does not verify it.
        entry = next((c for c in computations if c.is_entry), computations[-1])
        return HloModule(
            name=header.name if header else entry.name,
            computations=tuple(computations),
            attributes=header.attributes if header else EMPTY_ATTRIBUTES,
            entry_computation_layout=header.entry_computation_layout if header else None,
            input_output_alias=header.input_output_alias if header else (),
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

    def _computation(self, head: str) -> list[Computation]:
        """Read a computation from its head; return it after the bodies it wrote inline."""
        statements = self.statements
        signature = self._attempt(statements, lambda t: read_head(t, self.shapes), head)
        head_line, head = statements.line, statements.text
        self._register(signature)
        state = ComputationState(signature.name)
        closing = self._instructions(statements, state)
        if closing is None:
            line, column = locate(head, head_line, head.rindex("{"))
            raise HloParseError(
                self.filename,
                line,
                column,
                f"'}}' to close computation {signature.name}",
                "end of file",
            )
        computation = self._attempt(
            statements, lambda t: self._computation_end(signature, state, t), closing
        )
        inline, self.inline = self.inline, []
        return [*inline, computation]

    def _register(self, signature: Signature) -> None:
        name = signature.name
        if name in self.computation_lines:
            line_seen = self.computation_lines[name]
            problem = Malformed(
                signature.name_offset, f"a computation name not used before (line {line_seen})"
            )
            raise self._error(self.statements, problem)
        if signature.is_entry:
            if self.entry_line:
                problem = Malformed(
                    signature.entry_offset, f"one ENTRY (line {self.entry_line} has it)", "ENTRY"
                )
                raise self._error(self.statements, problem)
            self.entry_line = self.statements.line
        self.computation_lines[name] = self.statements.line

    def _instructions(self, statements: StatementReader, state: ComputationState) -> str | None:
        """Read instructions up to a closing ``}`` (returned) or the end (None)."""
        read = self.reader.read
        read_printed = self.printed.read
        while True:
            unread = statements.unread_lines()
            if unread is not None:  # lines as XLA prints them first, fused (parse speed)
                statements.skip_to(read_printed(state, *unread))
            text = next(statements, None)
            if text is None:
                return None
            if text.lstrip().startswith("}"):
                return text
            try:
                read(state, text, statements.line)
            except Malformed as problem:
                self._attempt(statements, lambda t: read(state, t, statements.line), text, problem)

    def _computation_end(
        self, signature: Signature, state: ComputationState, line: str
    ) -> Computation:
        brace = line.index("}")
        if not state.instructions:
            raise Malformed(brace, f"an instruction in computation {state.name}", "'}'")
        raw = read_attributes(line, brace + 1)
        self._check_pending(state)
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

    def _check_pending(self, state: ComputationState) -> None:
        for reference in state.pending:
            if reference.name not in state.defined:
                self._unresolved(reference)

    def _inline_body(self, line: str, lineno: int, value: str, offset: int, owner: str) -> str:
        """Read ``{ instructions }`` written as an attribute value; return the name it gets."""
        first_line, column = locate(line, lineno, offset + 1)
        body = " " * (column - 1) + value[1:-1]
        statements = StatementReader(body.split("\n"), first_line)
        name = f"{owner}.body"
        while name in self.computation_lines:
            name += "_"
        self.computation_lines[name] = first_line
        state = ComputationState(name)
        closing = self._instructions(statements, state)
        if closing is not None or not state.instructions:
            problem = Malformed(
                statements.text.index("}") if closing else 0,
                f"an instruction in computation {name}",
                "'}'" if closing else "'{}'",
            )
            raise self._error(statements, problem)
        self._check_pending(state)
        self.inline.append(Computation(name=name, instructions=tuple(state.instructions)))
        return name

    def _metadata(self, text: str, offset: int) -> Metadata:
        metadata = self.metadata.get(text)
        if metadata is None:
            fields = read_brace_fields(text, offset)
            metadata = build_metadata(fields, offset, frame_locator(self.stack_frames))
            self.metadata[text] = metadata
        return metadata
