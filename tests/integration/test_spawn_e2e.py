"""Scripts that start their own ranks (``torch.multiprocessing.spawn``,
``xmp.spawn``), run as one ``xlacli compile``: each spawned process is followed
into ``OUT/rank-R/`` and the parent merges them, as torchrun's ranks are.

On XLA:CPU, ``xmp.spawn`` starts one process; ``torch.multiprocessing.spawn``
with gloo on CPU tensors crosses processes (a real divergence, a real hang).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli
from tests.ranks_run import RanksRun
from xlacli.parse.metrics_report import parse_metrics_report

pytestmark = pytest.mark.e2e
RANKS = EXAMPLES / "ranks"


def compile_run(out: Path, example: str, *args: str, live: bool = False) -> RanksRun:
    result = run_cli("compile", RANKS / example, "--out", out, *args, timeout=600, live=live)
    return RanksRun(result.code, result.stdout, result.stderr, out)


@pytest.fixture(scope="module")
def torch_spawn(tmp_path_factory) -> RanksRun:
    # Live: the capture path of a script's own processes (each spawned rank records
    # itself: child/rank_process.py, child/spawn_follow.py), run to its end.
    out = tmp_path_factory.mktemp("spawn") / "run"
    return compile_run(out, "spawn_master_print.py", live=True)


@pytest.fixture(scope="module")
def processes(tmp_path_factory) -> RanksRun:
    return compile_run(tmp_path_factory.mktemp("process") / "run", "process_rank_branch.py")


@pytest.fixture(scope="module")
def xmp(tmp_path_factory) -> RanksRun:
    return compile_run(tmp_path_factory.mktemp("xmp") / "run", "xmp_spawn.py")


@pytest.fixture(scope="module")
def hang(tmp_path_factory) -> RanksRun:
    out = tmp_path_factory.mktemp("spawn-hang") / "run"
    return compile_run(out, "spawn_skipped_all_reduce.py", "--hang-timeout", "10")


def test_each_spawned_process_gets_its_own_rank_folder(torch_spawn):
    assert torch_spawn.code == 0, torch_spawn.stderr[-3000:]
    merged = torch_spawn.merged
    assert (merged["world_size"], merged["launcher"], merged["missing"]) == (
        2,
        "torch.multiprocessing.spawn",
        [],
    )
    for rank in (0, 1):
        folder = torch_spawn.out / f"rank-{rank}"
        assert (folder / "report.json").exists() and (folder / "metrics.txt").exists()
        assert (folder / "raw" / "pt-xla-debug.txt").exists()  # its own debug log
        assert any(folder.glob("graphs/*/hlo.before.txt"))  # from its own XLA dump
    assert not (torch_spawn.out / "report.json").exists()  # the main process ran no step
    assert "2 ranks (torch.multiprocessing.spawn)" in torch_spawn.stdout
    # rank 0's print went to its own output, as a torchrun rank's does
    assert "step 2 loss" in (torch_spawn.out / "rank-0" / "child.log").read_text()


def test_first_divergence_names_the_step_rank_line_and_category(torch_spawn):
    divergence = torch_spawn.merged["divergence"]
    assert divergence is not None, torch_spawn.stdout
    assert (divergence["step"], divergence["category"]) == (2, "host_sync")
    assert divergence["location"].endswith("spawn_master_print.py:34")
    group = next(g for g in divergence["groups"] if not g["reference"])
    assert group["ranks"] == [0] and group["only_here"][0]["trigger"] == "host_sync"
    assert "loss.item()" in torch_spawn.stdout  # the user's line, as written


def test_a_scripts_own_processes_are_followed_in_start_order(processes):
    assert processes.code == 0, processes.stderr[-3000:]
    merged = processes.merged
    assert (merged["world_size"], merged["launcher"]) == (2, "multiprocessing")
    divergence = merged["divergence"]
    assert (divergence["step"], divergence["category"]) == (2, "graph_structure")
    assert divergence["location"].endswith("process_rank_branch.py:32")  # the branch's line
    group = next(g for g in divergence["groups"] if not g["reference"])
    assert group["ranks"] == [1]


def test_counts_per_spawned_rank_equal_torch_xlas_own_metrics(torch_spawn, processes):
    for run in (torch_spawn, processes):
        run.assert_counts_equal_metrics()


def test_xmp_spawn_of_one_process_is_an_ordinary_run(xmp):
    """Issue 38: a world of one process (xmp.spawn on one device, as torch_xla's
    FSDP examples run) gets the ordinary report, top-level ``compilations`` and
    all, not a ranks report; the launcher is said, the process's files kept."""
    assert xmp.code == 0, xmp.stderr[-3000:]
    assert not (xmp.out / "ranks.json").exists()
    report = json.loads((xmp.out / "report.json").read_text())
    assert report["steps"] == 3 and report["error"] is None
    assert report["launcher"] == "xmp.spawn"  # the launcher noted in the report itself
    metrics = parse_metrics_report((xmp.out / "rank-0" / "metrics.txt").read_text())
    assert report["compilations"] == metrics.counter("UncachedCompile") == 1
    assert report["executions"] == metrics.counter("ExecuteComputation")
    for graph in report["graphs"]:  # its files where the process wrote them
        assert all((xmp.out / path).exists() for path in graph["files"].values())
    assert "process 0 of 1 done" in (xmp.out / "rank-0" / "child.log").read_text()
    assert "started one process (xmp.spawn): an ordinary run" in xmp.stderr
    assert "in the one process xmp.spawn started" in xmp.stdout.splitlines()[1]
    assert xmp.stdout.startswith("no recompile after warm-up"), xmp.stdout[:300]
    assert "One rank" not in xmp.stdout and "nothing to compare" not in xmp.stdout


