"""Settings from ``[tool.xlacli]`` in the user's ``pyproject.toml``.

So that ``xlacli check`` alone works in a project that configures it::

    [tool.xlacli]
    model = "model.py"          # or a training script: model = "train.py"
    script_args = ["--lr", "0.1"]  # its arguments (or module = "pkg.train")
    steps = 5
    warmup = 2
    baseline = ".xlacli/baseline.json"
    memory_tolerance = 0.05   # check: allowed rise of a graph's peak memory

Paths are relative to the ``pyproject.toml`` that names them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlacli.errors import UsageError
from xlacli.units import type_words

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KNOWN_KEYS = {
    "model",
    "steps",
    "warmup",
    "baseline",
    "train",
    "optimizer",
    "memory_tolerance",
    "devices",
    "module",
    "script_args",
}


@dataclass(frozen=True)
class ProjectConfig:
    """The ``[tool.xlacli]`` table, with paths made absolute."""

    source: Path | None = None  # the pyproject.toml it came from
    model: str | None = None
    steps: int | None = None
    warmup: int | None = None
    baseline: Path | None = None
    train: bool | None = None
    optimizer: str | None = None
    memory_tolerance: float | None = None
    devices: int | None = None  # SPMD: virtual CPU devices for every command
    has_table: bool = False  # the file has a [tool.xlacli] table: a project root
    module: str | None = None  # a script run as python -m MODULE
    script_args: tuple[str, ...] = ()  # the configured script's arguments


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` in ``start`` or its parents."""
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(start: Path | None = None) -> ProjectConfig:
    """Read ``[tool.xlacli]`` from the nearest pyproject.toml (empty if none).

    Raises:
        UsageError: the file is not valid TOML, or the table has unknown keys
            or values of the wrong type.
    """
    path = find_pyproject((start or Path.cwd()).resolve())
    if path is None:
        return ProjectConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"cannot read {path}: {error}") from None
    table = data.get("tool", {}).get("xlacli")
    if table is None:
        return ProjectConfig(source=path)
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise UsageError(
            f"{path}: unknown [tool.xlacli] key {', '.join(unknown)}",
            hint=f"known keys: {', '.join(sorted(KNOWN_KEYS))}",
        )
    folder = path.parent
    model = _typed(table, "model", str, path)
    baseline = _typed(table, "baseline", str, path)
    return ProjectConfig(
        source=path,
        model=_under(folder, model) if model else None,
        steps=_typed(table, "steps", int, path),
        warmup=_typed(table, "warmup", int, path),
        baseline=folder / baseline if baseline else None,
        train=_typed(table, "train", bool, path),
        optimizer=_typed(table, "optimizer", str, path),
        memory_tolerance=_fraction(table, "memory_tolerance", path),
        devices=_positive(table, "devices", path),
        has_table=True,
        module=_typed(table, "module", str, path),
        script_args=_string_list(table, "script_args", path),
    )


def _typed(table: dict[str, Any], key: str, kind: type, path: Path) -> Any:
    value = table.get(key)
    if value is not None and (
        not isinstance(value, kind) or isinstance(value, bool) != (kind is bool)
    ):
        raise UsageError(f"{path}: [tool.xlacli] {key} must be {type_words(kind)}, not {value!r}")
    return value


def _fraction(table: dict[str, Any], key: str, path: Path) -> float | None:
    """A non-negative number (``0.05`` = 5%); TOML's ``1`` is an int, which is fine."""
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise UsageError(f"{path}: [tool.xlacli] {key} must be a number >= 0, not {value!r}")
    return float(value)


def _positive(table: dict[str, Any], key: str, path: Path) -> int | None:
    value = _typed(table, key, int, path)
    if value is not None and value < 1:
        raise UsageError(f"{path}: [tool.xlacli] {key} must be at least 1, not {value}")
    return value


def project_runs_dir(config: ProjectConfig) -> Path | None:
    """Where runs go in a configured project: ``.xlacli/runs`` beside the
    ``pyproject.toml`` holding ``[tool.xlacli]``, from whichever subfolder
    xlacli runs (None: no such project; the working directory decides)."""
    if config.source is None or not config.has_table:
        return None
    return config.source.parent / ".xlacli" / "runs"


def _string_list(table: dict[str, Any], key: str, path: Path) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise UsageError(
            f"{path}: [tool.xlacli] {key} must be a list of strings, not {value!r}",
            hint=f'e.g. {key} = ["--lr", "0.1"]',
        )
    return tuple(value)


def _under(folder: Path, model: str) -> str:
    """The model target with its path made absolute (a ``:FACTORY`` suffix kept)."""
    path, sep, entry = model.rpartition(":")
    if sep and entry.isidentifier():
        return f"{folder / path}:{entry}"
    return str(folder / model)


def model_argument(model: str | None, config: ProjectConfig, action: str) -> str:
    """The model to ``action``: the argument, else ``[tool.xlacli] model``.

    Raises:
        UsageError: neither names one.
    """
    chosen = model or config.model
    if chosen is None:
        raise UsageError(
            f"no model to {action}",
            hint="pass MODEL.py, or set model in [tool.xlacli] of pyproject.toml",
        )
    return chosen
