"""Paths a committed baseline can hold: the same on every machine and checkout.

A user's file is written relative to the project's root (the nearest folder
above the baseline holding ``pyproject.toml`` or ``.git``; else the working
folder when the baseline lies inside it; else the baseline's folder), an
installed library's from its package (``torch/nn/modules/linear.py``), so no
absolute path, user name or virtual environment ever reaches the file.
"""

from __future__ import annotations

import os
from pathlib import Path

from xlacli.paths import SITE_PACKAGES, split_location

PROJECT_MARKERS = ("pyproject.toml", ".git")


def project_root(baseline_path: Path) -> Path:
    """The folder a baseline's paths are relative to."""
    folder = baseline_path.resolve().parent
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate
    cwd = Path.cwd().resolve()
    return cwd if folder == cwd or cwd in folder.parents else folder


def stable_path(path: str, root: Path) -> str:
    """``path`` (absolute, or relative to the working folder) as a baseline keeps it."""
    for marker in SITE_PACKAGES:
        if marker in path:
            return path.rsplit(marker, 1)[1]
    absolute = Path(path) if Path(path).is_absolute() else Path.cwd() / path
    return Path(os.path.relpath(absolute.resolve(), root)).as_posix()


def stable_location(location: str | None, root: Path) -> str:
    """A ``file:line`` as a baseline keeps it (see ``stable_path``); "" for none."""
    if not location:
        return ""
    file, line = split_location(location)
    file = stable_path(file, root)
    return f"{file}:{line}" if line is not None else file
