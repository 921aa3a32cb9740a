from __future__ import annotations

import dataclasses
from pathlib import Path

from rich.console import Console

from tests.unit.ranks.reports import FIRST, STEP, compile_event, graph, rank_report
from xlacli.assemble.ranks import merge_ranks
from xlacli.capture.rank_wait import wait_for_merged, wait_for_reports
from xlacli.render.ranks import ranks_text
from xlacli.report.ranks import load_ranks, save_ranks
from xlacli.report.run_report import save_report


def _save(out: Path, rank: int, report) -> None:
    folder = out / f"rank-{rank}"
    folder.mkdir(parents=True)
    save_report(dataclasses.replace(report, run_dir=str(folder.resolve())), folder)


def _text(report, out: Path) -> str:
    console = Console(width=200, record=True)
    console.print(ranks_text(report, out))
    return console.export_text()


def test_merge_reads_every_rank_and_names_the_missing_one(tmp_path: Path):
    read = graph("bbbb2222", "/w/train.py:31", trigger="host_sync")
    _save(
        tmp_path,
        0,
        rank_report(
            [("aaaa1111",), ("bbbb2222", "aaaa1111")],
            [STEP, read],
            [FIRST, compile_event(1, "bbbb2222", "host_sync", "/w/train.py:31")],
        ),
    )
    _save(tmp_path, 1, rank_report([("aaaa1111",)] * 2, [STEP], [FIRST]))
    merged = merge_ranks(tmp_path, 3, "torchrun")
    assert merged.missing == (2,)
    assert [(r.rank, r.compilations, r.run_dir) for r in merged.ranks] == [
        (0, 2, "rank-0"),
        (1, 1, "rank-1"),
    ]
    assert merged.divergence is not None and merged.divergence.step == 1
    save_ranks(merged, tmp_path)
    assert load_ranks(tmp_path) == merged
    text = _text(merged, tmp_path)
    assert "Missing: rank 2 never wrote a report." in text
    assert "First divergence at step 1: rank 0 ran an extra graph" in text


def test_agreeing_ranks_say_so_in_one_line(tmp_path: Path):
    for rank in (0, 1):
        _save(tmp_path, rank, rank_report([("aaaa1111",)] * 3, [STEP], [FIRST]))
    merged = merge_ranks(tmp_path, 2, "torchrun")
    assert merged.agree and merged.hangs == ()
    assert "The ranks agree: every rank ran the same graphs in each of its 3 steps." in _text(
        merged, tmp_path
    )


def test_waits_end_at_their_timeout(tmp_path: Path):
    _save(tmp_path, 0, rank_report([("aaaa1111",)], [STEP], [FIRST]))
    assert wait_for_reports(tmp_path, 2, timeout_s=0.3) == (1,)
    assert not wait_for_merged(tmp_path, timeout_s=0.3)


def test_an_unreadable_rank_report_is_a_problem_not_a_failed_merge(tmp_path: Path):
    _save(tmp_path, 0, rank_report([("aaaa1111",)], [STEP], [FIRST]))
    (tmp_path / "rank-1").mkdir()
    (tmp_path / "rank-1" / "report.json").write_text("{not json")
    merged = merge_ranks(tmp_path, 2, "torchrun")
    assert merged.missing == (1,)
    assert len(merged.problems) == 1 and merged.problems[0].startswith("rank 1: ")
    assert "is not an xlacli run folder or report.json" in merged.problems[0]


def test_runs_lists_a_run_whose_script_started_its_ranks(tmp_path: Path):
    from xlacli.flows.saved_runs import describe_run
    from xlacli.run_folder.request import CaptureRequest

    CaptureRequest("/w/spawning.py", None, 0, target_kind="script").save(
        tmp_path / "request.json"
    )  # the main process's own files; its report is not written
    for rank in (0, 1):
        _save(tmp_path, rank, rank_report([("aaaa1111",)] * 2, [STEP], [FIRST]))
    save_ranks(merge_ranks(tmp_path, 2, "torch.multiprocessing.spawn"), tmp_path)
    entry = describe_run(tmp_path)
    assert (entry.model, entry.verdict, entry.failed) == (
        "spawning.py",
        "2 ranks (torch.multiprocessing.spawn) agree",
        False,
    )
    (tmp_path / "ranks.json").unlink()
    save_ranks(merge_ranks(tmp_path, 1, "xmp.spawn"), tmp_path)
    assert "One rank: nothing to compare (2 steps)" in _text(load_ranks(tmp_path), tmp_path)
