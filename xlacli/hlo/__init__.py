"""HLO text: a typed model, its parser and printer, and a structural diff.

Nothing here imports torch or torch_xla: ``xlacli diff-hlo`` works on saved
text alone.
"""

from __future__ import annotations

from xlacli.hlo.model import (
    ArrayShape,
    Computation,
    HloModule,
    Instruction,
    Layout,
    Metadata,
    Shape,
    TupleShape,
)
from xlacli.hlo.parser import (
    parse_hlo,
    parse_hlo_bytes,
    parse_hlo_file,
    parse_hlo_file_modules,
    parse_hlo_modules,
)
from xlacli.hlo.printer import print_module

__all__ = [
    "ArrayShape",
    "Computation",
    "HloModule",
    "Instruction",
    "Layout",
    "Metadata",
    "Shape",
    "TupleShape",
    "parse_hlo",
    "parse_hlo_bytes",
    "parse_hlo_file",
    "parse_hlo_file_modules",
    "parse_hlo_modules",
    "print_module",
]
