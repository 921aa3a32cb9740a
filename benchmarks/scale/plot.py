"""Draws ``docs/scale.svg`` from ``run.py --json`` results: wall time against
steps (one cached graph) and against graphs (a new graph every step),
wall time solid and CPU time (user + system, children included) dashed.

    python benchmarks/scale/plot.py RESULTS.jsonl [--out docs/scale.svg]
    python benchmarks/scale/plot.py --graph-size GRAPH_SIZE.jsonl --out docs/graph-size.svg

(``--graph-size``: ``graph_size.py``'s rows, the parent's time and the whole
runs' against the graphs' HLO instructions.)

(``before_s``, when ``run.py --before`` filled it, is drawn as "xlacli before".)

Plain SVG written by hand: no plotting library needed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

WIDTH, HEIGHT = 1040, 380
PANEL_W, PANEL_H = 250, 250
MARGIN_X, MARGIN_Y = 70, 50
COLORS = {
    "bare": "#555555",
    "xlacli": "#1f77b4",
    "bare CPU": "#555555",
    "xlacli CPU": "#1f77b4",
    "xlacli before": "#d62728",
}
DASHED = {"bare CPU", "xlacli CPU"}  # CPU time: what a loaded machine inflates least
FAMILIES = (("mlp", "steps"), ("train", "steps"), ("storm", "graphs"))
TITLES = {
    "mlp": "mlp.py inference (one cached graph)",
    "train": "training step (one cached graph)",
    "storm": "new graph every step",
}
SERIES = {
    "bare": "bare_s",
    "xlacli": "xlacli_s",
    "bare CPU": "bare_cpu_s",
    "xlacli CPU": "xlacli_cpu_s",
    "xlacli before": "before_s",
}


def _series(rows: list[dict[str, Any]], family: str, key: str) -> list[tuple[float, float]]:
    points = [
        (row["steps"], row[key])
        for row in rows
        if row["row"].startswith(family + "-") and row.get(key) is not None
    ]
    return sorted(points)


def _panel(
    x0: float,
    title: str,
    unit: str,
    lines: dict[str, list[tuple[float, float]]],
    y_label: str = "seconds",
    colors: dict[str, str] | None = None,
) -> str:
    colors = colors or COLORS
    xs = [x for points in lines.values() for x, _ in points] or [1.0]
    ys = [y for points in lines.values() for _, y in points] or [1.0]
    x_max, y_max = max(xs) * 1.05, max(ys) * 1.1

    def at(x: float, y: float) -> tuple[float, float]:
        return x0 + x / x_max * PANEL_W, MARGIN_Y + PANEL_H - y / y_max * PANEL_H

    parts = [
        f'<text x="{x0 + PANEL_W / 2}" y="{MARGIN_Y - 18}" text-anchor="middle" '
        f'font-weight="bold">{title}</text>',
        f'<line x1="{x0}" y1="{MARGIN_Y + PANEL_H}" x2="{x0 + PANEL_W}" '
        f'y2="{MARGIN_Y + PANEL_H}" stroke="black"/>',
        f'<line x1="{x0}" y1="{MARGIN_Y}" x2="{x0}" y2="{MARGIN_Y + PANEL_H}" stroke="black"/>',
        f'<text x="{x0 + PANEL_W / 2}" y="{MARGIN_Y + PANEL_H + 36}" '
        f'text-anchor="middle">{unit}</text>',
        f'<text x="{x0 - 48}" y="{MARGIN_Y + PANEL_H / 2}" text-anchor="middle" '
        f'transform="rotate(-90 {x0 - 48} {MARGIN_Y + PANEL_H / 2})">{y_label}</text>',
    ]
    for fraction in (0.0, 0.5, 1.0):
        x, y = at(x_max / 1.05 * fraction, y_max / 1.1 * fraction)
        parts.append(
            f'<text x="{x}" y="{MARGIN_Y + PANEL_H + 16}" text-anchor="middle" '
            f'font-size="11">{x_max / 1.05 * fraction:.0f}</text>'
        )
        parts.append(
            f'<text x="{x0 - 6}" y="{y + 4}" text-anchor="end" font-size="11">'
            f"{y_max / 1.1 * fraction:.1f}</text>"
        )
    for name, points in lines.items():
        if not points:
            continue
        coords = [at(x, y) for x, y in points]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
        parts.append(
            f'<polyline points="{path}" fill="none" stroke="{colors[name]}" stroke-width="2"'
            + (' stroke-dasharray="6 4"' if name in DASHED else "")
            + "/>"
        )
        parts += [
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colors[name]}"/>' for x, y in coords
        ]
    return "\n".join(parts)


def draw(rows: list[dict[str, Any]]) -> str:
    """Wall and CPU time against steps and against graphs."""
    panels = []
    drawn: set[str] = set()  # the legend names only the series with points
    for index, (family, unit) in enumerate(FAMILIES):
        lines = {name: _series(rows, family, key) for name, key in SERIES.items()}
        drawn.update(name for name, points in lines.items() if points)
        panels.append(
            _panel(MARGIN_X + index * (PANEL_W + MARGIN_X + 20), TITLES[family], unit, lines)
        )
    return _figure(panels, drawn)


# What the run leaves and holds, against steps: report.json and the parent's peak.
SIZE_COLORS = {
    "mlp.py": "#1f77b4",
    "training step": "#2ca02c",
    "mlp.py before": "#aec7e8",
    "training step before": "#98df8a",
}
SIZE_PANELS = (
    ("report.json", "KiB", lambda row, key: row.get(key) and row[key] / 1024,
     ("report_bytes", "before_report_bytes")),
    ("parent's peak memory", "MiB", lambda row, key: row.get(key),
     ("parent_peak_mib", "before_parent_peak_mib")),
)  # fmt: skip


def draw_sizes(rows: list[dict[str, Any]]) -> str:
    """``report.json``'s size and the parent's peak against steps (one cached graph)."""
    panels: list[str] = []
    drawn: set[str] = set()
    for index, (title, unit, value, (key, before_key)) in enumerate(SIZE_PANELS):
        lines = {}
        for family, name in (("mlp", "mlp.py"), ("train", "training step")):
            for suffix, field in (("", key), (" before", before_key)):
                points = sorted(
                    (row["steps"], value(row, field))
                    for row in rows
                    if row["row"].startswith(family + "-") and value(row, field)
                )
                lines[name + suffix] = points
        drawn.update(name for name, points in lines.items() if points)
        x0 = MARGIN_X + index * (PANEL_W + MARGIN_X + 20)
        panels.append(_panel(x0, title, "steps", lines, unit, SIZE_COLORS))
    return _figure(panels, drawn, SIZE_COLORS)


# The graph-size axis (graph_size.py): x is the run's HLO instructions, before and
# after XLA's optimization, all graphs (what the parent reads), in thousands.
GRAPH_SIZE_COLORS = {
    "after the child": "#d62728",
    "rebuilt: wall": "#2ca02c",
    "rebuilt: CPU": "#98df8a",
    "bare": "#555555",
    "xlacli": "#1f77b4",
    "bare CPU": "#999999",
    "xlacli CPU": "#aec7e8",
}


def _instructions(row: dict[str, Any]) -> float:
    return (sum(row["hlo_instructions"]) + sum(row["optimized_hlo_instructions"])) / 1000


def draw_graph_size(rows: list[dict[str, Any]]) -> str:
    """The parent's own time, and the whole runs', against the HLO instructions."""
    rows = [row for row in rows if "hlo_instructions" in row]

    def series(key: str) -> list[tuple[float, float]]:
        return sorted((_instructions(row), row[key]) for row in rows if row.get(key) is not None)

    parent = {
        "after the child": series("parent_after_child_s"),
        "rebuilt: wall": series("rebuild_s"),
        "rebuilt: CPU": series("rebuild_cpu_s"),
    }
    runs = {
        "bare": series("bare_s"),
        "xlacli": series("xlacli_s"),
        "bare CPU": series("bare_cpu_s"),
        "xlacli CPU": series("xlacli_cpu_s"),
    }
    unit = "HLO instructions (thousands)"  # all graphs, before and after optimization
    panels = [
        _panel(MARGIN_X, "xlacli's parent", unit, parent, colors=GRAPH_SIZE_COLORS),
        _panel(
            MARGIN_X + PANEL_W + MARGIN_X + 160,
            "bare script and xlacli compile",
            unit,
            runs,
            colors=GRAPH_SIZE_COLORS,
        ),
    ]
    drawn = {name for lines in (parent, runs) for name, points in lines.items() if points}
    return _figure(panels, drawn, GRAPH_SIZE_COLORS, spacing=138)


def _figure(
    panels: list[str], drawn: set[str], colors: dict[str, str] | None = None, spacing: int = 170
) -> str:
    colors = colors or COLORS
    legend = "".join(
        f'<line x1="{MARGIN_X + i * spacing}" y1="{HEIGHT - 18}" '
        f'x2="{MARGIN_X + i * spacing + 24}" y2="{HEIGHT - 18}" stroke="{color}" stroke-width="2"'
        + (' stroke-dasharray="6 4"' if name in DASHED else "")
        + f'/><text x="{MARGIN_X + i * spacing + 30}" y="{HEIGHT - 14}">'
        + f"{name}</text>"
        for i, (name, color) in enumerate(
            (name, color) for name, color in colors.items() if name in drawn
        )
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="13">\n'
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>\n'
        + "\n".join(panels)
        + f"\n{legend}\n</svg>\n"
    )


def _load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results", type=Path, nargs="?")
    parser.add_argument("--graph-size", type=Path, help="graph_size.py's rows: draw those instead")
    parser.add_argument("--out", type=Path, default=Path("docs/scale.svg"))
    parser.add_argument(
        "--sizes-out", type=Path, help="also draw report.json and the parent's peak (SVG)"
    )
    args = parser.parse_args()
    if args.graph_size is not None:
        args.out.write_text(draw_graph_size(_load(args.graph_size)), encoding="utf-8")
        return
    if args.results is None:
        parser.error("give RESULTS.jsonl, or --graph-size GRAPH_SIZE.jsonl")
    rows = _load(args.results)
    args.out.write_text(draw(rows), encoding="utf-8")
    if args.sizes_out:
        args.sizes_out.write_text(draw_sizes(rows), encoding="utf-8")


if __name__ == "__main__":
    main()
