"""The parent's side of starting a child: woken at its end, and nothing heavy
imported before it starts (issue 40, item 2)."""

from __future__ import annotations

import subprocess
import sys
import time

from xlacli.capture.runner import _ExitWait


def test_the_wait_returns_the_exit_code_as_the_child_ends():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    exited = _ExitWait(process)
    try:
        assert exited.wait(0.01) is None  # still running
        started = time.monotonic()
        while (code := exited.wait(5.0)) is None:
            pass
        assert code == 0
        assert time.monotonic() - started < 3.0
    finally:
        exited.close()


def test_a_failing_child_gives_its_code():
    process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    exited = _ExitWait(process)
    try:
        while (code := exited.wait(5.0)) is None:
            pass
        assert code == 3
    finally:
        exited.close()


def test_starting_a_compile_imports_no_report_code_nor_rich():
    # What the command imports before its child starts (cli.main, the compile
    # flow's module): none of what only the report and the progress bar need.
    code = (
        "import sys, xlacli.cli.main, xlacli.api, xlacli.flows.session;"
        "heavy = [m for m in sys.modules if m.startswith(('rich', 'xlacli.report', "
        "'xlacli.assemble', 'xlacli.analysis', 'xlacli.render', 'xlacli.hlo', 'ctypes', "
        "'importlib.metadata'))];"
        "print(heavy)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
