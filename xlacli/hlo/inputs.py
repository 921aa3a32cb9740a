"""What diff-hlo compares: two HLO files, two XLA dump folders, or two xlacli run folders.

Two files make one pair. Dump folders (``--xla_dump_to``) pair their modules
first by structure (identical programs under new names), then by name, then
by name without its trailing number, and last by likeness: torch_xla names
every graph ``SyncTensorsGraph.N`` with N from the graph's size, so a changed
graph gets a new name and is found by its opcode counts instead. Run folders
pair their graphs by torch_xla's graph hash, then by the Python line that
triggered them. Whatever finds no partner is reported on one side only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, TypeVar

from xlacli.errors import UsageError
from xlacli.hlo.changes import DiffReport
from xlacli.hlo.diff import Walks, diff_modules
from xlacli.hlo.fingerprint import module_fingerprint
from xlacli.hlo.model import HloModule
from xlacli.hlo.parser import parse_hlo_file, parse_hlo_file_modules
from xlacli.parse.frames import current_code_roots
from xlacli.parse.stack_walk import DeferredWalk, file_walk, text_walk
from xlacli.parse.xla_dump import list_dumped_modules
from xlacli.paths import near_path, split_location

if TYPE_CHECKING:
    from xlacli.report.run_report import GraphRecord

T = TypeVar("T")
STAGES = ("pre", "post")
_TRAILING_NUMBER = re.compile(r"\.\d+$")
# The file of each stage: a key of a run folder's graph files, a role of a dump file.
_STAGE_FILES = {"pre": "hlo_before", "post": "hlo_after"}
# The protobufs that keep each stage's Python stacks, likewise.
_STAGE_STACKS = {"pre": "hlo_stacks", "post": "hlo_after_stacks"}
_SHORT_HASH = 8
_MIN_LIKENESS = 0.5  # shared opcode counts over the larger module's instructions


@dataclass(frozen=True, slots=True)
class ModulePair:
    """Two modules to compare, and the name the report gives the pair ("": their names)."""

    left: HloModule
    right: HloModule
    label: str = ""
    paired_by: str = ""  # how the pair was found: "graph hash", "site and order", "name"...
    walks: Walks = (None, None)  # each side's walk to the user's lines, from its stacks


@dataclass(frozen=True, slots=True)
class PairedInputs:
    """The pairs found in two inputs, and what is on one side only."""

    inputs: str
    stage: str | None
    pairs: tuple[ModulePair, ...]
    left_only: tuple[str, ...] = ()
    right_only: tuple[str, ...] = ()


def diff_paths(left: Path, right: Path, stage: str = "post") -> DiffReport:
    """Pair two inputs and diff every pair.

    Args:
        left: An HLO file, an XLA dump folder or an xlacli run folder.
        right: The same kind of input as ``left``.
        stage: For folders, ``pre`` or ``post`` (XLA's optimizations).

    Raises:
        UsageError: Missing paths, a file beside a folder, folders of two
            kinds or with nothing to compare.
        HloParseError: An HLO file is malformed.
    """
    paired = pair_inputs(left, right, stage)
    return DiffReport(
        left=str(left),
        right=str(right),
        inputs=paired.inputs,
        stage=paired.stage,
        modules=tuple(
            diff_modules(pair.left, pair.right, pair.label, pair.paired_by, pair.walks)
            for pair in paired.pairs
        ),
        left_only=paired.left_only,
        right_only=paired.right_only,
    )


def pair_inputs(left: Path, right: Path, stage: str = "post") -> PairedInputs:
    """Read two inputs of the same kind and pair their modules (see the module docstring)."""
    if stage not in STAGES:
        raise UsageError(f"unknown stage {stage!r}; expected pre or post")
    for path in (left, right):
        if not path.exists():
            near = near_path(path)
            raise UsageError(
                f"{path}: no such file or folder" + (f" (did you mean {near}?)" if near else "")
            )
    if left.is_dir() != right.is_dir():
        folder, file = (left, right) if left.is_dir() else (right, left)
        raise UsageError(
            f"{folder} is a folder but {file} is a file",
            hint="give two HLO files, two XLA dump folders or two xlacli run folders",
        )
    if not left.is_dir():
        return _pair_files(left, right)
    kinds = {_folder_kind(left), _folder_kind(right)}
    if len(kinds) == 2:
        raise UsageError(f"{left} and {right} are folders of two kinds (a run folder and a dump)")
    if kinds == {"run-folders"}:
        return _pair_run_folders(left, right, stage)
    return _pair_dump_folders(left, right, stage)


def _pair_files(left: Path, right: Path) -> PairedInputs:
    """Two files of one module each make one pair; files of several (``// -----``) pair by name."""
    left_modules = list(parse_hlo_file_modules(left))
    right_modules = list(parse_hlo_file_modules(right))
    if len(left_modules) == len(right_modules) == 1:
        walks = (_text_walk(left), _text_walk(right))
        return PairedInputs(
            "files", None, (ModulePair(left_modules[0], right_modules[0], walks=walks),)
        )
    pairs = [
        ModulePair(module, partner, paired_by="name")
        for module, partner in _pair_by(left_modules, right_modules, lambda m: m.name)
    ]
    return _modules_paired("files", None, pairs, left_modules, right_modules)


def _modules_paired(
    inputs: str,
    stage: str | None,
    pairs: list[ModulePair],
    left_only: list[HloModule],
    right_only: list[HloModule],
) -> PairedInputs:
    return PairedInputs(
        inputs,
        stage,
        tuple(pairs),
        tuple(module.name for module in left_only),
        tuple(module.name for module in right_only),
    )


def _folder_kind(folder: Path) -> str:
    # Imported here: the run report's model costs start-up that a diff of two files never needs.
    from xlacli.report.run_report import REPORT_FILE

    if (folder / REPORT_FILE).is_file():
        return "run-folders"
    if list_dumped_modules(folder):
        return "xla-dumps"
    raise UsageError(
        f"{folder} holds neither report.json (an xlacli run folder) nor "
        "module_*_optimizations.txt files (an --xla_dump_to folder)",
    )


def _dump_modules(folder: Path, stage: str, walks: dict[int, DeferredWalk]) -> list[HloModule]:
    """The modules of a dump folder at one stage, in compile order; each one's
    walk to the user's lines goes into ``walks`` by the module's id."""
    role = _STAGE_FILES[stage]
    modules = []
    for dumped in list_dumped_modules(folder):
        if role in dumped.files:
            module = parse_hlo_file(dumped.files[role])
            walks[id(module)] = _stage_walk(folder, dumped.files, stage)
            modules.append(module)
    return modules


def _pair_dump_folders(left: Path, right: Path, stage: str) -> PairedInputs:
    walks: dict[int, DeferredWalk] = {}
    left_modules, right_modules = (
        _dump_modules(left, stage, walks),
        _dump_modules(right, stage, walks),
    )
    if not left_modules and not right_modules:
        raise UsageError(
            f"{left} and {right} hold no {stage}-optimization HLO text",
            hint="dump with XLA_FLAGS='--xla_dump_to=DIR --xla_dump_hlo_as_text'",
        )
    fingerprints = {id(m): module_fingerprint(m) for m in (*left_modules, *right_modules)}
    keys: list[Callable[[HloModule], object]] = [
        lambda module: fingerprints[id(module)],
        lambda module: module.name,
        lambda module: _TRAILING_NUMBER.sub("", module.name),
    ]
    matched = [pair for key in keys for pair in _pair_by(left_modules, right_modules, key)]
    matched += _pair_alike(left_modules, right_modules)
    pairs = [
        ModulePair(module, partner, walks=(walks[id(module)], walks[id(partner)]))
        for module, partner in matched
    ]
    return _modules_paired("xla-dumps", stage, pairs, left_modules, right_modules)


def _pair_alike(left: list[HloModule], right: list[HloModule]) -> list[tuple[HloModule, HloModule]]:
    """Pair what is left by opcode counts: the most alike first, if at least half alike."""
    counts = {id(module): module.opcode_counts() for module in (*left, *right)}
    candidates = []
    for i, module in enumerate(left):
        for j, partner in enumerate(right):
            shared = sum((counts[id(module)] & counts[id(partner)]).values())
            likeness = shared / max(module.instruction_count, partner.instruction_count, 1)
            if likeness >= _MIN_LIKENESS:
                candidates.append((-likeness, i, j))
    return _take_pairs(left, right, [(i, j) for _, i, j in sorted(candidates)])


def run_graph_files(run: Path, prefixes: tuple[str, str], stage: str) -> tuple[Path, Path]:
    """The HLO files of two graphs of one run folder, named by hash prefixes
    (``xlacli diff-hlo RUN 80125ddd 87b9fc7b``).

    Raises:
        UsageError: not a run folder, or a prefix naming no graph or several.
    """
    from xlacli.report.run_report import load_report

    graphs = load_report(run).graphs
    file_key = _STAGE_FILES[stage]
    found = []
    for prefix in prefixes:
        matches = [graph for graph in graphs if graph.hash.startswith(prefix.lower())]
        hashes = ", ".join(graph.hash[:_SHORT_HASH] for graph in graphs) or "none"
        if len(matches) != 1:
            how = "no graph" if not matches else f"{len(matches)} graphs"
            raise UsageError(
                f"{prefix} names {how} of {run} (its graphs: {hashes})",
                hint="give the first characters of a graph hash, as the report's table shows",
            )
        if file_key not in matches[0].files:
            raise UsageError(f"graph {prefix} of {run} has no {stage}-optimization HLO saved")
        found.append(run / matches[0].files[file_key])
    return found[0], found[1]


def _pair_run_folders(left: Path, right: Path, stage: str) -> PairedInputs:
    from xlacli.report.run_report import load_report

    left_graphs, right_graphs = list(load_report(left).graphs), list(load_report(right).graphs)
    file_key = _STAGE_FILES[stage]
    if not any(file_key in graph.files for graph in (*left_graphs, *right_graphs)):
        raise UsageError(
            f"{left} and {right} have no graph with {stage}-optimization HLO to compare",
            hint="compile with a recent xlacli, which saves each graph's HLO in the run folder",
        )
    left_only: list[str] = []
    right_only: list[str] = []
    # A training step has several graphs at one site (step 0, then step 1 with
    # the optimizer state): like ``check``, key them by site and order there.
    site_order = {**_site_order(left_graphs), **_site_order(right_graphs)}
    keyed: list[tuple[str, Callable[[GraphRecord], object]]] = [
        ("graph hash", _graph_hash),
        ("site and order", lambda graph: site_order[id(graph)]),
    ]
    readable = []
    for side, graphs, only in ((left, left_graphs, left_only), (right, right_graphs, right_only)):
        for graph in graphs:
            if file_key in graph.files:
                readable.append((side, graph))
            else:
                only.append(_graph_label(graph) + f" (no {stage}-optimization HLO)")
    modules = {id(graph): parse_hlo_file(side / graph.files[file_key]) for side, graph in readable}
    walks = {
        id(modules[id(graph)]): _stage_walk(side, graph.files, stage) for side, graph in readable
    }
    # Only graphs with HLO take part (their site order was counted over all
    # graphs above, as check counts them): a graph without HLO paired by hash
    # would take its partner out of both the pairs and the unpaired lists.
    left_graphs = [graph for graph in left_graphs if id(graph) in modules]
    right_graphs = [graph for graph in right_graphs if id(graph) in modules]
    records = [
        (how, *pair) for how, key in keyed for pair in _pair_by(left_graphs, right_graphs, key)
    ]
    pairs = [
        ModulePair(
            modules[id(left)],
            modules[id(right)],
            _graph_label(right),
            how,
            (walks[id(modules[id(left)])], walks[id(modules[id(right)])]),
        )
        for how, left, right in records
    ]
    # What is left (another model file, a changed site) pairs by likeness.
    free_left = [modules[id(g)] for g in left_graphs]
    free_right = [modules[id(g)] for g in right_graphs]
    labels = {id(modules[id(g)]): _graph_label(g) for g in (*left_graphs, *right_graphs)}
    for module, partner in _pair_alike(free_left, free_right):
        pair_walks = (walks[id(module)], walks[id(partner)])
        pairs.append(
            ModulePair(module, partner, labels[id(partner)], "structural likeness", pair_walks)
        )
    left_only += [labels[id(module)] for module in free_left]
    right_only += [labels[id(module)] for module in free_right]
    return PairedInputs("run-folders", stage, tuple(pairs), tuple(left_only), tuple(right_only))


def _site_order(graphs: list[GraphRecord]) -> dict[int, object]:
    """Each graph's (file name, line, n) for the n-th graph at its site; None with no site.

    The file's folder is left out: two copies of a model in two folders are
    the same model (``check`` keys graphs relative to its baseline likewise).
    """
    seen: Counter[tuple[str, int | None]] = Counter()
    keys: dict[int, object] = {}
    for graph in graphs:
        if graph.site:
            file, line = split_location(graph.site)
            site = (PurePath(file).name, line)
            keys[id(graph)] = (*site, seen[site])
            seen[site] += 1
        else:
            keys[id(graph)] = None
    return keys


def _graph_hash(graph: GraphRecord) -> object:
    return graph.hash


def _graph_label(graph: GraphRecord) -> str:
    short = graph.hash[:_SHORT_HASH]
    return f"{graph.site} ({short})" if graph.site else short


def _pair_by(left: list[T], right: list[T], key: Callable[[T], object]) -> list[tuple[T, T]]:
    """Pair the items whose key is unique on both sides (a None key pairs nothing)."""
    left_keys = [key(item) for item in left]
    right_keys = [key(item) for item in right]
    left_counts, right_counts = Counter(left_keys), Counter(right_keys)
    return _take_pairs(
        left,
        right,
        [
            (index, right_keys.index(item_key))
            for index, item_key in enumerate(left_keys)
            if item_key is not None and left_counts[item_key] == 1 and right_counts[item_key] == 1
        ],
    )


def _take_pairs(
    left: list[T], right: list[T], candidates: list[tuple[int, int]]
) -> list[tuple[T, T]]:
    """Take candidate index pairs in order while both items are free; remove the taken items."""
    pairs, taken_left, taken_right = [], set(), set()
    for i, j in candidates:
        if i not in taken_left and j not in taken_right:
            pairs.append((left[i], right[j]))
            taken_left.add(i)
            taken_right.add(j)
    left[:] = [item for i, item in enumerate(left) if i not in taken_left]
    right[:] = [item for j, item in enumerate(right) if j not in taken_right]
    return pairs


def _text_walk(path: Path) -> DeferredWalk:
    """An HLO text file's walk, from the protobufs dumped beside it."""
    return DeferredWalk(lambda: text_walk(path, current_code_roots()))


def _stage_walk(folder: Path, files: Mapping[str, str | Path], stage: str) -> DeferredWalk:
    """A kept module's walk: its stage's protobuf (names and library lines), and
    the other stage's (library lines)."""
    own_key = _STAGE_STACKS[stage]
    own = folder / files[own_key] if own_key in files else None
    others = [
        folder / files[key] for key in _STAGE_STACKS.values() if key != own_key and key in files
    ]
    return DeferredWalk(lambda: file_walk(own, current_code_roots(), others))
