"""The committed baseline of ``xlacli check``: deterministic counts only.

A baseline is stable: sorted keys, no timestamps, no absolute paths, no
machine names, no wall times and no graph hashes, so the same model gives a
byte-identical file on every run and every machine. Graphs are named by their
site (file, function and the text of the line that ran them) and kept with
that site (``graph_sites``), so a check pairs each graph of a run with the
graph of the baseline it is (``analysis/check/graph_match.py``), not by order or by
line number: a comment added above the model, or one graph added before the
others, must not read as every graph changed. Lines are kept with their text
(``line_sources``) for the same reason.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from xlacli.analysis.check.graph_match import GraphSite, graph_sites
from xlacli.analysis.check.line_growth import line_instructions
from xlacli.analysis.check.memory_baseline import buffers_from_json, memory_baseline
from xlacli.analysis.check.stable_paths import project_root, stable_path
from xlacli.errors import UsageError
from xlacli.paths import source_line, split_location
from xlacli.report.run_report import RunReport
from xlacli.report.sharding import GraphSpmd
from xlacli.units import type_words

BASELINE_VERSION = 1


@dataclass(frozen=True)
class Baseline:
    """What a model's capture is expected to produce."""

    model: str  # relative to the project's root (analysis/check/stable_paths.py)
    device: str
    steps: int
    warmup: int
    train: bool
    optimizer: str
    compilations: int
    distinct_graphs: int
    steady_state_compiles: int
    executions_per_step: tuple[int, ...]
    fallback_ops: dict[str, int] = field(default_factory=dict)
    graphs: dict[str, int] = field(default_factory=dict)  # "file#n" -> HLO instructions
    baseline_version: int = BASELINE_VERSION
    # "file#n" -> peak bytes, and the buffers live at it (xlacli.analysis.check.memory_check).
    peak_bytes: dict[str, int] = field(default_factory=dict)
    peak_buffers: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # SPMD: "file#n all-gather" -> count and "file#n all-gather bytes" -> bytes per device
    collectives: dict[str, int] = field(default_factory=dict)
    mode: str = "lazy"  # "dynamo": the step ran under torch.compile
    graph_breaks: int = 0  # Dynamo's graph breaks (any mode: the model may call torch.compile)
    dynamo_recompiles: int = 0  # Dynamo frame recompiles after a guard failure
    script_args: tuple[str, ...] = ()  # a script's arguments: other ones make other counts
    # "file:line" -> HLO instructions it made, summed over graphs (compile cost by line);
    # shown beside a graph that grew, never a check of its own: lines move with edits.
    lines: dict[str, int] = field(default_factory=dict)
    # Graph key -> its site, what pairs it with a run's graph (empty in baselines
    # written before: their graphs pair by order, "file#n").
    graph_sites: dict[str, GraphSite] = field(default_factory=dict)
    # Line key ("file:line") -> the line's text, so a line that moved is the same line.
    line_sources: dict[str, str] = field(default_factory=dict)
    # A script recorded without --steps ran to its end: ``steps`` is what it did,
    # and a check runs it to its end again.
    run_to_end: bool = False


def baseline_from_report(
    report: RunReport,
    baseline_path: Path,
    optimizer: str,
    script_args: tuple[str, ...] = (),
    *,
    run_to_end: bool = False,
) -> Baseline:
    """The baseline a report stands for, paths relative to the project's root."""
    folder = project_root(baseline_path)
    graphs: dict[str, int] = {}
    collectives: dict[str, int] = {}
    sites = graph_sites(report.graphs, folder)
    for (key, _), graph in zip(sites, report.graphs, strict=True):
        graphs[key] = graph.hlo_instructions or 0
        collectives.update(collective_counts(key, graph.spmd))
    # The graphs dict is keyed in report order, one key per graph.
    peaks, buffers = memory_baseline(zip(graphs, report.graphs, strict=True), folder)
    lines = {
        _line_key(location, folder): (count, source_line(location))
        for location, count in line_instructions(report).items()
    }
    fallbacks: dict[str, int] = {}
    for op in report.fallback_ops:
        fallbacks[op.op] = fallbacks.get(op.op, 0) + op.count  # one row per call site
    return Baseline(
        model=_relative_model(report.model, folder),
        device=report.device,
        steps=report.steps,
        warmup=report.warmup,
        train=report.train,
        optimizer=optimizer if report.train else "",
        compilations=report.compilations,
        distinct_graphs=len(report.graphs),
        # Graph changes: a graph a cache served counts as the compile it stands for.
        steady_state_compiles=report.steady_state_graph_changes,
        executions_per_step=report.executions_per_step,
        fallback_ops=fallbacks,
        graphs=graphs,
        peak_bytes=peaks,
        peak_buffers=buffers,
        collectives=collectives,
        mode=report.mode,
        graph_breaks=sum(b.count for b in report.dynamo.graph_breaks) if report.dynamo else 0,
        dynamo_recompiles=report.dynamo.recompiles if report.dynamo else 0,
        script_args=tuple(script_args),
        lines={key: count for key, (count, _) in lines.items()},
        graph_sites=dict(sites),
        line_sources={key: text for key, (_, text) in lines.items() if text},
        run_to_end=run_to_end,
    )


