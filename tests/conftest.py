"""Shared fixtures: where the test assets are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ASSETS = Path(__file__).resolve().parent / "assets"
GOLDEN = ASSETS / "golden"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def golden() -> Path:
    return GOLDEN


MODELS = ASSETS / "models"
EXAMPLES = REPO / "examples"


@dataclass(frozen=True)
class CliResult:
    code: int
    stdout: str
    stderr: str


def run_cli(
    *args: str | Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> CliResult:
    """Run ``python -m xlacli ARGS`` as users do and capture everything."""
    completed = subprocess.run(
        [sys.executable, "-m", "xlacli", *map(str, args)],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return CliResult(completed.returncode, completed.stdout, completed.stderr)


def imported_after(statement: str, modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` a fresh interpreter has imported after running ``statement``."""
    code = (
        f"import json, sys; {statement}; "
        f"print(json.dumps(sorted(m for m in {modules!r} if m in sys.modules)))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    return json.loads(completed.stdout)


def assert_clean_error(result: CliResult, code: int, *fragments: str) -> None:
    """One clear error, the right exit code, and none of our traceback."""
    assert result.code == code, (result.code, result.stderr)
    assert "xlacli: error:" in result.stderr
    assert "xlacli/" not in result.stderr.replace("xlacli/runs", ""), result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


def wait_for_events(run: Path, marker: str, count: int, timeout: float = 120) -> None:
    """Wait until the run's events.jsonl holds ``marker`` ``count`` times."""
    deadline = time.monotonic() + timeout
    events = run / "events.jsonl"
    while time.monotonic() < deadline:
        if events.exists() and events.read_text().count(marker) >= count:
            return
        time.sleep(0.2)
    raise AssertionError(f"{events} never held {marker!r} {count} times")
