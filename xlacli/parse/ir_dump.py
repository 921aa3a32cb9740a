"""The file torch_xla writes for ``XLA_SAVE_TENSORS_FILE`` (text format).

One block per graph sync, cached or not::

    [ScheduleSyncTensorsGraph]
    TensorsGraphInfo:
      sync (/site-packages/torch_xla/torch_xla.py:87)
      <module> (/tmp/m.py:13)

    Root Hashes: (4a2305d38175456f635bec1afa1ded9c)

    ## BEGIN_GRAPH
    IR {
      %0 = f32[4]{0} xla::device_data(), location=convert@module.py:1357, xla_shape=f32[4]{0}
      ...
    }

    Graph Hash: cca4eee73418f834388a01c55649bc03

    ## END_GRAPH

xlacli's child writes the same blocks itself, once per new graph
(``child/graph_ir.py``), with ``Compile Index: N`` (the N-th compile of the
run, counted from 0) in place of torch_xla's hashes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from xlacli.parse.frames import Frame, parse_frame

_HEADER = re.compile(r"^\[(\w+)\]\s*$")
# The line that closes a block's IR: the child writes it last (``child/graph_ir.py``),
# and a block read ahead counts as whole once it is there (``assemble/dump_prefetch.py``).
IR_BLOCK_END = "## END_GRAPH"
_ROOT_HASHES = re.compile(r"^Root Hashes: \((.*)\)\s*$")
_GRAPH_HASH = re.compile(r"^Graph Hash: ([0-9a-f]+)\s*$")
_COMPILE_INDEX = re.compile(r"^Compile Index: (\d+)\s*$")
# %7 = f32[4,32]{1,0} aten::addmm(%6, %5, %3), location=forward@linear.py:134, ...
_NODE = re.compile(
    r"^\s*%(?P<id>\d+) = (?P<shape>\(.*?\)|\S+) (?P<op>[\w:.]+)\((?P<operands>[^)]*)\)(?P<rest>.*)$"
)
_LOCATION = re.compile(r"location=(?P<function>[^@,]*)@(?P<file>[^:,]+):(?P<line>\d+)")
_ROOT = re.compile(r"ROOT=(\d+)")
_SCOPE = re.compile(r"scope=([^,]*)")
_ATTRIBUTE = re.compile(r"(\w+)=")
_DELIMITERS = re.compile(r"[()\[\]{},]")
# The debug attributes alone, none holding a bracket (else the split decides).
_DEBUG_ATTRIBUTE = (
    r"(?:(?:location|scope)=[^,()\[\]{}]*|ROOT=\d+"
    r"|xla_shape=[^,()\[\]{}]*(?:\[[^\]\[]*\])?(?:\{[^{}]*\})?)"
)
_ONLY_DEBUG_ATTRIBUTES = re.compile(rf"(?:,\s*)?{_DEBUG_ATTRIBUTE}(?:,\s*{_DEBUG_ATTRIBUTE})*\s*")


@dataclass(frozen=True)
class IrNode:
    """One node of torch_xla's lazy IR."""

    id: int
    shape: str
    op: str
    operands: tuple[str, ...]  # "%6", or "%3.1" for the second output of a node
    location: Frame | None  # innermost Python frame (file is a base name)
    attributes: str  # the rest of the line minus location, shape echo and ROOT
    root_index: int | None
    # The IR scope the node was traced under (``scope=...``): no part of the graph,
    # so no part of a comparison either.
    scope: str = field(default="", compare=False)

    @property
    def is_device_data(self) -> bool:
        return self.op == "xla::device_data"


@dataclass(frozen=True)
class IrGraph:
    """The IR of one sync, as dumped by torch_xla."""

    kind: str  # "ScheduleSyncTensorsGraph"
    frames: tuple[Frame, ...]  # innermost first
    root_hashes: tuple[str, ...]
    graph_hash: str | None
    ir_text: str  # the "IR { ... }" block, verbatim
    nodes: tuple[IrNode, ...]
    compile_index: int | None = None  # xlacli's blocks: the compile this graph is

    @property
    def roots(self) -> int:
        """How many outputs the graph has (nodes marked ``ROOT=``)."""
        return sum(1 for node in self.nodes if node.root_index is not None)


def operand_id(operand: str) -> int:
    """The node id an operand names: ``%6`` -> 6, ``%3.1`` (second output) -> 3."""
    return int(operand.lstrip("%").split(".")[0])


