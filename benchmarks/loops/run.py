"""The loop zoo: ``xlacli compile`` on training loops of every shape, each judged.

    python benchmarks/loops/run.py                     # every row (outside CI: ~15 min)
    python benchmarks/loops/run.py --only base driver=loader
    python benchmarks/loops/run.py --table docs/loops.md

Each row's script (``template.py``) runs twice: under ``xlacli compile`` and bare
(``benchmarks/zoo/bare.py --script``, torch_xla's own counters). A row passes when:
xlacli exits 0 without our traceback; its compilations equal the bare run's
``UncachedCompile``; every explanation agrees with the structural diff of its
graphs (no ``explanation_checks``); no first graph of a site is called a
steady-state recompile; its steps are the training loop's iterations; and every
cause's location is a line of the script (never a library's, never xlacli's).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: import from this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.loops.template import ROWS, Row, script

REPO = Path(__file__).resolve().parents[2]
BARE = REPO / "benchmarks" / "zoo" / "bare.py"


@dataclass(frozen=True)
class Result:
    row: str
    compiles: int | None
    bare_compiles: int | None
    steps: int | None
    training_steps: int
    wall_s: float
    verdict: str  # "pass", or what failed


def judge(row: Row, code: int, stderr: str, report: dict[str, Any] | None, bare: int | None,
          script_path: Path) -> list[str]:  # fmt: skip
    """What is wrong with one row's run (nothing: it passes)."""
    problems = []
    if code != 0:
        problems.append(f"exit {code}: {stderr.strip().splitlines()[-1:] or ''}")
    if "Traceback" in stderr:
        problems.append("our traceback")
    if report is None:
        return [*problems, "no JSON report"]
    if bare is None:
        problems.append("the bare run failed")
    elif report.get("compilations") != bare:
        problems.append(f"{report.get('compilations')} compiles, bare {bare}")
    checks = report.get("explanation_checks") or []
    if checks:
        first = checks[0]
        problems.append(
            f"{len(checks)} causes the diff contradicts ({first['explained']} -> {first['diff']})"
        )
    steady_first = [
        e for e in report.get("events", ())
        if e["steady_state"] and e["cause"]["category"] == "first_compile"
    ]  # fmt: skip
    if steady_first:
        problems.append(f"{len(steady_first)} first graphs called steady-state")
    if report.get("steps") != row.training_steps:
        problems.append(f"{report.get('steps')} steps, {row.training_steps} training iterations")
    elsewhere = sorted(
        {
            e["cause"]["location"]
            for e in report.get("events", ())
            if e["cause"]["location"]
            and not e["cause"]["location"].startswith(str(script_path) + ":")
        }
    )
    if elsewhere:
        problems.append(f"a cause outside the script: {elsewhere[0]}")
    return problems


def run_xlacli(argv: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "xlacli", *argv],
        capture_output=True, text=True, timeout=timeout, cwd=cwd,
    )  # fmt: skip


def run_bare(argv: list[str], cwd: Path, timeout: float, output: Path) -> int:
    """The bare loop (no xlacli); its counters go to ``output``. Returns its exit code."""
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, timeout=timeout, cwd=cwd
    ).returncode


def run_row(
    row: Row,
    work: Path,
    timeout: float,
    *,
    xlacli: Callable[[list[str], Path, float], subprocess.CompletedProcess[str]] = run_xlacli,
    bare_run: Callable[[list[str], Path, float, Path], int] = run_bare,
) -> Result:
    """One row: xlacli's run and the bare one, judged. ``xlacli``, ``bare_run``: how
    each runs (the test suite replays recorded runs through them)."""
    folder = work / row.name.replace(",", "__").replace("=", "-")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "train.py"
    path.write_text(script(row))
    started = time.perf_counter()
    try:
        argv = ["compile", str(path), "--format", "json", "--out", str(folder / "run"), "--force"]
        done = xlacli(argv, folder, timeout)
    except subprocess.TimeoutExpired:
        return Result(row.name, None, None, None, row.training_steps, timeout, "timeout")
    wall = time.perf_counter() - started
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        report = None
    counters = folder / "bare.json"
    try:
        code = bare_run(
            [str(BARE), "--script", str(path), str(counters)], folder, timeout, counters
        )
        bare = json.loads(counters.read_text())["UncachedCompile"] if code == 0 else None
    except (subprocess.SubprocessError, OSError, KeyError, json.JSONDecodeError):
        bare = None
    problems = judge(row, done.returncode, done.stderr, report, bare, path)
    return Result(
        row.name,
        report.get("compilations") if report else None,
        bare,
        report.get("steps") if report else None,
        row.training_steps,
        wall,
        "; ".join(problems) or "pass",
    )


def table(results: list[Result]) -> str:
    passed = sum(1 for r in results if r.verdict == "pass")
    lines = [
        f"{passed} of {len(results)} rows pass.",
        "",
        "| row | compiles | bare | steps | training steps | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.row} | {r.compiles} | {r.bare_compiles} | {r.steps} | {r.training_steps} "
            f"| {r.verdict} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="row names (as the table shows them)")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--results", type=Path, help="append each result here (JSON lines)")
    parser.add_argument("--table", type=Path, help="write the Markdown table here")
    args = parser.parse_args(argv)
    rows = [row for row in ROWS if not args.only or row.name in args.only]
    work = Path(tempfile.mkdtemp(prefix="xlacli-loops-"))
    results = []
    for index, row in enumerate(rows, 1):
        result = run_row(row, work, args.timeout)
        results.append(result)
        print(f"[{index}/{len(rows)}] {row.name}: {result.verdict}", file=sys.stderr, flush=True)
        if args.results:
            with args.results.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(asdict(result)) + "\n")
    text = table(results)
    if args.table:
        args.table.write_text(text, encoding="utf-8")
    print(text)
    return 0 if all(r.verdict == "pass" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
