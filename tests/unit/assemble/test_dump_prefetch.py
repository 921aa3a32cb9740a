"""The dump read while the child runs (assemble/dump_prefetch.py): settled files
are copied and parsed once, the report's cache takes them by content, and a
file seen half written is parsed again from what it finally holds."""

from __future__ import annotations

import itertools
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


def test_the_ir_dump_is_parsed_a_whole_block_at_a_time_as_it_grows(tmp_path):
    """The child appends one block at a time; a look between two writes parses the
    blocks written whole, a block half written waits, and the report's parse takes
    the blocks read ahead by their text (the same graphs as a parse of the file)."""
    from xlacli.parse.ir_dump import parse_ir_dump

    text = (GOLDEN / "shape_change" / "ir-dump.txt").read_text()
    cuts = [0, *(text.index("## END_GRAPH", 1 + text.index("## END_GRAPH")) + 5, len(text))]
    path = tmp_path / "ir-dump.txt.0"
    prefetch = DumpPrefetch()
    prefetch.look_ir(path)  # not there yet
    known = []
    with path.open("w", encoding="utf-8") as dump:
        for start, end in itertools.pairwise(cuts):
            dump.write(text[start:end])  # the second cut: inside the second block's last line
            dump.flush()
            prefetch.look_ir(path)
            known.append(len(prefetch.ir_blocks))
    assert known[0] == 1  # the half-written second block waited
    whole = parse_ir_dump(text)
    ahead = parse_ir_dump(text, prefetch.ir_blocks)
    assert ahead == whole and len(whole) == text.count("## END_GRAPH") >= 3
    assert all(any(graph is known for known in prefetch.ir_blocks.values()) for graph in ahead)