def parse_ir_dump(text: str, known: Mapping[str, IrGraph] | None = None) -> list[IrGraph]:
    """Parse every graph block of an ``XLA_SAVE_TENSORS_FILE`` text file.

    A block cut short (the process died while writing) is kept with what it
    has; a file that ends mid-node loses only that node. ``known``: blocks
    parsed ahead (``parse_ir_blocks``), by ``ir_block_key``.
    """
    # A cached graph's syncs repeat its IR, but for the scope counters of a few
    # nodes: each distinct line is parsed once.
    parsed: dict[str, IrNode | None] = {}
    graphs = []
    for kind, lines in _split_blocks(text.splitlines()):
        graph = known.get(ir_block_key(kind, lines)) if known else None
        graphs.append(graph if graph is not None else _parse_block(kind, lines, parsed))
    return graphs


def parse_ir_blocks(text: str) -> dict[str, IrGraph]:
    """The whole blocks of a piece of the dump, by ``ir_block_key``: read ahead
    while the child still writes the file (``assemble/dump_prefetch.py``)."""
    parsed: dict[str, IrNode | None] = {}
    return {
        ir_block_key(kind, lines): _parse_block(kind, lines, parsed)
        for kind, lines in _split_blocks(text.splitlines())
    }


def ir_block_key(kind: str, lines: list[str]) -> str:
    """A block's identity: its header and its lines, but the blank ones after it
    (read whole, the file has them before the next block; read ahead, not yet)."""
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return "\n".join((kind, *lines[:end]))


def _split_blocks(lines: list[str]) -> Iterator[tuple[str, list[str]]]:
    kind: str | None = None
    block: list[str] = []
    for line in lines:
        header = _HEADER.match(line)
        if header:
            if kind is not None:
                yield kind, block
            kind, block = header.group(1), []
        elif kind is not None:
            block.append(line)
    if kind is not None:
        yield kind, block


def _parse_block(kind: str, lines: list[str], parsed: dict[str, IrNode | None]) -> IrGraph:
    frames: list[Frame] = []
    root_hashes: tuple[str, ...] = ()
    graph_hash = None
    compile_index = None
    ir_lines: list[str] = []
    section = "info"
    for line in lines:
        if section == "ir":
            ir_lines.append(line)
            if line.startswith("}"):
                section = "after"
            continue
        if line.startswith("IR {"):
            section = "ir"
            ir_lines.append(line)
        elif (match := _ROOT_HASHES.match(line)) is not None:
            root_hashes = tuple(h.strip() for h in match.group(1).split(",") if h.strip())
        elif (match := _GRAPH_HASH.match(line)) is not None:
            graph_hash = match.group(1)
        elif (match := _COMPILE_INDEX.match(line)) is not None:
            compile_index = int(match.group(1))
        elif section == "info" and (frame := parse_frame(line)) is not None:
            frames.append(frame)
    nodes = tuple(node for line in ir_lines if (node := _parse_once(line, parsed)) is not None)
    ir_text = "\n".join(ir_lines)
    return IrGraph(kind, tuple(frames), root_hashes, graph_hash, ir_text, nodes, compile_index)


def _parse_once(line: str, parsed: dict[str, IrNode | None]) -> IrNode | None:
    if line in parsed:
        return parsed[line]
    node = parsed[line] = parse_ir_node(line)
    return node


def parse_ir_node(line: str) -> IrNode | None:
    """Parse one ``%N = shape op(operands), attrs`` line; None for other lines."""
    match = _NODE.match(line)
    if match is None:
        return None
    rest = match["rest"]
    location = None
    if (loc := _LOCATION.search(rest)) is not None:
        location = Frame(loc["function"], loc["file"], int(loc["line"]))
    root = _ROOT.search(rest)
    scope = _SCOPE.search(rest)
    operands = tuple(o.strip() for o in match["operands"].split(",") if o.strip())
    return IrNode(
        id=int(match["id"]),
        shape=match["shape"],
        op=match["op"],
        operands=operands,
        location=location,
        attributes=_strip_known_attributes(rest),
        root_index=int(root.group(1)) if root else None,
        scope=scope.group(1) if scope else "",
    )


def _strip_known_attributes(rest: str) -> str:
    """Keep the attributes that describe the op, drop the debug ones."""
    if _ONLY_DEBUG_ATTRIBUTES.fullmatch(rest):
        return ""  # most nodes: nothing but a location and a shape
    kept = []
    for part in _split_top_level(rest.lstrip(", ")):
        name = _ATTRIBUTE.match(part)
        if name and name.group(1) in ("location", "xla_shape", "ROOT", "scope"):
            continue
        if part:
            kept.append(part)
    return ", ".join(kept)


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside parentheses and brackets."""
    parts, depth, start = [], 0, 0
    # Only the brackets and commas are looked at (a node's attributes are
    # mostly shape text: a walk over every character cost 1.7 s a 24-layer
    # decoder's dump).
    for match in _DELIMITERS.finditer(text):
        char = match.group()
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0:
            index = match.start()
            parts.append(text[start:index].strip())
            start = index + 1
    parts.append(text[start:].strip())
    return parts
