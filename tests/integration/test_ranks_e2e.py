"""Multi-process runs under torchrun with 2 processes (examples/ranks/): each
rank's folder, the merged report, the first divergence and the hang watchdog.

On XLA:CPU every process is its own world of one device; the gloo backend's
collectives on CPU tensors cross processes, so the skipped all_reduce is a
real deadlock.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli
from tests.ranks_run import RanksRun
from tests.recorded_cli import run_under_torchrun

pytestmark = pytest.mark.e2e
RANKS = EXAMPLES / "ranks"


def torchrun(
    out: Path, example: str, *args: str, command_name: str = "compile", cwd: Path | None = None
) -> RanksRun:
    """``torchrun --nproc_per_node 2 -m xlacli COMMAND EXAMPLE --out OUT ARGS``, each
    rank's model run recorded and replayed (``run_under_torchrun``): torchrun, the
    ranks' xlacli processes, their waiting and merging run as users run them."""
    argv = [command_name, str(RANKS / example), "--out", str(out), *args]
    done = run_under_torchrun(2, argv, cwd or Path.cwd(), None, timeout=600)
    return RanksRun(done.returncode, done.stdout, done.stderr, out)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, RanksRun]:
    root = tmp_path_factory.mktemp("ranks")
    return {
        name: torchrun(root / name, f"{name}.py")
        for name in ("healthy", "master_print", "short_shard", "rank_branch", "master_eval")
    }


@pytest.fixture(scope="module")
def hang(tmp_path_factory) -> RanksRun:
    out = tmp_path_factory.mktemp("hang") / "run"
    # A hang fires only once every rank is idle that long (hang_watch.py): a
    # slow machine's busy ranks never trip it, so the test need not wait long.
    return torchrun(out, "skipped_all_reduce.py", "--hang-timeout", "10")


def test_each_rank_writes_its_own_folder_and_rank_0_merges(runs):
    healthy = runs["healthy"]
    assert healthy.code == 0, healthy.stderr[-3000:]
    assert sorted(p.name for p in healthy.out.iterdir()) == ["rank-0", "rank-1", "ranks.json"]
    merged = healthy.merged
    assert (merged["world_size"], merged["launcher"], merged["missing"]) == (2, "torchrun", [])
    assert merged["divergence"] is None
    assert "The ranks agree" in healthy.stdout
    assert healthy.stdout.count("2 ranks (torchrun)") == 1  # printed once, by rank 0


def test_counts_per_rank_equal_torch_xlas_own_metrics(runs):
    for run in runs.values():
        run.assert_counts_equal_metrics()


def _divergence(run: RanksRun) -> dict:
    assert run.code == 0, run.stderr[-3000:]
    divergence = run.merged["divergence"]
    assert divergence is not None, run.stdout
    return divergence


def _diverging(divergence: dict) -> dict:
    """The non-reference group and its first graph."""
    group = next(g for g in divergence["groups"] if not g["reference"])
    return {"ranks": group["ranks"], "graph": group["only_here"][0]}


def test_master_only_value_read(runs):
    divergence = _divergence(runs["master_print"])
    assert (divergence["step"], divergence["category"]) == (2, "host_sync")
    assert divergence["location"].endswith("master_print.py:31")
    side = _diverging(divergence)
    assert side["ranks"] == [0] and side["graph"]["trigger"] == "host_sync"
    assert "rank 0 ran an extra graph" in divergence["summary"]
    assert "master_print.py:31" in runs["master_print"].stdout
    assert "loss.item()" in runs["master_print"].stdout  # the user's line, as written


def test_rank_with_a_shorter_last_batch(runs):
    divergence = _divergence(runs["short_shard"])
    assert (divergence["step"], divergence["category"]) == (1, "input_shape")
    assert divergence["location"].endswith("short_shard.py:32")
    assert _diverging(divergence)["ranks"] == [1]
    assert "f32[12,8] (at short_shard.py:32) where rank 0 had f32[16,8]" in divergence["summary"]


def test_branch_on_the_rank(runs):
    divergence = _divergence(runs["rank_branch"])
    assert (divergence["step"], divergence["category"]) == (2, "graph_structure")
    assert divergence["location"].endswith("rank_branch.py:28")  # the branch's own line
    side = _diverging(divergence)
    assert side["ranks"] == [1] and side["graph"]["site"].endswith("rank_branch.py:32")
    assert not divergence["collectives"]  # gloo's collectives are outside the XLA graphs
    rows = {row["rank"]: row for row in runs["rank_branch"].merged["ranks"]}
    assert (rows[0]["compilations"], rows[1]["compilations"]) == (1, 2)


def test_evaluation_only_rank_0_runs(runs):
    divergence = _divergence(runs["master_eval"])
    assert (divergence["step"], divergence["category"]) == (1, "sync_site")
    assert divergence["location"].endswith("master_eval.py:42")  # the call, in the loop
    side = _diverging(divergence)
    assert side["ranks"] == [0] and side["graph"]["site"].endswith("master_eval.py:23")


