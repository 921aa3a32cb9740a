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
short keeps the rows that ran; ``--resume`` skips the runs that already passed,
and ``--table`` shows each run's latest row (``results.py``).

    nice -n 19 python benchmarks/zoo/run.py --resume --table docs/zoo.md
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: import the zoo from this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.zoo.results import Row, append_row, latest, read_rows, write_table

REPO = Path(__file__).resolve().parents[2]
PACKAGE = (REPO / "xlacli").resolve()
FILE_LINE = re.compile(r"([^\s()'\"]+\.py):\d+")
# XLA:CPU's backend optimisation off, in both runs: the zoo checks counts and stories,
# not speed, and on a loaded machine compile time is most of a run (ZOO_XLA_FLAGS="" for off).
QUICK_COMPILE = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
WARMUP = 2  # xlacli compile's default, said aloud: the first 2 of the --steps are warm-up


# How a run's command runs: (command, timeout, added environment) -> its result, or
# None after a timeout. The test suite replays recorded runs through its own.
Runner = Callable[[list[str], float, dict[str, str]], "subprocess.CompletedProcess[str] | None"]


def run_one(
    name: str,
    mode: str,
    steps: int,
    timeout: float,
    work: Path,
    *,
    xlacli: Runner | None = None,
    bare_run: Runner | None = None,
) -> Row:
    """``xlacli compile`` and the bare loop on one case; the verdict. ``xlacli``,
    ``bare_run``: how each command runs (default: under nice, from the checkout)."""
    from benchmarks.zoo.cases import CASES

    case = CASES[name]
    out = work / f"{name}-{mode}"
    env = _case_env(case.name, mode)
    started, cpu_before = time.perf_counter(), _children_cpu()
    result = (xlacli or _run)(_xlacli_command(case, mode, steps, out), timeout, env)
    wall, cpu = time.perf_counter() - started, _children_cpu() - cpu_before
    commit = _commit()
    if result is None:
        verdict = f"timeout after {timeout:.0f} s"
        return Row(name, case.family, mode, None, None, wall, verdict, cpu, commit)
    report = _report(result.stdout)
    bare_file = work / f"{name}-{mode}-bare.json"
    bare = (bare_run or _run)(_bare_command(case, mode, steps, bare_file), timeout, env)
    bare_ok = bare is not None and bare.returncode == 0 and bare_file.is_file()
    bare_compiles = json.loads(bare_file.read_text())["UncachedCompile"] if bare_ok else None
    compiles = report.get("compilations") if report else None
    problems = _problems(result, report, bare_compiles)
    if not bare_ok:
        why = "timeout" if bare is None else _last_line(bare.stderr)
        problems = [p for p in problems if p != "the bare run failed"] + [f"bare run: {why}"]
    verdict = "; ".join(problems) or "pass"
    return Row(name, case.family, mode, compiles, bare_compiles, wall, verdict, cpu, commit)


def _children_cpu() -> float:
    """User + system seconds of the finished child processes (on a loaded machine,
    the wall time says more about the neighbours than about the run)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _commit() -> str:
    """The checkout's short commit, ``+`` when its work tree has changes."""
    git = ["git", "-C", str(REPO)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run([*git, "status", "--porcelain", "--", "xlacli", "benchmarks/zoo"],
                           capture_output=True, text=True)  # fmt: skip
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "")


def _xlacli_command(case: Any, mode: str, steps: int, out: Path) -> list[str]:
    base = [sys.executable, "-m", "xlacli", "compile"]
    tail = ["--out", str(out), "--force", "--format", "json"]
    if case.script is not None:  # to its end, as the bare run does
        return [*base, case.script, *tail, "--", *case.args]
    train = ["--train"] if mode == "training" else []
    model = str(REPO / "benchmarks" / "zoo" / "zoo_model.py")
    return [*base, model, "--steps", str(steps), "--warmup", str(WARMUP), *train, *tail]