def _line_key(location: str, folder: Path) -> str:
    """A line as the baseline keeps it: the same on every machine (library files
    from their package folder, the user's relative to the project's root)."""
    file, line = split_location(location)
    if line is None:
        return location
    return f"{stable_path(file, folder)}:{line}"


def collective_counts(graph_key: str, spmd: GraphSpmd | None) -> dict[str, int]:
    """A graph's collectives as baseline entries: count and bytes per kind."""
    if spmd is None:
        return {}
    entries: dict[str, int] = {}
    for kind, (count, size) in spmd.collective_counts().items():
        entries[f"{graph_key} {kind}"] = count
        entries[f"{graph_key} {kind} bytes"] = size
    return entries


def dump_baseline(baseline: Baseline) -> str:
    """The file's text: sorted keys, one trailing newline."""
    data = asdict(baseline)
    data["executions_per_step"] = list(baseline.executions_per_step)
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def write_baseline(baseline: Baseline, path: Path) -> None:
    """Write the baseline file, creating its folder."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_baseline(baseline), encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write the baseline {path}: {error.strerror}") from None


def load_baseline(path: Path, model: str | None = None) -> Baseline:
    """Read and validate a baseline file.

    Args:
        path: the file.
        model: the model being checked (as the report names it), to refuse a
            baseline recorded for another one.

    Raises:
        UsageError: missing, not JSON, another version, another model (exit 2).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(
            f"baseline {path} does not exist",
            hint="record it with --update-baseline, then commit it",
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read the baseline {path}: {error}") from None
    except json.JSONDecodeError as error:
        raise UsageError(
            f"baseline {path} is not JSON (line {error.lineno}: {error.msg})",
            hint="regenerate it with --update-baseline",
        ) from None
    baseline = _from_dict(data, path)
    if model is not None and baseline.model != _relative_model(model, project_root(path)):
        raise UsageError(
            f"baseline {path} was recorded for {baseline.model}, not for this model",
            hint="pass the right --baseline, or --update-baseline to record a new one",
        )
    return baseline


def _from_dict(data: Any, path: Path) -> Baseline:
    if not isinstance(data, dict) or "baseline_version" not in data:
        raise UsageError(f"{path} is not an xlacli baseline (no baseline_version)")
    version = data["baseline_version"]
    if version != BASELINE_VERSION:
        newer = isinstance(version, int) and version > BASELINE_VERSION
        raise UsageError(
            f"baseline {path} has version {version}; this xlacli reads version {BASELINE_VERSION}",
            hint="it was written by a newer xlacli: upgrade xlacli (pip install -U xlacli)"
            if newer
            else "regenerate it with --update-baseline",
        )
    fields = _BaselineFields(data, path)
    return Baseline(
        model=fields.get("model", str),
        device=fields.get("device", str),
        steps=fields.get("steps", int),
        warmup=fields.get("warmup", int),
        train=fields.get("train", bool),
        optimizer=fields.get("optimizer", str, ""),
        compilations=fields.get("compilations", int),
        distinct_graphs=fields.get("distinct_graphs", int),
        steady_state_compiles=fields.get("steady_state_compiles", int),
        executions_per_step=tuple(fields.get_list("executions_per_step")),
        fallback_ops=fields.get_counts("fallback_ops"),
        graphs=fields.get_counts("graphs"),
        peak_bytes=fields.get_counts("peak_bytes"),
        peak_buffers=buffers_from_json(data.get("peak_buffers")),
        collectives=fields.get_counts("collectives"),
        mode=fields.get("mode", str, "lazy"),
        graph_breaks=fields.get("graph_breaks", int, 0),
        dynamo_recompiles=fields.get("dynamo_recompiles", int, 0),
        script_args=tuple(fields.get_strings("script_args")),
        lines=fields.get_counts("lines"),
        graph_sites=_graph_sites(data.get("graph_sites")),
        line_sources=_line_sources(data.get("line_sources")),
        run_to_end=fields.get("run_to_end", bool, False),
    )


def _graph_sites(data: Any) -> dict[str, GraphSite]:
    """The baseline's ``graph_sites``; an entry that does not read is left out
    (its graph then pairs as a new one would)."""
    if not isinstance(data, dict):
        return {}
    sites = {str(key): GraphSite.from_json(value) for key, value in data.items()}
    return {key: site for key, site in sites.items() if site is not None}


def _line_sources(data: Any) -> dict[str, str]:
    if not isinstance(data, dict):
        return {}
    return {str(key): text for key, text in data.items() if isinstance(text, str)}


class _BaselineFields:
    """Typed reads of a baseline's keys; a wrong one is named in plain words."""

    def __init__(self, data: dict[str, Any], path: Path):
        self.data = data
        self.path = path

    def get(self, key: str, kind: type, default: Any = None) -> Any:
        if key not in self.data and default is not None:
            return default
        if key not in self.data:
            self._fail(f"{key} is missing")
        value = self.data[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            self._fail(f"{key} is {json.dumps(value)}, expected {type_words(kind)}")
        return value

    def get_list(self, key: str) -> list[int]:
        values = self.get(key, list)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            self._fail(f"{key} is {json.dumps(values)}, expected a list of integers")
        return values

    def get_strings(self, key: str) -> list[str]:
        values = self.get(key, list, [])
        if not all(isinstance(v, str) for v in values):
            self._fail(f"{key} is {json.dumps(values)}, expected a list of strings")
        return values

    def get_counts(self, key: str) -> dict[str, int]:
        counts = self.get(key, dict, {})
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in counts.values()):
            self._fail(f"{key} has a value that is not an integer")
        return {str(name): count for name, count in counts.items()}

    def _fail(self, problem: str) -> None:
        raise UsageError(
            f"baseline {self.path} is malformed: {problem}",
            hint="regenerate it with --update-baseline",
        )


def check_settings(baseline: Baseline, settings: dict[str, object]) -> None:
    """Refuse to compare a run whose settings differ from the baseline's: its
    counts would differ for that reason alone (exit 2, naming the setting).

    Args:
        baseline: the loaded baseline.
        settings: the settings asked for (by option or configuration); None
            values were not asked for and take the baseline's.

    Raises:
        UsageError: a setting differs.
    """
    for name, wanted in settings.items():
        recorded = getattr(baseline, name)
        if wanted is None or wanted == recorded or (name == "optimizer" and not baseline.train):
            continue
        raise UsageError(
            f"the baseline was recorded with {_setting(name, recorded)}, this run asks for "
            f"{_setting(name, wanted)}: its counts would not be comparable",
            hint=(
                "pass the baseline's arguments after --"
                if name == "script_args"
                else f"drop {_setting(name, wanted)} to use the baseline's setting"
            )
            + ", or pass --update-baseline to record a new baseline with it",
        )


def _setting(name: str, value: object) -> str:
    if name == "train":
        return "--train" if value else "--no-train"
    if name == "script_args":
        words = " ".join(value) if isinstance(value, tuple) else str(value)
        return f"the script's arguments `{words}`" if words else "no script arguments"
    return f"--{name} {value}"


def _relative_model(model: str, folder: Path) -> str:
    path, sep, entry = model.rpartition(":")
    if not (sep and entry.isidentifier()):
        path, entry = model, ""
    relative = stable_path(path, folder)
    return f"{relative}:{entry}" if entry else relative
