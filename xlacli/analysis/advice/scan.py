"""Scan advisor: N structurally identical layers called in a loop.

A decoder stack is one module call inside a ``for`` loop over an
``nn.ModuleList``; XLA compiles every layer's copy of the same ops.
``torch_xla.experimental.scan_layers`` compiles one layer's body inside a loop.

Every op's Python stack passes through the loop's call line (``hidden =
layer(hidden)``) followed by ``nn.Module``'s call plumbing. Under that call site
each op has a key: its op, shape and the frames between the call and the op.
The stacks cannot tell one layer's op from another's (all layers share the call
line), but N identical layers make every key occur a multiple of N times; the
most common count is N, and keys whose count N does not divide belong to layers
that differ. This ignores the order of instructions, which XLA's lowering
interleaves (a layer's weight transposes come before earlier layers' ops).

Identical layers are reported whatever their share, advised or with the reasons
not (``scan_verdict.py``); a training graph's optimizer update is shown apart
(``optimizer_update.py``): scanning keeps it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from xlacli.analysis.advice.compile_cost import backward_scope
from xlacli.analysis.advice.inputs import AdviceInputs, GraphArtifacts
from xlacli.analysis.advice.scan_cost import DATA_OPS
from xlacli.analysis.advice.scan_pricing import price_stacks
from xlacli.analysis.advice.scan_verdict import MIN_SHARE
from xlacli.analysis.recompiles.loop_source import (
    SourceReader,
    calls_loop_target,
    enclosing_class,
    loop_iterable,
)
from xlacli.parse.frames import Frame
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.paths import display_location
from xlacli.report.advice import ScanAdvice

_CALL_PLUMBING = ("_call_impl", "_wrapped_call_impl")
BLOCKERS = (
    "every layer must be the same class with parameters of the same shapes"
    " (scan_layers stacks them)",
    "a layer's forward must take the hidden state and return it (other arguments would be"
    " passed unchanged to every layer)",
    "no Python state may change inside a layer (counters, caches, an `if` on a tensor's"
    " value): the body is traced once",
)


@dataclass(frozen=True)
class _Site:
    """Ops whose stacks pass through one module call made inside a loop."""

    outer: tuple[Frame, ...]  # the call frame and everything outside it
    keys: Counter[tuple[str, str, tuple[tuple[str, int], ...]]]
    layer_frames: Counter[Frame]  # the layer's own frame of each op
    lines: set[tuple[str, int]] = field(default_factory=set)  # every frame inside a layer


def advise_scan(inputs: AdviceInputs) -> tuple[ScanAdvice, ...]:
    """One advice per graph and loop of identical layers (or of layers that differ,
    making a large share of the graph), priced and judged (``scan_pricing.py``)."""
    return price_stacks(
        [(artifacts, scan_candidates(artifacts, inputs.read_source)) for artifacts in inputs.graphs]
    )


def scan_candidates(
    artifacts: GraphArtifacts, read_source: SourceReader
) -> list[tuple[ScanAdvice, int]]:
    """The outermost looped module calls of a graph that repeat (identical layers,
    or layers that differ and make a large share of it), each with its layers'
    computations (data ops left out)."""
    stacks = artifacts.stacks
    sites = _looped_sites(stacks, read_source)
    found: list[tuple[_Site, ScanAdvice]] = []
    for site in sorted(sites.values(), key=lambda s: len(s.outer)):
        if any(_nested(site.outer, chosen.outer) for chosen, _ in found):
            continue
        advice = _advice(artifacts, site, len(stacks), read_source)
        if advice is not None and not _repeated_by_data(stacks, site, advice.layers, read_source):
            found.append((site, advice))
    return [
        (advice, sum(n for key, n in site.keys.items() if key[0] not in DATA_OPS))
        for site, advice in found
    ]


def _looped_sites(
    stacks: Sequence[StackedOp], read_source: SourceReader
) -> dict[tuple[Frame, ...], _Site]:
    sites: dict[tuple[Frame, ...], _Site] = {}
    looped: dict[Frame, bool] = {}  # a call frame is in a loop: asked once per frame
    for op in stacks:
        stack = op.stack
        if backward_scope(op.op_name) is not None:
            continue  # the backward pass: counted at the layer lines it differentiates
        for index in range(2, len(stack)):
            if not _is_plumbing(stack[index - 1]):
                continue
            call = stack[index]
            if call not in looped:
                looped[call] = not _is_plumbing(call) and calls_loop_target(
                    read_source, call.file, call.line
                )
            if not looped[call]:
                continue
            outer = stack[index:]
            inner = tuple(f for f in stack[:index] if not _is_plumbing(f))
            site = sites.setdefault(outer, _Site(outer, Counter(), Counter()))
            site.keys[(op.op_type, op.shape, tuple((f.file, f.line) for f in inner))] += 1
            site.lines.update((f.file, f.line) for f in inner)
            if inner:
                site.layer_frames[inner[-1]] += 1
    _add_backward(stacks, sites)
    return sites


def _repeated_by_data(
    stacks: Sequence[StackedOp], site: _Site, layers: int, read_source: SourceReader
) -> bool:
    """Whether the site's repeats come from a loop over data around it: a loop that
    calls the model with each batch and never syncs puts every batch's ops in one
    graph, the ops around the layers repeated as often as theirs (an evaluation
    loop's ``.mean()`` of each batch's output); a loop over layers repeats only them."""
    for index in range(1, len(site.outer)):
        frame = site.outer[index]
        if _is_plumbing(frame) or not loop_iterable(read_source, frame.file, frame.line):
            continue
        around = site.outer[index:]
        keys: Counter[tuple[str, str, tuple[Frame, ...]]] = Counter()
        for op in stacks:
            stack = op.stack
            if op.op_type in DATA_OPS or stack[-len(around) :] != around:
                continue
            if len(stack) >= len(site.outer) and stack[-len(site.outer) :] == site.outer:
                continue  # the layers' own
            keys[(op.op_type, op.shape, stack[: -len(around)])] += 1
        if keys and all(count % layers == 0 for count in keys.values()):
            return True
    return False


def _add_backward(stacks: Sequence[StackedOp], sites: dict[tuple[Frame, ...], _Site]) -> None:
    """A training graph's backward ops into the sites whose layers they differentiate:
    each names its forward line in its IR scope (``child/backward_sites.py``), and N
    identical layers' backward repeats N times as their forward does."""
    for op in stacks:
        scoped = backward_scope(op.op_name)
        if scoped is None:
            continue
        file, _, line = scoped.rpartition(":")
        where = (file, int(line))
        for site in sites.values():
            if where in site.lines:
                kind = op.op_type if op.op_type in DATA_OPS else f"backward {op.op_type}"
                site.keys[(kind, op.shape, (where,))] += 1


