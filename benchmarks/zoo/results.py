"""The zoo's rows: one JSON line per run in the results file, and the Markdown
table of ``docs/zoo.md`` made from them.

A sweep appends a row as each run finishes, so a sweep cut short (a deadline, a
timeout) keeps what ran; ``--resume`` skips what already passed, and the table
shows each (model, mode)'s latest row, so a rerun replaces a failed row.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

TABLE_HEAD = (
    "| model | family | mode | compiles | bare compiles | wall time | CPU time | commit "
    "| verdict |",
    "|---|---|---|---:|---:|---:|---:|---|---|",
)


@dataclass(frozen=True)
class Row:
    """One zoo run and its verdict."""

    model: str
    family: str
    mode: str
    compiles: int | None
    bare_compiles: int | None
    wall_s: float
    verdict: str  # "pass", or what failed
    cpu_s: float | None = None  # user+sys of xlacli and its child (the load inflates wall time)
    commit: str = ""  # the checkout the row ran from


def append_row(path: Path, row: Row) -> None:
    """Add one row to the results file, at once (nothing is lost if the sweep stops)."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(asdict(row)) + "\n")


def read_rows(path: Path) -> list[Row]:
    """Every row of a results file, oldest first (none if there is no file)."""
    if not path.is_file():
        return []
    known = {field.name for field in fields(Row)}
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            rows.append(Row(**{key: value for key, value in data.items() if key in known}))
    return rows


def latest(rows: list[Row]) -> dict[tuple[str, str], Row]:
    """Each (model, mode)'s last row: a rerun replaces what ran before."""
    return {(row.model, row.mode): row for row in rows}


def table(rows: list[Row]) -> str:
    """The Markdown table of ``docs/zoo.md``."""
    lines = list(TABLE_HEAD)
    for row in rows:
        compiles = "-" if row.compiles is None else str(row.compiles)
        bare = "-" if row.bare_compiles is None else str(row.bare_compiles)
        cpu = "-" if row.cpu_s is None else f"{row.cpu_s:.0f} s"
        lines.append(
            f"| {row.model} | {row.family} | {row.mode} | {compiles} | {bare} "
            f"| {row.wall_s:.0f} s | {cpu} | {row.commit or '-'} | {row.verdict} |"
        )
    return "\n".join(lines) + "\n"


def write_table(doc: Path, rows: list[Row]) -> None:
    """Put the table into ``doc``: in place of the table it holds, else at its end
    (the prose around it is written by hand: what ran, from where, at what load)."""
    text = doc.read_text(encoding="utf-8") if doc.is_file() else ""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("| model |")), None)
    if start is None:
        doc.write_text(text + ("\n" if text else "") + table(rows), encoding="utf-8")
        return
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    new = [*lines[:start], *table(rows).splitlines(), *lines[end:]]
    doc.write_text("\n".join(new) + "\n", encoding="utf-8")
