"""The result of a structural diff: changes, patterns, per-module and whole-report views."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

CHANGED = "changed"
ADDED = "added"
REMOVED = "removed"
CHANGE_KINDS = (CHANGED, ADDED, REMOVED)


@dataclass(frozen=True, slots=True)
class SourceRef:
    """The framework op and Python line an instruction came from (its metadata).

    ``inherited`` is true when the instruction had no metadata of its own and
    the nearest user (or caller) with metadata lent it.
    """

    op_type: str
    op_name: str
    file: str
    line: int
    inherited: bool = False
    # The library line the metadata names, when file and line were walked out of
    # the libraries to the user's call (parse/stack_walk.py); "" otherwise.
    library: str = ""

    @property
    def location(self) -> str:
        """``file:line``, or "" when the metadata names no file."""
        if not self.file:
            return ""
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True, slots=True)
class InstructionRef:
    """One side of a change: where the instruction is and what it is."""

    computation: str
    name: str
    opcode: str
    shape: str
    line: int


@dataclass(frozen=True, slots=True)
class Change:
    """One instruction that is changed, added (right only) or removed (left only).

    ``reasons`` of a changed instruction, in this order: ``opcode``, ``shape``
    or ``layout``, ``constant``, ``attributes``, ``operands`` (rewired),
    ``calls`` (a called computation differs); ``details`` say how.
    """

    kind: str
    left: InstructionRef | None
    right: InstructionRef | None
    reasons: tuple[str, ...] = ()
    details: tuple[str, ...] = ()
    source: SourceRef | None = None

    @property
    def opcode(self) -> str:
        """The opcode now (the left one for a removed instruction)."""
        side = self.right or self.left
        assert side is not None
        return side.opcode

    @property
    def opcode_text(self) -> str:
        """``maximum → logistic`` when the opcode changed, else the opcode."""
        if self.left and self.right and self.left.opcode != self.right.opcode:
            return f"{self.left.opcode} → {self.right.opcode}"
        return self.opcode


@dataclass(frozen=True, slots=True)
class Pattern:
    """Changes that are the same but for where they are (one per layer, say)."""

    kind: str
    opcode: str
    reasons: tuple[str, ...]
    details: tuple[str, ...]
    source: SourceRef | None
    count: int
    examples: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ModuleSide:
    """One module of a compared pair."""

    file: str
    name: str
    instructions: int
    opcodes: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class ModuleDiff:
    """The diff of one pair of modules."""

    label: str
    left: ModuleSide
    right: ModuleSide
    unchanged: int
    changes: tuple[Change, ...]
    patterns: tuple[Pattern, ...]
    header_changes: tuple[str, ...] = ()
    paired_by: str = ""  # how the two modules were paired ("" for two files)

    def count(self, kind: str) -> int:
        """How many changes of ``kind`` (changed, added or removed)."""
        return sum(1 for change in self.changes if change.kind == kind)

    @property
    def identical(self) -> bool:
        return not self.changes and not self.header_changes


@dataclass(frozen=True, slots=True)
class DiffReport:
    """All compared pairs of a diff-hlo run, and the modules found on one side only.

    Attributes:
        left: The left input path as given.
        right: The right input path as given.
        inputs: ``files``, ``xla-dumps`` or ``run-folders``.
        stage: ``pre`` or ``post`` for folders, None for two files.
        modules: One diff per paired module.
        left_only: Labels of modules found only on the left.
        right_only: Labels of modules found only on the right.
    """

    left: str
    right: str
    inputs: str
    stage: str | None
    modules: tuple[ModuleDiff, ...]
    left_only: tuple[str, ...] = ()
    right_only: tuple[str, ...] = ()

    @property
    def identical(self) -> bool:
        return (
            all(module.identical for module in self.modules)
            and not self.left_only
            and not self.right_only
        )

    def summary(self) -> dict[str, int]:
        """Counts over all pairs: unchanged, changed, added, removed."""
        counts = {"unchanged": sum(module.unchanged for module in self.modules)}
        for kind in CHANGE_KINDS:
            counts[kind] = sum(module.count(kind) for module in self.modules)
        return counts
