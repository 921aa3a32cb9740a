"""Runs by name: the run folders under ``.xlacli/runs``, newest first.

``xlacli report`` with no argument shows the latest; ``xlacli report NAME``
finds ``.xlacli/runs/NAME``; ``xlacli runs`` lists them (name, command,
verdict, age) and removes old or failed ones. A name that does not exist is
answered with the recent runs, so the user can pick one.
"""

from __future__ import annotations

import difflib
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from xlacli.errors import UsageError
from xlacli.paths import near_path

RECENT = 5  # runs listed when a name is not found
REQUEST_FILE = "request.json"  # written when a run starts (capture/runner.py)


@dataclass(frozen=True)
class RunEntry:
    """One run folder, as ``xlacli runs`` lists it."""

    path: Path
    command: str  # compile, profile or check
    model: str
    verdict: str
    age_s: float
    failed: bool

    @property
    def name(self) -> str:
        return self.path.name


def runs_folder() -> Path:
    """Where runs go from here: the configured project's, else ``.xlacli/runs``."""
    from xlacli.capture.runner import DEFAULT_RUNS_DIR
    from xlacli.config import load_config, project_runs_dir

    return project_runs_dir(load_config()) or DEFAULT_RUNS_DIR


def run_folders(folder: Path) -> list[Path]:
    """The run folders in ``folder``, newest first (a folder with a request is
    one), by when each run started, not when a file in it last changed (a
    report rendered again, a check's result written after the run)."""
    if not folder.is_dir():
        return []
    found = [path for path in folder.iterdir() if (path / REQUEST_FILE).is_file()]
    return sorted(found, key=started_at, reverse=True)


def started_at(path: Path) -> float:
    """When the run in ``path`` started: its request is written then, and never again."""
    return (path / REQUEST_FILE).stat().st_mtime


def command_of(path: Path) -> str:
    """The command that made the run: its request says (compile, profile, check);
    a run of an xlacli that did not say is known by the files the command leaves."""
    if (path / "check.json").exists():
        return "check"
    try:
        said = json.loads((path / REQUEST_FILE).read_text(encoding="utf-8")).get("command")
    except (OSError, ValueError, AttributeError):
        said = None
    if isinstance(said, str) and said:
        return said
    return "profile" if (path / "profile.json").exists() else "compile"


def list_runs(folder: Path) -> list[RunEntry]:
    """Every run in ``folder``, newest first, with its verdict."""
    return [describe_run(path) for path in run_folders(folder)]


def describe_run(path: Path) -> RunEntry:
    """A run's command, model and verdict (a run without a report: "unfinished")."""
    from xlacli.render.verdict import run_verdict
    from xlacli.report.ranks import MERGED_FILE
    from xlacli.report.run_report import REPORT_FILE, load_report

    age = time.time() - started_at(path)
    command = command_of(path)
    if not (path / REPORT_FILE).exists() and (path / MERGED_FILE).exists():
        return _merged_entry(path, command, age)
    if not (path / REPORT_FILE).exists():
        return RunEntry(
            path, command, "?", "unfinished: no report (xlacli report rebuilds it)", age, True
        )
    try:
        report = load_report(path)
    except UsageError as error:
        return RunEntry(path, command, "?", f"unreadable: {error.message}", age, True)
    return RunEntry(path, command, report.model, run_verdict(report), age, report.error is not None)


def _merged_entry(path: Path, command: str, age: float) -> RunEntry:
    """A run of several ranks (a launcher's, or the script's own): the merged verdict."""
    from xlacli.report.ranks import load_ranks
    from xlacli.run_folder.request import CaptureRequest
    from xlacli.units import counted

    try:
        merged = load_ranks(path)
        model = Path(CaptureRequest.load(path / "request.json").model_path).name
    except (UsageError, OSError, ValueError, TypeError) as error:
        return RunEntry(path, command, "?", f"unreadable: {error}", age, True)
    ranks = f"{counted(merged.world_size, 'rank')} ({merged.launcher})"
    if merged.divergence is not None:
        verdict = f"{ranks}: diverge at step {merged.divergence.step}"
    elif merged.missing or merged.hangs:
        verdict = f"{ranks}: " + ("hung" if merged.hangs else "a rank is missing")
    else:
        verdict = f"{ranks} agree"
    failed = not merged.agree or bool(merged.hangs) or any(r.error for r in merged.ranks)
    return RunEntry(path, command, model, verdict, age, failed)


def resolve_run(name: Path | None) -> Path:
    """The run folder (or report file) the user named: a path, a run's name in
    the runs folder, or, with none, the latest run.

    Raises:
        UsageError: no run yet, or no such path nor run name (with the recent runs).
    """
    folder = runs_folder()
    if name is None:
        runs = run_folders(folder)
        if not runs:
            raise UsageError(
                f"no run yet in {folder}",
                hint="run `xlacli compile MODEL.py` first, or name a run folder",
            )
        return runs[0]
    if name.exists():
        return name
    if len(name.parts) == 1 and (folder / name).exists():
        return folder / name
    runs = run_folders(folder)
    recent = [path.name for path in runs[:RECENT]]
    near = _near_run(name, runs)
    raise UsageError(
        f"{name} does not exist" + (f" (did you mean {near}?)" if near else ""),
        details="recent runs (newest first):\n" + "\n".join(f"  {r}" for r in recent)
        if recent
        else None,
        hint=f"name a run folder or one of the runs in {folder} (`xlacli runs` lists them)",
    )


def run_by_name(path: Path) -> Path:
    """``path``, or the run of that name in the runs folder when ``path`` does not exist."""
    if not path.exists() and len(path.parts) == 1 and (runs_folder() / path).is_dir():
        return runs_folder() / path
    return path


def _near_run(name: Path, runs: list[Path]) -> str | None:
    """The run (or path) a misspelt or shortened name most likely means: the
    newest run whose name starts with it (``mlp`` -> ``mlp-20260101-120000``),
    else the closest name, else an existing path one typo away."""
    text = str(name)
    if len(name.parts) == 1:
        names = [path.name for path in runs]
        started = [run for run in names if run.startswith(text)]
        close = started or difflib.get_close_matches(text, names, 1, 0.6)
        if close:
            return close[0]
    near = near_path(name)
    return str(near) if near is not None else None


def remove_runs(entries: list[RunEntry]) -> None:
    """Delete run folders (only folders xlacli made: they hold a request)."""
    for entry in entries:
        if (entry.path / REQUEST_FILE).is_file():
            shutil.rmtree(entry.path)


def select_removals(entries: list[RunEntry], keep: int | None, failed: bool) -> list[RunEntry]:
    """Runs beyond the newest ``keep``, and (``failed``) every failed run."""
    chosen = entries[keep:] if keep is not None else []
    if failed:
        chosen += [entry for entry in entries if entry.failed and entry not in chosen]
    return chosen
