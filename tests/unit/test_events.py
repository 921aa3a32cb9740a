from xlacli.run.events import EventFollower, read_events


def test_follower_reads_only_complete_new_lines(tmp_path):
    path = tmp_path / "events.jsonl"
    follower = EventFollower(path)
    assert follower.poll().steps == []  # no file yet
    path.write_text('{"event": "start"}\n{"event": "step", "step": 0}\n{"event": "st')
    log = follower.poll()
    assert log.start is not None and [s["step"] for s in log.steps] == [0]
    with path.open("a") as handle:
        handle.write('ep", "step": 1}\n{"event": "end"}\n')
    log = follower.poll()
    assert [s["step"] for s in log.steps] == [0, 1] and log.ended
    assert read_events(path).steps == log.steps


def test_a_cut_last_line_is_skipped(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"event": "step", "step": 0}\n{"event": "step", "st')
    assert [s["step"] for s in read_events(path).steps] == [0]
