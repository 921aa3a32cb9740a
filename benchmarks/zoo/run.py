"""The zoo: ``xlacli compile --steps 3`` on many real architectures, each checked
against a bare torch_xla loop doing the same steps.

    python benchmarks/zoo/run.py                       # the full sweep (outside CI)
    python benchmarks/zoo/run.py --only bert gpt2 --modes inference
    python benchmarks/zoo/run.py --table docs/zoo.md   # also write the Markdown table

Each run, under ``nice -n 19`` and a per-model timeout, must: exit 0 without a
traceback, count as many compiles as the bare loop, call no ``first_compile`` a
steady-state recompile, and name no location inside xlacli's package. Script
cases run their training loop with an evaluation pass to the end, both ways.
Rows are appended to ``--results`` (JSON lines) as they finish, so a sweep cut
short keeps the rows that ran.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PACKAGE = str((REPO / "xlacli").resolve()) + "/"
LOCATION_KEYS = ("location", "library_location", "site", "framework_site", "source", "peak_site")


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


def run_one(name: str, mode: str, steps: int, timeout: float, work: Path) -> Row:
    """``xlacli compile`` and the bare loop on one case; the verdict."""
    from benchmarks.zoo.cases import CASES

    case = CASES[name]
    out = work / f"{name}-{mode}"
    started = time.perf_counter()
    result = _run(_xlacli_command(case, mode, steps, out), timeout, case.name, mode)
    wall = time.perf_counter() - started
    if result is None:
        return Row(name, case.family, mode, None, None, wall, f"timeout after {timeout:.0f} s")
    report = _report(result.stdout)
    bare_file = work / f"{name}-{mode}-bare.json"
    bare = _run(_bare_command(case, mode, steps, bare_file), timeout, case.name, mode)
    bare_ok = bare is not None and bare.returncode == 0 and bare_file.is_file()
    bare_compiles = json.loads(bare_file.read_text())["UncachedCompile"] if bare_ok else None
    compiles = report.get("compilations") if report else None
    problems = _problems(result, report, bare_compiles)
    if not bare_ok:
        why = "timeout" if bare is None else _last_line(bare.stderr)
        problems = [p for p in problems if p != "the bare run failed"] + [f"bare run: {why}"]
    return Row(
        name, case.family, mode, compiles, bare_compiles, wall, "; ".join(problems) or "pass"
    )


def _xlacli_command(case: Any, mode: str, steps: int, out: Path) -> list[str]:
    base = [sys.executable, "-m", "xlacli", "compile"]
    tail = ["--out", str(out), "--force", "--format", "json"]
    if case.script is not None:  # to its end, as the bare run does
        return [*base, case.script, *tail, "--", *case.args]
    train = ["--train"] if mode == "training" else []
    model = str(REPO / "benchmarks" / "zoo" / "zoo_model.py")
    return [*base, model, "--steps", str(steps), *train, *tail]


def _bare_command(case: Any, mode: str, steps: int, out: Path) -> list[str]:
    bare = str(REPO / "benchmarks" / "zoo" / "bare.py")
    if case.script is not None:
        return [sys.executable, bare, "--script", case.script, str(out), "--", *case.args]
    return [sys.executable, bare, case.name, mode, str(steps), str(out)]


def _run(
    command: list[str], timeout: float, name: str, mode: str
) -> subprocess.CompletedProcess[str] | None:
    env = {**os.environ, "PJRT_DEVICE": "CPU", "ZOO_CASE": name, "ZOO_MODE": mode}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    try:
        return subprocess.run(
            ["nice", "-n", "19", *command],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None


def _report(stdout: str) -> dict[str, Any] | None:
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _problems(
    result: subprocess.CompletedProcess[str], report: dict[str, Any] | None, bare: int | None
) -> list[str]:
    problems = []
    if result.returncode != 0:
        problems.append(f"exit {result.returncode}: {_last_line(result.stderr)}")
    if "Traceback (most recent call last)" in result.stderr and "xlacli's frames" not in (
        result.stderr
    ):
        problems.append("our traceback")
    if report is None:
        return [*problems, "no JSON report"]
    if bare is None:
        problems.append("the bare run failed")
    elif report.get("compilations") != bare:
        problems.append(f"{report.get('compilations')} compiles, bare {bare}")
    steady_first = [
        e for e in report.get("events", [])
        if e.get("steady_state") and e["cause"]["category"] == "first_compile"
    ]  # fmt: skip
    if steady_first:
        problems.append(f"{len(steady_first)} first_compile called steady-state")
    inside = sorted(set(_xlacli_locations(report)))
    if inside:
        problems.append(f"location inside xlacli: {inside[0]}")
    return problems


def _xlacli_locations(data: Any) -> list[str]:
    """Every location value in the report that points into xlacli's package."""
    found: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key in LOCATION_KEYS and isinstance(value, str) and value.startswith(PACKAGE):
                found.append(value)
            elif key != "frames":
                found += _xlacli_locations(value)
    elif isinstance(data, list):
        for value in data:
            found += _xlacli_locations(value)
    return found


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.startswith("xlacli: error")]
    return (lines or text.strip().splitlines() or [""])[-1][:160]


def table(rows: list[Row]) -> str:
    """The Markdown table of ``docs/zoo.md``."""
    lines = [
        "| model | family | mode | compiles | bare compiles | wall time | verdict |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for row in rows:
        compiles = "-" if row.compiles is None else str(row.compiles)
        bare = "-" if row.bare_compiles is None else str(row.bare_compiles)
        lines.append(
            f"| {row.model} | {row.family} | {row.mode} | {compiles} | {bare} "
            f"| {row.wall_s:.0f} s | {row.verdict} |"
        )
    return "\n".join(lines) + "\n"


def selected(only: list[str] | None, modes: list[str]) -> list[tuple[str, str]]:
    """(case, mode) pairs to run: scripts once (their own mode), models per mode."""
    from benchmarks.zoo.cases import CASES

    names = only or list(CASES)
    pairs = []
    for name in names:
        case = CASES[name]
        for mode in ("script",) if case.script else modes:
            pairs.append((name, mode))
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="case names (default: all)")
    parser.add_argument("--modes", nargs="*", default=["inference", "training"])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run")
    parser.add_argument("--results", type=Path, default=Path("zoo-results.jsonl"))
    parser.add_argument("--table", type=Path, help="write the Markdown table here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    rows = []
    with tempfile.TemporaryDirectory(prefix="xlacli-zoo-") as work:
        for name, mode in selected(args.only, args.modes):
            row = run_one(name, mode, args.steps, args.timeout, Path(work))
            rows.append(row)
            with args.results.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(asdict(row)) + "\n")
            print(f"{name:20} {mode:10} {row.wall_s:6.0f} s  {row.verdict}", flush=True)
    if args.table:
        args.table.write_text(table(rows), encoding="utf-8")
    return 0 if all(row.verdict == "pass" for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