def _advice(
    artifacts: GraphArtifacts, site: _Site, graph_ops: int, read_source: SourceReader
) -> ScanAdvice | None:
    counts = Counter(site.keys.values())
    layers = max(counts, key=lambda count: (counts[count], count))
    block = sum(site.keys.values())
    share = block / graph_ops if graph_ops else 0.0
    # Data ops may be shared between layers (torch_xla reuses one device copy of
    # a Python scalar), so only computations have to repeat N times.
    odd = [key for key, count in site.keys.items() if count % layers and key[0] not in DATA_OPS]
    identical = not odd
    if layers < 2 or (share < MIN_SHARE and not identical):
        return None  # identical layers are reported at any share, with why not
    call = site.outer[0]
    time_s = artifacts.graph.compile_time_s / max(1, artifacts.graph.compilations)
    layer_frame = site.layer_frames.most_common(1)[0][0] if site.layer_frames else None
    iterable = loop_iterable(read_source, call.file, call.line)
    return ScanAdvice(
        graph_hash=artifacts.graph.hash,
        call_site=call.location,
        module_list=iterable,
        layer_class=enclosing_class(read_source, layer_frame) if layer_frame else None,
        layers=layers,
        identical=identical,
        block_instructions=block,
        share=share,
        graph_compile_time_s=time_s,
        predicted_compile_time_s=time_s,  # priced once every graph is seen
        predicted_saving_time_s=0.0,
        pays=False,
        lines=tuple(frame.location for frame, _ in site.layer_frames.most_common(5)),
        differing=tuple(_describe(key, site.keys[key]) for key in odd[:5]),
        blockers=BLOCKERS if identical else (_differ_note(layers, odd), *BLOCKERS),
        code=_code(iterable, call) if identical else "",
    )


def _describe(key: tuple[str, str, tuple[tuple[str, int], ...]], count: int) -> str:
    op, _shape, frames = key
    # As users read it (a library's file from its package), never the venv's absolute path.
    where = display_location(f"{frames[-1][0]}:{frames[-1][1]}") if frames else "?"
    return f"{op.replace('__', '::', 1)} at {where} ({count}x)"


def _differ_note(layers: int, odd: list) -> str:
    return (
        f"the {layers} layers are not identical: {len(odd)} op(s) appear in only some of"
        " them (a layer of another width, activation or dropout); make them the same"
        " or scan only the identical run"
    )


def _code(iterable: str | None, call: Frame) -> str:
    layers = iterable or "self.layers"
    return (
        "from torch_xla.experimental.scan_layers import scan_layers\n\n"
        f"# {Path(call.file).name}:{call.line}: instead of the loop over {layers}\n"
        f"hidden = scan_layers({layers}, hidden)"
    )


def _nested(inner: tuple[Frame, ...], outer: tuple[Frame, ...]) -> bool:
    return len(inner) > len(outer) and inner[len(inner) - len(outer) :] == outer


def _is_plumbing(frame: Frame) -> bool:
    return frame.function in _CALL_PLUMBING and frame.file.endswith("torch/nn/modules/module.py")
