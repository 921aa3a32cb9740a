"""A graph's IR text formatted by a forked copy of the child while it compiles
(issue 40): the same text, nothing of the process's own run twice, and a copy
that fails or hangs costs its graph's block, never the run."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from xlacli.child.ir_text import TextTaker

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")


def _fails(tensors: list[object]) -> str:
    raise RuntimeError("the copy cannot format this")


def _hangs(tensors: list[object]) -> str:
    time.sleep(600)
    return ""


def test_a_forked_copy_writes_the_text_the_process_would(tmp_path: Path) -> None:
    taker = TextTaker(tmp_path / "pending", lambda tensors: f"IR of {len(tensors)} " * 50_000)
    in_process = f"IR of {3} " * 50_000
    texts = [taker.take([1, 2, 3]), taker.take([1, 2, 3])]
    assert [text.text() for text in texts] == [in_process, in_process]
    assert not any(text.failed for text in texts)
    taker.finish()
    assert not (tmp_path / "pending").exists()


def test_a_copy_that_fails_loses_its_text_and_later_texts_are_taken_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taker = TextTaker(tmp_path / "pending", _fails)
    lost = taker.take([1])
    assert lost.text() is None and lost.failed
    taker.stop_forking("the IR of compile 4 was not written")  # what the writer says then
    with pytest.raises(RuntimeError):  # in the process now: its error is the caller's
        taker.take([1])
    assert "taken in the process from now on" in capsys.readouterr().err


def test_a_copy_that_hangs_is_stopped_at_the_deadline(tmp_path: Path) -> None:
    text = TextTaker(tmp_path / "pending", _hangs).take([1])
    assert not text.ready()
    started = time.monotonic()
    assert text.text(deadline=time.monotonic() + 0.5) is None
    assert text.failed and time.monotonic() - started < 10
    assert text.ready()


_PROGRAM = """
import atexit, sys
from pathlib import Path
from xlacli.child.ir_text import TextTaker
atexit.register(lambda: print("atexit ran", flush=True))
print("buffered before the fork")  # stdout is a pipe: held in the buffer
taker = TextTaker(Path(sys.argv[1]), lambda tensors: "the text")
print(taker.take([]).text())
"""


def test_the_copy_runs_nothing_of_the_process_own(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_PROGRAM), str(tmp_path / "pending")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.splitlines() == ["buffered before the fork", "the text", "atexit ran"]


def test_small_graphs_are_taken_in_process_once_one_is_known_small(tmp_path: Path) -> None:
    """A new graph every step of a small model: a fork costs more than its text."""
    taker = TextTaker(tmp_path / "pending", lambda tensors: f"formatted by {os.getpid()}")
    first = taker.take([1]).text()
    later = [taker.take([1]).text() for _ in range(3)]
    assert first != f"formatted by {os.getpid()}"  # not known yet: forked
    assert later == [f"formatted by {os.getpid()}"] * 3


def test_large_graphs_keep_forking(tmp_path: Path) -> None:
    taker = TextTaker(tmp_path / "pending", lambda tensors: f"{os.getpid()} " + "x" * 200_000)
    texts = [taker.take([1]).text() or "" for _ in range(3)]
    assert all(not text.startswith(f"{os.getpid()} ") for text in texts)
