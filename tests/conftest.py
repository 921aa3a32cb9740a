"""Shared fixtures: where the test assets are."""

from __future__ import annotations

import json
import os
import re
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
# Ctrl-C reaches a command typed at a terminal; a shell's background job (`pytest ... &`)
# ignores SIGINT, and every process it starts inherits that (Python then installs no
# KeyboardInterrupt handler). Tests that interrupt xlacli start it through this prefix:
# SIGINT back at its default, then exec (a default disposition survives exec).
PYTHON_AS_AT_A_TERMINAL = (
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])",
)
# xlacli's own package: no message may show a file of it (our traceback). The
# checkout's folder may itself be called xlacli (git clone's default), so
# paths are resolved, never matched as text.
PACKAGE = (REPO / "xlacli").resolve()
_PY_FILE = re.compile(r"[^\s'\"(),:]+\.py")


@dataclass(frozen=True)
class CliResult:
    code: int
    stdout: str
    stderr: str
    cwd: Path | None = None  # where it ran, to resolve the relative paths it printed


def package_files_in(text: str, cwd: Path | None = None) -> list[str]:
    """The paths in ``text`` that are files of xlacli's own package."""
    found = []
    for token in _PY_FILE.findall(text):
        path = Path(token) if Path(token).is_absolute() else (cwd or Path.cwd()) / token
        if path.resolve().is_relative_to(PACKAGE):
            found.append(token)
    return found


def run_cli(
    *args: str | Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 300,
    live: bool = False,
    shared: bool = False,
) -> CliResult:
    """Run ``xlacli ARGS`` as users do and capture everything. A ``compile`` or
    ``check`` replays its recorded child when it has one (``tests/recorded_cli.py``:
    the real parent, the model's run as recorded); ``live``: always run the model;
    ``shared``: the session's one recording of the command, whichever test runs it."""
    from tests.recorded_cli import mode_for, recorded_call, replayable, run_through_recording

    argv = [str(arg) for arg in args]
    where = Path(cwd or os.getcwd()).resolve()
    if argv[:1] and argv[0] in IN_PROCESS and not live:
        return _run_in_process(argv, cwd, env)
    if not live and replayable(argv, env):
        call = recorded_call(argv, where, env, shared=shared)
        mode = mode_for(call)  # a stale recording fails the test, saying how to record it
        if mode != "live":
            done = run_through_recording(mode, call, argv, where, env, timeout)
            return CliResult(done.returncode, done.stdout, done.stderr, cwd)
    completed = subprocess.run(
        [sys.executable, "-m", "xlacli", *argv],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return CliResult(completed.returncode, completed.stdout, completed.stderr, cwd)


# Commands that never start a child: run in this process (a fresh interpreter costs
# more than the command), with the working folder, environment and streams a
# subprocess would have.
IN_PROCESS = ("report", "runs", "diff-hlo")


def _run_in_process(argv: list[str], cwd: Path | None, env: dict[str, str] | None) -> CliResult:
    import contextlib
    import io

    from xlacli.cli.main import main

    stdout, stderr = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.update({"COLUMNS": "200", **(env or {})})
    try:
        os.chdir(cwd or saved_cwd)
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(argv)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return CliResult(code, stdout.getvalue(), stderr.getvalue(), cwd)


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
    assert not package_files_in(result.stderr, result.cwd), result.stderr
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


@dataclass(frozen=True)
class Capture:
    """One ``xlacli`` run shared by every test that runs the same command."""

    run: Path  # its run folder (--out)
    result: CliResult

    @property
    def report(self) -> dict:
        return json.loads((self.run / "report.json").read_text())


def _shared_root(factory: pytest.TempPathFactory) -> Path:
    """A folder every pytest-xdist worker of this session sees (the parent of the
    workers' own base folders), so that each capture runs once per session."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def _named_basetemp(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Recordings name pytest's temporary folder by a placeholder (``@TMP@``),
    wherever ``--basetemp`` put it (``tests/recorded_cli.py``)."""
    from tests.recorded_cli import BASETEMP_VARIABLE

    os.environ[BASETEMP_VARIABLE] = str(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def capture_once(tmp_path_factory: pytest.TempPathFactory):
    """``capture_once("compile", "examples/mlp.py", "--steps", "3")``: the command run
    once per session from the checkout's root with ``--out`` a shared run folder
    (before a script's ``--``), whichever test or worker asks first; the others
    wait for it and read the same folder. Only for tests that read the run: a test
    that changes its folder runs its own command."""
    import fcntl
    import hashlib

    root = _shared_root(tmp_path_factory) / "captures"

    def capture(*args: str | Path) -> Capture:
        words = [str(arg) for arg in args]
        folder = root / hashlib.sha256("\0".join(words).encode()).hexdigest()[:16]
        folder.mkdir(parents=True, exist_ok=True)
        saved = folder / "result.json"
        with (folder / "lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not saved.exists():
                at = words.index("--") if "--" in words else len(words)
                argv = [*words[:at], "--out", str(folder / "run"), *words[at:]]
                result = run_cli(*argv, cwd=REPO, timeout=900, shared=True)
                saved.write_text(json.dumps([result.code, result.stdout, result.stderr]))
        code, stdout, stderr = json.loads(saved.read_text())
        return Capture(folder / "run", CliResult(code, stdout, stderr, REPO))

    return capture


# The longest modules, started first. Under `-n 2 --dist loadfile` a module runs on one
# worker, handed out in collection order: a 7-minute module handed out last kept one
# worker busy for minutes after the other had run out of work. Longest first, the short
# unit modules fill in at the end. (Minutes on one worker, from CI's durations.)
LONGEST_FIRST = (
    "tests/integration/test_report_golden.py",  # every example's documented run
    "tests/integration/test_docs_commands.py",  # every command the docs show, in order
    "tests/integration/test_ranks_e2e.py",
    "tests/integration/test_compiled_scripts_e2e.py",
    "tests/integration/test_html_browser.py",
    "tests/integration/test_check.py",
    "tests/integration/test_advice_e2e.py",
    "tests/integration/test_spawn_e2e.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: index for index, path in enumerate(LONGEST_FIRST)}

    def order(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return rank.get(path, len(rank))

    items.sort(key=order)  # stable: the rest keep their order
