"""The committed baseline of ``xlacli check``: deterministic counts only.

A baseline is stable: sorted keys, no timestamps, no absolute paths, no
machine names, no wall times and no graph hashes, so the same model gives a
byte-identical file on every run and every machine. Graphs are keyed by the
file of their site (relative to the baseline file) and their order among
that file's graphs, not by line: a comment added above the model must not
read as one graph gone and another new.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from xlacli.errors import UsageError
from xlacli.paths import split_location
from xlacli.report import RunReport

BASELINE_VERSION = 1


@dataclass(frozen=True)
class Baseline:
    """What a model's capture is expected to produce."""

    model: str  # relative to the baseline file's folder
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
    mode: str = "lazy"  # "dynamo": the step ran under torch.compile
    graph_breaks: int = 0  # Dynamo's graph breaks (any mode: the model may call torch.compile)
    dynamo_recompiles: int = 0  # Dynamo frame recompiles after a guard failure


def baseline_from_report(report: RunReport, baseline_path: Path, optimizer: str) -> Baseline:
    """The baseline a report stands for, paths relative to the baseline's folder."""
    folder = baseline_path.resolve().parent
    graphs: dict[str, int] = {}
    seen: dict[str, int] = {}
    for graph in report.graphs:
        file = _relative_file(graph.site, folder)
        index = seen.get(file, 0)
        seen[file] = index + 1
        graphs[f"{file}#{index}"] = graph.hlo_instructions or 0
    fallbacks: dict[str, int] = {}
    for op in report.fallback_ops:
        fallbacks[op.op] = op.count
    return Baseline(
        model=_relative_model(report.model, folder),
        device=report.device,
        steps=report.steps,
        warmup=report.warmup,
        train=report.train,
        optimizer=optimizer if report.train else "",
        compilations=report.compilations,
        distinct_graphs=len(report.graphs),
        steady_state_compiles=report.steady_state_compiles,
        executions_per_step=report.executions_per_step,
        fallback_ops=fallbacks,
        graphs=graphs,
        mode=report.mode,
        graph_breaks=sum(b.count for b in report.dynamo.graph_breaks) if report.dynamo else 0,
        dynamo_recompiles=report.dynamo.recompiles if report.dynamo else 0,
    )


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
    if model is not None and baseline.model != _relative_model(model, path.resolve().parent):
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
        raise UsageError(
            f"baseline {path} has version {version}; this xlacli reads version {BASELINE_VERSION}",
            hint="regenerate it with --update-baseline",
        )
    try:
        return Baseline(
            model=str(data["model"]),
            device=str(data["device"]),
            steps=int(data["steps"]),
            warmup=int(data["warmup"]),
            train=bool(data["train"]),
            optimizer=str(data.get("optimizer", "")),
            compilations=int(data["compilations"]),
            distinct_graphs=int(data["distinct_graphs"]),
            steady_state_compiles=int(data["steady_state_compiles"]),
            executions_per_step=tuple(int(n) for n in data["executions_per_step"]),
            fallback_ops={str(k): int(v) for k, v in data.get("fallback_ops", {}).items()},
            graphs={str(k): int(v) for k, v in data.get("graphs", {}).items()},
            mode=str(data.get("mode", "lazy")),
            graph_breaks=int(data.get("graph_breaks", 0)),
            dynamo_recompiles=int(data.get("dynamo_recompiles", 0)),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise UsageError(f"baseline {path} is malformed: {error!r}") from None


def _relative_model(model: str, folder: Path) -> str:
    path, sep, entry = model.rpartition(":")
    if not (sep and entry.isidentifier()):
        path, entry = model, ""
    relative = _relative(path, folder)
    return f"{relative}:{entry}" if entry else relative


def _relative_file(site: str | None, folder: Path) -> str:
    if not site:
        return "?"
    file, _ = split_location(site)
    return _relative(file, folder)


def _relative(path: str, folder: Path) -> str:
    """``path`` (absolute, or relative to the working directory) relative to
    ``folder``, with forward slashes on every platform."""
    absolute = Path(path) if Path(path).is_absolute() else Path.cwd() / path
    return Path(os.path.relpath(absolute.resolve(), folder)).as_posix()
