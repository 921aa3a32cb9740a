"""Paths as users read them: relative to where they ran xlacli when possible."""

from __future__ import annotations

from pathlib import Path

SITE_PACKAGES = ("/site-packages/", "/dist-packages/")


def display_path(path: str | Path, base: Path | None = None) -> str:
    """An installed library's file from its package (``torch/nn/modules/linear.py``,
    even from a virtual environment inside the working directory); else ``path``
    relative to ``base`` (default: the working directory) when it lies inside
    it; else unchanged."""
    text = str(path)
    for marker in SITE_PACKAGES:
        if marker in text:
            return text.rsplit(marker, 1)[1]
    base = base or Path.cwd()
    try:
        return str(Path(path).relative_to(base))
    except ValueError:
        return text


def display_location(location: str | None) -> str | None:
    """A ``/abs/file.py:12`` location as users read it (see ``display_path``)."""
    if not location:
        return location
    file, line = split_location(location)
    return display_path(file) + (f":{line}" if line is not None else "")


def split_location(location: str) -> tuple[str, int | None]:
    """``"a/b.py:12"`` -> ``("a/b.py", 12)``; no line -> ``(location, None)``."""
    file, sep, line = location.rpartition(":")
    if sep and line.isdigit():
        return file, int(line)
    return location, None


def source_line(location: str, base: Path | None = None) -> str | None:
    """The text of the source line at ``file:line``, stripped; None if unreadable."""
    file, line = split_location(location)
    if line is None:
        return None
    path = Path(file)
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle, start=1):
                if number == line:
                    return text.strip()
    except OSError:
        return None
    return None
