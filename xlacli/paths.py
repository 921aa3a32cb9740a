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


def display_walked(location: str | None, library: str | None) -> str | None:
    """The user's line with the library line it went through, as recompiles show
    it: ``model.py:12 (inside torch/nn/modules/linear.py:134)``."""
    where = display_location(location)
    if where and library:
        return f"{where} (inside {display_location(library)})"
    return where


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


def near_path(path: Path, suffixes: tuple[str, ...] = ()) -> Path | None:
    """An existing path one typo away from ``path``, for "did you mean ...?":
    ``examples/mlp`` -> ``examples/mlp.py`` (with ``suffixes=(".py",)``),
    ``exmaples/mpl.py`` -> ``examples/mlp.py``; None when nothing is that close.
    Each missing part is matched among its folder's entries (hidden ones left out)."""
    import difflib

    for suffix in suffixes:
        if path.suffix != suffix and path.with_name(path.name + suffix).exists():
            return path.with_name(path.name + suffix)
    found = Path(path.anchor) if path.is_absolute() else Path()
    for part in path.parts[1:] if path.is_absolute() else path.parts:
        candidate = found / part
        if not candidate.exists():
            try:
                names = [p.name for p in found.iterdir() if not p.name.startswith(".")]
            except OSError:
                return None
            close = [
                match
                for wanted in (part, *(part + suffix for suffix in suffixes))
                for match in difflib.get_close_matches(wanted, names, 1, 0.6)
            ]
            if not close:
                return None
            candidate = found / close[0]
        found = candidate
    return found if found != path and found.exists() else None


def read_text_or_none(path: str | Path) -> str | None:
    """The text of ``path`` (undecodable bytes replaced), or None if it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def write_text_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8), making its folders.

    Raises:
        UsageError: it cannot be written (a folder, no permission, a file in the way).
    """
    from xlacli.errors import UsageError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error.strerror or error}") from None
