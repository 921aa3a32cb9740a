"""The parent's side of starting a child: woken at its end, and nothing heavy
imported before it starts (issue 40, item 2)."""

from __future__ import annotations

import io
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


def test_the_child_exits_with_its_code_after_atexit_and_buffered_output(tmp_path):
    # The child skips the interpreter's teardown (exit_without_teardown), not
    # what a normal exit runs for the program: atexit callbacks, stdio flushed.
    marker = tmp_path / "atexit.txt"
    code = (
        "import atexit, ctypes, sys\n"
        "from xlacli.child.child import exit_without_teardown\n"
        f"atexit.register(lambda: open({str(marker)!r}, 'w').write('ran'))\n"
        "print('python line')\n"
        "ctypes.CDLL(None).printf(b'c line\\n')\n"
        "exit_without_teardown(7)\n"
    )
    output = tmp_path / "out.txt"
    with output.open("w") as out:  # a file: C's stdout is fully buffered
        done = subprocess.run([sys.executable, "-c", code], stdout=out, check=False)
    assert done.returncode == 7
    assert marker.read_text() == "ran"
    assert output.read_text().splitlines() == ["python line", "c line"]


def test_a_file_the_program_left_open_is_written_out(tmp_path):
    # Python's teardown would close (and flush) it; the child's exit does too. The
    # flush itself, here (coverage stops at the exit's atexit pass, so the lines after
    # it are seen only in this process) ...
    from xlacli.child.child import _flush_open_files

    class StepLog(io.TextIOWrapper):  # a program's own kind of file, made after xlacli started
        pass

    kept = (tmp_path / "kept.txt").open("w", buffering=1 << 16)
    binary = (tmp_path / "kept.bin").open("wb", buffering=1 << 16)
    own = StepLog(io.BufferedWriter(io.FileIO(tmp_path / "own.txt", "w"), 1 << 16))
    try:
        kept.write("step 3 loss 0.25\n")
        binary.write(b"\x00\x01")
        own.write("step 4\n")
        assert (tmp_path / "kept.txt").read_text() == ""  # still in the buffer
        _flush_open_files()
        assert (tmp_path / "kept.txt").read_text() == "step 3 loss 0.25\n"
        assert (tmp_path / "kept.bin").read_bytes() == b"\x00\x01"
        assert (tmp_path / "own.txt").read_text() == "step 4\n"
    finally:
        kept.close()
        binary.close()
        own.close()
    # ... and the child's exit running it.
    log = tmp_path / "log.txt"
    code = (
        "from xlacli.child.child import exit_without_teardown\n"
        f"LOG = open({str(log)!r}, 'w')\n"
        "LOG.write('step 1 loss 0.5\\n')\n"
        "exit_without_teardown(0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False)
    assert done.returncode == 0
    assert log.read_text() == "step 1 loss 0.5\n"
