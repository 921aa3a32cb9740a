"""The dump read while the child runs (assemble/dump_prefetch.py): settled files
are copied and parsed once, the report's cache takes them by content, and a
file seen half written is parsed again from what it finally holds."""

from __future__ import annotations

import os
import shutil

from tests.conftest import GOLDEN
from xlacli.assemble.dump_prefetch import DumpPrefetch
from xlacli.assemble.graph_files import HloCache
from xlacli.capture.dump_stage import keep_dump_files
from xlacli.hlo import parse_hlo_file

DUMP = GOLDEN / "host_sync" / "xla-dump"
AFTER = "module_0002.SyncTensorsGraph.31.cpu_after_optimizations.txt"
LATER = 1e12  # a clock far past every file's last change


def _stage(tmp_path):
    stage = tmp_path / "stage"
    shutil.copytree(DUMP, stage)
    return stage


def test_settled_files_are_copied_parsed_and_found_by_content(tmp_path):
    stage, kept = _stage(tmp_path), tmp_path / "raw" / "xla-dump"
    prefetch = DumpPrefetch()
    prefetch.look(stage, kept, now=LATER)
    assert sorted(p.name for p in kept.iterdir()) == sorted(p.name for p in stage.iterdir())
    # The report reads its own copy (moved under graphs/): the same bytes, found.
    graph = tmp_path / "run" / "graphs" / "h" / "hlo.after.txt"
    graph.parent.mkdir(parents=True)
    shutil.copyfile(kept / AFTER, graph)
    early = prefetch.module(graph)
    assert early is not None and early == parse_hlo_file(graph)
    assert early.filename == str(graph)
    cache = HloCache(tmp_path / "run", prefetch)
    assert cache.module("graphs/h/hlo.after.txt") == early
    # Nothing new: the next look reads nothing again.
    (kept / AFTER).unlink()
    prefetch.look(stage, kept, now=LATER)
    assert not (kept / AFTER).exists()


def test_a_file_still_being_written_waits_and_a_half_copy_is_never_used(tmp_path):
    stage, kept = _stage(tmp_path), tmp_path / "kept"
    whole = (stage / AFTER).read_bytes()
    (stage / AFTER).write_bytes(whole[: len(whole) // 2])
    prefetch = DumpPrefetch()
    prefetch.look(stage, kept, now=os.stat(stage / AFTER).st_mtime)  # just written
    assert not (kept / AFTER).exists()
    prefetch.look(stage, kept, now=LATER)  # settled, yet only half there
    assert (kept / AFTER).read_bytes() == whole[: len(whole) // 2]
    (stage / AFTER).write_bytes(whole)  # XLA finishes it
    keep_dump_files(stage, kept)  # the harvest copies it again: it changed
    assert (kept / AFTER).read_bytes() == whole
    assert prefetch.module(kept / AFTER) is None  # parsed from the whole file, later


def test_the_harvest_skips_what_was_copied_already(tmp_path):
    stage, kept = _stage(tmp_path), tmp_path / "kept"
    DumpPrefetch().look(stage, kept, now=LATER)
    assert keep_dump_files(stage, kept) == 0
    (stage / "module_0009.SyncTensorsGraph.2.before_optimizations.txt").write_text("HloModule m")
    assert keep_dump_files(stage, kept) == 1
