"""Following the processes a script starts itself: which are ranks, the command
line that records them, where each records (no process is started here)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from torch.multiprocessing.spawn import _wrap

from xlacli.capture.env import rank_template
from xlacli.child.rank_process import FollowedCall
from xlacli.child.spawn_follow import RankChoice, SpawnFollower, _choice, is_user_function
from xlacli.run_folder.request import CaptureRequest
from xlacli.run_folder.spawned import (
    MULTIPROCESSING,
    RANK_PLACEHOLDER,
    TORCH_SPAWN,
    XMP_SPAWN,
    RankTemplate,
    SpawnedProcess,
    spawned_processes,
)


def train(rank: int) -> None:  # the user's own function: this file is not a library
    del rank


def _process(target, args=()) -> multiprocessing.process.BaseProcess:
    return multiprocessing.get_context("spawn").Process(target=target, args=args)


def test_torch_spawns_wrap_is_rank_i_and_a_users_function_counts_in_start_order():
    own = iter(range(10))
    assert _choice(_process(_wrap, (train, 1, (), "err")), None, own) == RankChoice(1, TORCH_SPAWN)
    assert _choice(_process(train), None, own).rank == 0
    assert _choice(_process(train), None, own) == RankChoice(1, MULTIPROCESSING)


def test_a_librarys_helper_process_is_not_a_rank_unless_xmp_started_it():
    from concurrent.futures.process import _process_worker

    assert not is_user_function(_process_worker)
    assert _choice(_process(_process_worker), None, iter(range(3))) is None
    assert _choice(_process(_process_worker), iter(range(3)), iter(range(3))) == RankChoice(
        0, XMP_SPAWN
    )


def test_the_spawn_command_line_records_the_rank_first(tmp_path):
    request = tmp_path / "request.json"
    CaptureRequest("train.py", None, 0, target_kind="script").save(request)
    template = RankTemplate(str(tmp_path / f"rank-{RANK_PLACEHOLDER}"), {})
    follower = SpawnFollower(template, request, recorder=None)  # type: ignore[arg-type]
    follower._originals = (None, lambda **kwds: ["python", "-c", "spawn_main()", "--fork"])
    assert follower._command_line() == ["python", "-c", "spawn_main()", "--fork"]
    follower._starting.rank = 1
    command = follower._command_line()
    assert command[2].startswith("from xlacli.child.rank_process import follow; follow(1); ")
    assert command[2].endswith("spawn_main()")


def test_each_rank_gets_its_own_debug_files(tmp_path):
    request = CaptureRequest("train.py", None, 0, target_kind="script", run_to_end=True)
    folder = tmp_path / f"rank-{RANK_PLACEHOLDER}"
    template = RankTemplate.loads(rank_template({}, request, folder).dumps())
    env = template.environment_of(1)
    assert env["PT_XLA_DEBUG_FILE"] == str(tmp_path / "rank-1" / "raw" / "pt-xla-debug.txt")
    assert f"--xla_dump_to={tmp_path / 'rank-1' / 'raw' / 'xla-dump'}" in env["XLA_FLAGS"]
    assert template.folder_of(1) == tmp_path / "rank-1"
    assert "PJRT_DEVICE" not in env  # the rest is inherited from the child


def test_the_followed_processes_are_read_back_by_rank(tmp_path):
    for rank in (1, 0):
        folder = tmp_path / f"rank-{rank}"
        folder.mkdir()
        SpawnedProcess(rank, 100 + rank, TORCH_SPAWN).save(folder)
    (tmp_path / "rank-2").mkdir()  # started, its record not written yet
    found = spawned_processes(tmp_path)
    assert list(found) == [0, 1] and found[1].pid == 101
    assert spawned_processes(Path(tmp_path / "nothing")) == {}


def test_a_followed_call_pickles_with_the_users_function():
    import pickle

    call = pickle.loads(pickle.dumps(FollowedCall(train)))
    assert call.fn is train and call(3) is None  # no recording in this process


class _Warnings:
    def __init__(self) -> None:
        self.messages: list[str] = []

    def warn(self, message: str) -> None:
        self.messages.append(message)


def test_a_forked_process_is_not_followed_and_the_run_says_so(tmp_path):
    request = tmp_path / "request.json"
    CaptureRequest("train.py", None, 0, target_kind="script").save(request)
    warnings = _Warnings()
    template = RankTemplate(str(tmp_path / f"rank-{RANK_PLACEHOLDER}"), {})
    follower = SpawnFollower(template, request, recorder=warnings)  # type: ignore[arg-type]
    forked = multiprocessing.get_context("fork").Process(target=train, args=(0,))
    assert follower._choose(forked) is None
    assert follower._choose(multiprocessing.get_context("fork").Process(target=train)) is None
    assert len(warnings.messages) == 1 and "'fork' start method" in warnings.messages[0]
    assert follower._choose(_process(train)) == RankChoice(2, MULTIPROCESSING)


def test_a_failed_rank_is_named_in_the_error_the_run_raises():
    from xlacli.errors import ModelError
    from xlacli.flows.spawned import SpawnedRun

    failed = ModelError("train raised ValueError: bad shard during step 2", details="tb")
    run = SpawnedRun(None, {}, {0: None, 1: failed}, Path("run"))  # type: ignore[arg-type]
    error = run.first_error
    assert isinstance(error, ModelError) and error.details == "tb"
    assert error.message == "rank 1: train raised ValueError: bad shard during step 2"
    assert SpawnedRun(None, {}, {0: None}, Path("run")).first_error is None  # type: ignore[arg-type]
