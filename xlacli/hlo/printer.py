"""Printing a module back to HLO text, the way XLA prints it.

Parsing the printed text gives the same module (the round-trip tests hold
the parser and the printer to that), so the printer also serves to
normalize a dump: names keep their ``%``, each instruction is one line.
"""

from __future__ import annotations

from collections.abc import Iterable

from xlacli.hlo.lexer import quote
from xlacli.hlo.model import (
    EMPTY_METADATA,
    Attributes,
    Computation,
    HloModule,
    Instruction,
    Metadata,
    StackFrameIndex,
)

# XLA marks every fifth element of long lists so a reader can count them.
_INDEX_EVERY = 5


def print_module(module: HloModule) -> str:
    """The module as HLO text (a header, the preamble if any, the computations)."""
    parts = [f"HloModule {module.name}{_attribute_text(module.attributes)}", ""]
    if module.stack_frames is not None:
        parts.extend(_preamble_lines(module.stack_frames))
    for computation in module.computations:
        parts.extend(computation_lines(computation))
        parts.append("")
    return "\n".join(parts) + "\n"


def computation_lines(computation: Computation) -> list[str]:
    """The lines of one computation, from its head to its closing brace."""
    head = ("ENTRY " if computation.is_entry else "") + f"%{computation.name}"
    if computation.parameters is not None:
        parameters = ", ".join(f"{name}: {shape}" for name, shape in computation.parameters)
        head += f" ({parameters}) -> {computation.result_shape}"
    lines = [head + " {"]
    lines.extend("  " + instruction_text(instruction) for instruction in computation.instructions)
    lines.append("}" + _attribute_text(computation.attributes))
    return lines


def instruction_text(instruction: Instruction) -> str:
    """One instruction as XLA prints it, without indentation."""
    if instruction.parameter_number is not None:
        inside = str(instruction.parameter_number)
    elif instruction.literal is not None:
        inside = instruction.literal
    else:
        inside = _indexed(f"%{operand}" for operand in instruction.operands)
    root = "ROOT " if instruction.is_root else ""
    text = f"{root}%{instruction.name} = {instruction.shape} {instruction.opcode}({inside})"
    attributes = instruction.attributes
    text += "".join(f", {k}={v}" for k, v in attributes.items() if k != "backend_config")
    if instruction.metadata != EMPTY_METADATA:
        text += f", metadata={metadata_text(instruction.metadata)}"
    if "backend_config" in attributes:
        text += f", backend_config={attributes['backend_config']}"
    return text


def _indexed(items: Iterable[str]) -> str:
    return ", ".join(
        f"/*index={index}*/{item}" if index and index % _INDEX_EVERY == 0 else item
        for index, item in enumerate(items)
    )


def metadata_text(metadata: Metadata) -> str:
    """``{op_type="..." op_name="..." source_file="..." source_line=N ...}``."""
    fields = []
    if metadata.op_type:
        fields.append(f"op_type={quote(metadata.op_type)}")
    if metadata.op_name:
        fields.append(f"op_name={quote(metadata.op_name)}")
    if not metadata.resolved:
        if metadata.source_file:
            fields.append(f"source_file={quote(metadata.source_file)}")
        if metadata.source_line:
            fields.append(f"source_line={metadata.source_line}")
    fields.extend(f"{key}={value}" for key, value in metadata.extra)
    if metadata.stack_frame_id:
        fields.append(f"stack_frame_id={metadata.stack_frame_id}")
    return "{" + " ".join(fields) + "}"


def _attribute_text(attributes: Attributes) -> str:
    return "".join(f", {key}={value}" for key, value in attributes.items())


def _preamble_lines(index: StackFrameIndex) -> list[str]:
    lines: list[str] = []
    for title, names in (("FileNames", index.file_names), ("FunctionNames", index.function_names)):
        lines.append(title)
        lines.extend(f"{entry_id} {quote(name)}" for entry_id, name in names.items())
        lines.append("")
    lines.append("FileLocations")
    for entry_id, where in index.file_locations.items():
        lines.append(
            f"{entry_id} {{file_name_id={where.file_name_id} function_name_id="
            f"{where.function_name_id} line={where.line} end_line={where.end_line} "
            f"column={where.column} end_column={where.end_column}}}"
        )
    lines.append("")
    lines.append("StackFrames")
    for entry_id, frame in index.stack_frames.items():
        lines.append(
            f"{entry_id} {{file_location_id={frame.file_location_id} "
            f"parent_frame_id={frame.parent_frame_id}}}"
        )
    lines.extend(("", ""))
    return lines