def test_a_world_of_one_reads_again_as_an_ordinary_run(xmp):
    again = run_cli("report", xmp.out, "--format", "json")
    assert again.code == 0, again.stderr
    assert json.loads(again.stdout)["compilations"] == 1
    page = run_cli("report", xmp.out, "--output", xmp.out / "page.html")
    assert page.code == 0, page.stderr
    assert "rank-0/graphs/" in (xmp.out / "page.html").read_text()


def test_report_merges_a_spawned_run_again(torch_spawn):
    again = run_cli("report", torch_spawn.out, "--format", "json")
    assert again.code == 0, again.stderr
    assert json.loads(again.stdout)["divergence"]["step"] == 2


def test_hang_in_spawned_ranks_shows_both_stacks_and_stops_them(hang):
    assert hang.code != 0
    waits = {h["rank"]: h for h in hang.merged["hangs"]}
    assert waits[0]["waits_in"] == "all_reduce" and waits[1]["waits_in"] == "recv"
    assert waits[0]["location"].endswith("spawn_skipped_all_reduce.py:24")
    assert waits[1]["location"].endswith("spawn_skipped_all_reduce.py:30")
    assert waits[0]["step"] == waits[1]["step"] == 3
    assert "rank 0 waits in all_reduce at" in hang.stdout
    for rank in (0, 1):
        assert (hang.out / f"rank-{rank}" / "hang-stacks.txt").exists()
    leftover = subprocess.run(
        ["pgrep", "-f", str(hang.out)], capture_output=True, text=True
    ).stdout.split()
    assert leftover == []
    for rank in (0, 1):  # the spawned processes, whose command lines name no folder
        pid = json.loads((hang.out / f"rank-{rank}" / "process.json").read_text())["pid"]
        assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


FAILING_ALONE = """\
import torch
import torch_xla
import torch_xla.distributed.xla_multiprocessing as xmp


def train(index):
    x = torch.ones(4, device=torch_xla.device())
    for step in range(3):
        x = x * 2
        torch_xla.sync()
        if step == 1:
            raise ValueError("a bad batch")


if __name__ == "__main__":
    xmp.spawn(train)
"""


def test_a_world_of_one_that_fails_keeps_its_own_error_and_report(tmp_path):
    (tmp_path / "train.py").write_text(FAILING_ALONE)
    # Live: a followed process whose function raises (child/rank_process.py's
    # FollowedCall ends its recording with the user's error).
    result = run_cli("compile", "train.py", "--out", "run", cwd=tmp_path, live=True)
    assert result.code == 3, result.stderr
    assert "ValueError: a bad batch" in result.stderr and "rank 0:" not in result.stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["error"]["kind"] == "model" and report["steps"] == 2