def _bare_command(case: Any, mode: str, steps: int, out: Path) -> list[str]:
    bare = str(REPO / "benchmarks" / "zoo" / "bare.py")
    if case.script is not None:
        return [sys.executable, bare, "--script", case.script, str(out), "--", *case.args]
    return [sys.executable, bare, case.name, mode, str(steps), str(out)]


def _case_env(name: str, mode: str) -> dict[str, str]:
    """What both runs of a case add to the environment: the case, and XLA's quick
    compile (``_run`` puts the caller's own XLA_FLAGS before it; this process's may
    be torch_xla's, set at its import, so they are no part of what a case is)."""
    quick = os.environ.get("ZOO_XLA_FLAGS", QUICK_COMPILE)
    return {"ZOO_CASE": name, "ZOO_MODE": mode, "XLA_FLAGS": quick}


def _run(
    command: list[str], timeout: float, added: dict[str, str]
) -> subprocess.CompletedProcess[str] | None:
    env = {**os.environ, "PJRT_DEVICE": "CPU", **added}
    env["XLA_FLAGS"] = " ".join(filter(None, [os.environ.get("XLA_FLAGS"), added["XLA_FLAGS"]]))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    # A session of its own: a timeout ends xlacli's child process too, not only xlacli.
    with subprocess.Popen(
        ["nice", "-n", "19", *command], cwd=REPO, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    ) as process:  # fmt: skip
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return None
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


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


def _xlacli_locations(data: Any, key: str = "") -> list[str]:
    """Every ``file.py:line`` in the report (its own stack dumps, ``frames``, aside)
    that points into xlacli's package, written absolute or relative to the checkout."""
    if key == "frames":
        return []
    if isinstance(data, dict):
        return [found for k, value in data.items() for found in _xlacli_locations(value, k)]
    if isinstance(data, list):
        return [found for value in data for found in _xlacli_locations(value, key)]
    if not isinstance(data, str):
        return []
    return [match.group(0) for match in FILE_LINE.finditer(data) if _in_package(match.group(1))]


def _in_package(path: str) -> bool:
    file = Path(path) if Path(path).is_absolute() else REPO / path
    return file.resolve().is_relative_to(PACKAGE)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.startswith("xlacli: error")]
    return (lines or text.strip().splitlines() or [""])[-1][:160]


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
    parser.add_argument("--results", type=Path, default=REPO / "docs" / "zoo-results.jsonl")
    parser.add_argument("--resume", action="store_true", help="skip runs that already passed")
    parser.add_argument("--table", type=Path, help="write the Markdown table here")
    parser.add_argument("--keep", type=Path, help="keep the run folders here (to read reports)")
    args = parser.parse_args(argv)
    done = latest(read_rows(args.results)) if args.resume else {}
    failed = False
    with tempfile.TemporaryDirectory(prefix="xlacli-zoo-") as temporary:
        work = args.keep or temporary
        for name, mode in selected(args.only, args.modes):
            if done.get((name, mode)) is not None and done[name, mode].verdict == "pass":
                continue
            row = run_one(name, mode, args.steps, args.timeout, Path(work))
            append_row(args.results, row)
            failed |= row.verdict != "pass"
            print(f"{name:20} {mode:10} {row.wall_s:6.0f} s  {row.verdict}", flush=True)
            if args.table:  # after each run: the table is never behind the results
                write_table(args.table, ordered(read_rows(args.results)))
    return 1 if failed else 0


def ordered(rows: list[Row]) -> list[Row]:
    """Each run's latest row, in the order of ``cases.py``."""
    from benchmarks.zoo.cases import CASES

    rank = {name: i for i, name in enumerate(CASES)}
    modes = {"script": 0, "inference": 1, "training": 2}
    newest = latest(rows).values()
    return sorted(newest, key=lambda row: (rank.get(row.model, len(rank)), modes.get(row.mode, 3)))


if __name__ == "__main__":
    sys.exit(main())