def test_hang_shows_both_ranks_stacks_and_stops_them(hang):
    assert hang.code != 0
    merged = hang.merged
    waits = {h["rank"]: h for h in merged["hangs"]}
    assert waits[0]["state"] == waits[1]["state"] == "waiting"
    assert waits[0]["waits_in"] == "all_reduce" and waits[1]["waits_in"] == "recv"
    assert waits[0]["location"].endswith("skipped_all_reduce.py:20")
    assert waits[1]["location"].endswith("skipped_all_reduce.py:26")
    assert waits[0]["step"] == waits[1]["step"] == 3
    assert "rank 0 waits in all_reduce at" in hang.stdout
    assert "rank 1 waits in recv at" in hang.stdout
    for rank in (0, 1):
        assert (hang.out / f"rank-{rank}" / "hang-stacks.txt").exists()
        assert "nothing progressed for 10 s" in hang.rank_report(rank)["error"]["message"]


def test_hang_leaves_no_process_behind(hang):
    leftover = subprocess.run(
        ["pgrep", "-f", str(hang.out)], capture_output=True, text=True
    ).stdout.split()
    assert leftover == []


def test_nproc_launches_torchrun_and_a_normal_run_leaves_no_trace_of_the_watchdog(tmp_path):
    out = tmp_path / "run"
    result = run_cli(
        "compile", RANKS / "healthy.py", "--nproc", "2", "--out", out, "--hang-timeout", "120"
    )
    run = RanksRun(result.code, result.stdout, result.stderr, out)
    assert run.code == 0, run.stderr[-3000:]
    assert run.merged["world_size"] == 2 and "The ranks agree" in run.stdout
    run.assert_counts_equal_metrics()  # a live torchrun run, held to torch_xla's own counts
    for rank in (0, 1):
        names = {p.name for p in (run.out / f"rank-{rank}").iterdir()}
        assert not names & {"hang.json", "hang-stacks.txt", ".hang-heartbeat"}
    assert run.merged["hangs"] == []


def test_check_passes_agreeing_ranks_and_fails_diverging_ones(tmp_path):
    # Baselines named from the test's folder: the same command in every session.
    healthy = torchrun(
        tmp_path / "healthy",
        "healthy.py",
        "--baseline",
        "healthy.json",
        "--update-baseline",
        command_name="check",
        cwd=tmp_path,
    )
    assert healthy.code == 0, healthy.stderr[-3000:]
    assert (tmp_path / "healthy.json").exists()  # written once, by rank 0
    diverging = torchrun(
        tmp_path / "master",
        "master_print.py",
        "--baseline",
        "master.json",
        "--update-baseline",
        command_name="check",
        cwd=tmp_path,
    )
    assert diverging.code == 1
    assert "xlacli: error: the ranks diverge at step 2: rank 0 ran an extra graph" in (
        diverging.stderr
    )


def test_profile_puts_the_ranks_step_times_side_by_side(tmp_path):
    # The script's first sync is known to be the loop's first iteration only at its
    # second: the window opens after two of its four steps and traces the last two.
    run = torchrun(
        tmp_path / "prof", "rank_branch.py", "--warmup", "1", "--steps", "3", command_name="profile"
    )
    assert run.code == 0, run.stderr[-3000:]
    stragglers = run.merged["stragglers"]
    rows = {r["rank"]: r for r in stragglers["ranks"]}
    assert sorted(rows) == [0, 1] and rows[0]["steps"] == rows[1]["steps"] == 2
    # Rank 1 compiles its branch inside the profiled window; rank 0 compiles nothing there.
    assert rows[1]["per_step_s"]["compile"] > 0 == rows[0]["per_step_s"]["compile"]
    assert run.merged["divergence_checked"] is False
    assert "Step time per rank" in run.stdout and "Slowest: rank" in run.stdout


STUCK_SCRIPT = """\
import threading

import torch
import torch_xla

x = torch.ones(4).to(torch_xla.device())
y = (x * 2).sum()
torch_xla.sync()
threading.Event().wait()  # nothing will ever set it
"""


def test_one_process_hang_is_explained_too(tmp_path):
    script = tmp_path / "stuck.py"
    script.write_text(STUCK_SCRIPT)
    result = run_cli("compile", script, "--out", tmp_path / "run", "--hang-timeout", "5")
    assert result.code == 3, result.stderr
    assert "nothing progressed for 5 s (--hang-timeout) during step 1" in result.stderr
    assert (
        "the process waits in wait at" in result.stderr and "stuck.py:9 (<module>)" in result.stderr
    )
    assert (tmp_path / "run" / "hang-stacks.txt").exists()
    assert not (tmp_path / "run" / ".hang-heartbeat").exists()
