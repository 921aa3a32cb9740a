"""A run's options, declared once: what ``compile``, ``profile`` and ``check`` share.

The commands build a ``RunOptions`` from their flags, the Python API from its
keyword arguments (``RunKeywords``, the same names), and the flows resolve it
once against the command's defaults and ``[tool.xlacli]`` (``resolved``) before
the child's request is made of it. A parameter keeps its name from the command
line to the child: ``--steps`` is ``steps`` all the way.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from xlacli.errors import UsageError

if TYPE_CHECKING:
    from xlacli.config import ProjectConfig
    from xlacli.defaults import StepDefaults

StrPath = str | os.PathLike[str]
MODES = ("lazy", "dynamo", "both")
OPTIMIZERS = ("sgd", "adamw")


@dataclass(frozen=True)
class RunOptions:
    """What to run and how; None: the command's default (``resolved`` fills it).

    ``steps`` counts a compile's or a check's steps with their warm-up, and a
    profile's traced steps after it (its warm-up runs first, untraced): a model
    file's default is the command's, a script's (``--steps`` not given) is to
    its end, except for a profile.
    """

    target: str | None = None  # PATH.py, PATH.py:FACTORY or a script; None: -m or the project's
    module: str | None = None  # -m MODULE: run it as a script
    args: tuple[str, ...] = ()  # the script's own arguments, after --
    steps: int | None = None
    warmup: int | None = None  # steps whose compiles are expected
    train: bool | None = None
    optimizer: str | None = None  # sgd or adamw
    devices: int | None = None  # SPMD devices; None: [tool.xlacli] devices, else the backend's
    mode: str | None = None  # lazy, dynamo, or both (each in its own child, compared)
    out: Path | None = None  # the run folder; None: a new one under the runs folder
    force: bool = False  # replace ``out`` if it is an earlier run folder
    hang_timeout: float | None = None  # stop a run where no rank progresses for this long

    def __post_init__(self) -> None:
        """Raises:
        UsageError: a value no run could take.
        """
        if self.steps is not None and self.steps < 1:
            raise UsageError(f"steps {self.steps}: expected 1 or more")
        if self.warmup is not None and self.warmup < 0:
            raise UsageError(f"warmup {self.warmup}: expected 0 or more")
        if self.optimizer is not None and self.optimizer not in OPTIMIZERS:
            raise UsageError(f"optimizer {self.optimizer!r}: expected one of {OPTIMIZERS}")
        if self.mode is not None and self.mode not in MODES:
            raise UsageError(f"mode {self.mode!r}: expected 'lazy' or 'dynamo' (or 'both')")

    def resolved(self, steps: StepDefaults, config: ProjectConfig, *, script: bool) -> RunOptions:
        """Each option left None: the command's default (``steps``), ``[tool.xlacli]``'s
        devices; ``steps`` stays None for a script run to its end."""
        run_to_end = script and steps.script_to_end
        return dataclasses.replace(
            self,
            steps=self.steps if self.steps is not None else (None if run_to_end else steps.steps),
            warmup=steps.warmup if self.warmup is None else self.warmup,
            train=bool(self.train),
            optimizer=self.optimizer or "sgd",
            devices=self.devices if self.devices is not None else config.devices,
            mode=self.mode or "lazy",
        )

    def one_mode(self, mode: str) -> RunOptions:
        """These options in one mode (``--mode both``: each mode's run), its folder
        ``OUT/MODE``.

        Raises:
            UsageError: ``mode`` is not one mode.
        """
        if mode not in ("lazy", "dynamo"):
            raise UsageError(f"mode {mode!r}: expected 'lazy' or 'dynamo'")
        out = self.out / mode if self.out is not None and self.mode == "both" else self.out
        return dataclasses.replace(self, mode=mode, out=out)


class RunKeywords(TypedDict, total=False):
    """``RunOptions``' fields as the Python API's keyword arguments (but ``target``)."""

    module: str | None
    args: tuple[str, ...] | list[str]
    steps: int | None
    warmup: int | None
    train: bool | None
    optimizer: str | None
    devices: int | None
    mode: str | None
    out: StrPath | None
    force: bool
    hang_timeout: float | None


def run_options(
    target: StrPath | None, options: RunOptions | None, keywords: RunKeywords
) -> RunOptions:
    """The Python API's arguments as one ``RunOptions``: ``options`` (else none
    set), with ``target`` and each keyword given in its place.

    Raises:
        UsageError: a value no run could take.
    """
    given: dict[str, Any] = dict(keywords)
    if target is not None:
        given["target"] = os.fspath(target)
    if given.get("out") is not None:
        given["out"] = Path(given["out"])
    if "args" in given:
        given["args"] = tuple(given["args"])
    return dataclasses.replace(options or RunOptions(), **given)
