from __future__ import annotations

from pathlib import Path

from tests.unit.ranks.reports import FIRST, STEP, rank_report
from xlacli.analysis.ranks.hangs import explain_hang
from xlacli.capture.hang_watch import HangWatch
from xlacli.capture.ranks import rank_folders, rank_place
from xlacli.parse.frames import CodeRoots
from xlacli.parse.stack_dump import main_thread, parse_stack_dump
from xlacli.run_folder.hang import HANG_FILE, HEARTBEAT_FILE
from xlacli.run_folder.request import RunPaths

DUMP = """\
some output the script printed
Thread 0x00007f55ab7fe640 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 324 in wait
  File "/usr/lib/python3.11/threading.py", line 1002 in _bootstrap

Current thread 0x00007f55e0e4c740 (most recent call first):
  File "/venv/site-packages/torch/distributed/distributed_c10d.py", line 2942 in all_reduce
  File "/venv/site-packages/torch/distributed/c10d_logger.py", line 81 in wrapper
  File "/w/train.py", line 22 in average
  File "/w/train.py", line 61 in main
  File "/w/train.py", line 70 in <module>
  File "<frozen runpy>", line 88 in _run_code
  File "/xl/xlacli/capture/child.py", line 9 in <module>
"""
ROOTS = CodeRoots(("/usr/lib/python3.11/",), "/xl/xlacli/")


def test_stack_dump_is_read_thread_by_thread():
    stacks = parse_stack_dump(DUMP)
    assert [s.current for s in stacks] == [False, True]
    main = main_thread(stacks)
    assert main is not None and main.frames[0].function == "all_reduce"
    assert main.frames[2].location == "/w/train.py:22"


def test_a_waiting_rank_is_placed_at_its_collective_and_users_line():
    report = rank_report([("aaaa1111",)] * 12, [STEP], [FIRST])
    hang = explain_hang(0, report, DUMP, ROOTS)
    assert (hang.state, hang.waits_in) == ("waiting", "all_reduce")
    assert (hang.location, hang.function, hang.step) == ("/w/train.py:22", "average", 12)
    assert (hang.last_graph, hang.last_site) == ("aaaa1111", "/w/train.py:32")
    assert hang.stack[-1] == "<module> (/w/train.py:70)"  # runpy and xlacli left out


def test_a_rank_without_stacks_had_ended():
    hang = explain_hang(1, None, None, ROOTS)
    assert (hang.state, hang.waits_in, hang.step) == ("ended", None, 0)


def test_rank_place_from_the_launchers_variables():
    assert rank_place({}) is None
    assert rank_place({"RANK": "0", "WORLD_SIZE": "1"}) is None  # one process: unchanged
    place = rank_place({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"})
    assert place is not None and (place.rank, place.world_size, place.launcher) == (
        1,
        2,
        "torchrun",
    )
    pod = rank_place({"TPU_WORKER_ID": "3", "TPU_WORKER_HOSTNAMES": "a,b,c,d"})
    assert pod is not None and (pod.rank, pod.world_size, pod.launcher) == (3, 4, "tpu-pod")


def _folders(tmp_path: Path) -> list[RunPaths]:
    return [RunPaths(folder) for folder in rank_folders(tmp_path).values()]


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_watch_fires_only_when_no_rank_grows(tmp_path: Path):
    for rank in (0, 1):
        (tmp_path / f"rank-{rank}").mkdir()
    clock = _Clock()
    watch = HangWatch(10.0, lambda: _folders(tmp_path), clock=clock)
    assert not watch.stalled()
    clock.now = 8.0
    (tmp_path / "rank-1" / HEARTBEAT_FILE).write_text(".")  # rank 1 is busy
    assert not watch.stalled()
    clock.now = 17.0
    assert not watch.stalled()
    clock.now = 18.5
    assert watch.stalled() and watch.fired_after_s == 10.5


def test_another_ranks_hang_fires_the_watch_at_once(tmp_path: Path):
    for rank in (0, 1):
        (tmp_path / f"rank-{rank}").mkdir()
    watch = HangWatch(600.0, lambda: _folders(tmp_path), clock=_Clock())
    assert not watch.stalled()
    (tmp_path / "rank-1" / HANG_FILE).write_text("{}")
    assert watch.stalled()


def test_nproc_is_taken_out_of_the_command_the_ranks_run():
    from xlacli.flows.launch import without_nproc

    argv = ["compile", "t.py", "--nproc", "2", "--out", "o", "--", "--nproc", "3"]
    assert without_nproc(argv) == ["compile", "t.py", "--out", "o", "--", "--nproc", "3"]
    assert without_nproc(["check", "--nproc=4", "t.py"]) == ["check", "t.py"]
