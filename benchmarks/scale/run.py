"""Cost against steps and against graphs: bare torch_xla against ``xlacli compile``.

    python benchmarks/scale/run.py [--repeats 3] [--rows mlp-200 train-1000 ...] [--json out.json]

Each row runs the bare loop (``bare.py``) and ``xlacli compile`` on the same
model file for the same steps, alternating (bare, xlacli, bare, xlacli...),
each in a fresh process, so both see the same load on a shared machine.
Reports the medians of wall and CPU time (user + system of the process and
its children: on a shared machine CPU time moves far less with the load), their
ratios, the run folder's size (and ``raw/``'s, ``events.jsonl``'s and
``report.json``'s), the xlacli parent's peak memory, the load average, and
checks that xlacli's compile and execution counts equal the bare loop's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from installed import installed_env  # noqa: E402  (both sides as a user's install runs them)

HERE = "benchmarks/scale"


@dataclass(frozen=True)
class Row:
    name: str
    model: str
    steps: int
    kind: str  # "steps": one cached graph, cost per step; "graphs": one new graph per step


ROWS = {
    row.name: row
    for row in (
        Row("mlp-200", "examples/mlp.py", 200, "steps"),
        Row("mlp-1000", "examples/mlp.py", 1000, "steps"),
        Row("train-100", f"{HERE}/train_step.py", 100, "steps"),
        Row("train-1000", f"{HERE}/train_step.py", 1000, "steps"),
        Row("mlp-10000", "examples/mlp.py", 10000, "steps"),
        Row("train-300", f"{HERE}/train_step.py", 300, "steps"),
        Row("storm-25", f"{HERE}/new_length.py", 25, "graphs"),
        Row("storm-50", f"{HERE}/new_length.py", 50, "graphs"),
        Row("storm-60", f"{HERE}/new_length.py", 60, "graphs"),  # issue 40's storm row
        Row("storm-100", f"{HERE}/new_length.py", 100, "graphs"),
        Row("storm-300", f"{HERE}/new_length.py", 300, "graphs"),
    )
}


@dataclass(frozen=True)
class Result:
    row: str
    steps: int
    bare_s: float
    xlacli_s: float
    ratio: float
    folder_bytes: int
    raw_bytes: int
    events_bytes: int
    report_bytes: int
    parent_peak_mib: float
    counts_equal: bool
    bare_counts: str
    xlacli_counts: str
    bare_runs: list[float]
    xlacli_runs: list[float]
    # CPU seconds (user + system of the process and its children): a loaded
    # machine inflates them far less than wall time.
    bare_cpu_s: float | None = None
    xlacli_cpu_s: float | None = None
    load: tuple[float, float] | None = None  # 1-minute load average before and after the row
    before_s: float | None = None  # --before: an older xlacli, run in the same alternation
    before_folder_bytes: int | None = None
    before_report_bytes: int | None = None
    before_parent_peak_mib: float | None = None


def _env(tree: Path = REPO) -> dict[str, str]:
    return installed_env(tree)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(
    command: list[str], tree: Path = REPO
) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall and CPU seconds of one fresh process (its children included), and its output."""
    cpu, started = _children_cpu(), time.perf_counter()
    # In the tree itself: an xlacli older than child/boot started its child
    # with `python -m`, which took the working folder's xlacli.
    done = subprocess.run(
        command, cwd=tree, check=True, capture_output=True, text=True, env=_env(tree)
    )
    return time.perf_counter() - started, _children_cpu() - cpu, done


def _bare(row: Row) -> tuple[float, float, str]:
    wall, cpu, done = _timed([sys.executable, f"{HERE}/bare.py", row.model, str(row.steps)])
    return wall, cpu, done.stdout.strip().splitlines()[-1]


def _xlacli(row: Row, out: Path, tree: Path = REPO) -> tuple[float, float, float, str]:
    command = [
        sys.executable,
        str(REPO / HERE / "peak.py"),
        "compile",
        row.model,
        "--steps",
        str(row.steps),
        "--out",
        str(out),
        "--format",
        "json",
    ]
    wall, cpu, done = _timed(command, tree)
    peak = re.search(r"xlacli-parent-peak-kib=(\d+)", done.stderr)
    report = json.loads((out / "report.json").read_text())
    counts = f"compiles={report['compilations']} executions={report['executions']}"
    return wall, cpu, int(peak.group(1)) / 1024 if peak else float("nan"), counts


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def measure(row: Row, repeats: int, before: Path | None = None) -> Result:
    work = Path(tempfile.mkdtemp(prefix="xlacli-scale-"))
    bare: list[tuple[float, float]] = []  # (wall, CPU) per run
    tool: list[tuple[float, float]] = []
    before_s: list[float] = []
    peaks: list[float] = []
    before_peaks: list[float] = []
    load = os.getloadavg()[0]
    try:
        for index in range(repeats):
            bare_wall, bare_cpu, bare_counts = _bare(row)
            out = work / f"run{index}"
            tool_wall, tool_cpu, peak, counts = _xlacli(row, out)
            if before is not None:
                before_wall, _cpu, before_peak, _counts = _xlacli(
                    row, work / f"before{index}", before
                )
                before_s.append(before_wall)
                before_peaks.append(before_peak)
            bare.append((bare_wall, bare_cpu))
            tool.append((tool_wall, tool_cpu))
            peaks.append(peak)
        bare_s = statistics.median(wall for wall, _ in bare)
        tool_s = statistics.median(wall for wall, _ in tool)
        return Result(
            before_s=statistics.median(before_s) if before_s else None,
            before_folder_bytes=_size(work / f"before{repeats - 1}") if before_s else None,
            before_report_bytes=(work / f"before{repeats - 1}" / "report.json").stat().st_size
            if before_s
            else None,
            before_parent_peak_mib=max(before_peaks) if before_peaks else None,
            row=row.name,
            steps=row.steps,
            bare_s=bare_s,
            xlacli_s=tool_s,
            ratio=tool_s / bare_s,
            folder_bytes=_size(out),
            raw_bytes=_size(out / "raw"),
            events_bytes=(out / "events.jsonl").stat().st_size,
            report_bytes=(out / "report.json").stat().st_size,
            parent_peak_mib=max(peaks),
            counts_equal=counts == bare_counts,
            bare_counts=bare_counts,
            xlacli_counts=counts,
            bare_runs=[wall for wall, _ in bare],
            xlacli_runs=[wall for wall, _ in tool],
            bare_cpu_s=statistics.median(cpu for _, cpu in bare),
            xlacli_cpu_s=statistics.median(cpu for _, cpu in tool),
            load=(load, os.getloadavg()[0]),
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=list(ROWS))
    parser.add_argument("--json", type=Path, help="append each row's result here (JSON lines)")
    parser.add_argument(
        "--before", type=Path, help="also run the xlacli of this (older) checkout, alternating"
    )
    args = parser.parse_args()
    before = args.before.resolve() if args.before is not None else None
    print(
        "| row | steps | bare wall | xlacli wall | ratio | bare CPU | xlacli CPU | CPU ratio "
        "| folder | raw/ | events.jsonl | report.json | parent peak | counts equal | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.rows:
        result = measure(ROWS[name], args.repeats, before)
        print(_table_row(result), flush=True)
        if args.json is not None:
            with args.json.open("a", encoding="utf-8") as file:
                file.write(json.dumps(asdict(result)) + "\n")


def _table_row(result: Result) -> str:
    assert result.bare_cpu_s is not None and result.xlacli_cpu_s is not None
    load = f"{result.load[0]:.0f}-{result.load[1]:.0f}" if result.load else ""
    return (
        f"| {result.row} | {result.steps} | {result.bare_s:.2f} s | {result.xlacli_s:.2f} s | "
        f"{result.ratio:.2f} | {result.bare_cpu_s:.2f} s | {result.xlacli_cpu_s:.2f} s | "
        f"{result.xlacli_cpu_s / result.bare_cpu_s:.2f} | {result.folder_bytes / 1e6:.2f} MB | "
        f"{result.raw_bytes / 1e6:.2f} MB | {result.events_bytes / 1e6:.2f} MB | "
        f"{result.report_bytes / 1e6:.2f} MB | {result.parent_peak_mib:.0f} MiB | "
        f"{'yes' if result.counts_equal else 'NO'} | {load} |"
        + (f" before: {result.before_s:.2f} s" if result.before_s is not None else "")
    )


if __name__ == "__main__":
    main()
