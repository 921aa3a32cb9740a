from xlacli.run_folder.events import EventFollower, read_events
from xlacli.run_folder.step_events import StepEvent


def test_follower_reads_only_complete_new_lines(tmp_path):
    path = tmp_path / "events.jsonl"
    follower = EventFollower(path)
    assert follower.poll().steps == []  # no file yet
    path.write_text('{"event": "start"}\n{"event": "step", "step": 0}\n{"event": "st')
    log = follower.poll()
    assert log.start is not None and [s.step for s in log.steps] == [0]
    with path.open("a") as handle:
        handle.write('ep", "step": 1}\n{"event": "end"}\n')
    log = follower.poll()
    assert [s.step for s in log.steps] == [0, 1] and log.ended
    assert read_events(path).steps == log.steps


def test_a_cut_last_line_is_skipped(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"event": "step", "step": 0}\n{"event": "step", "st')
    assert [s.step for s in read_events(path).steps] == [0]


def test_a_repeated_step_is_one_short_line_read_back_whole(tmp_path):
    """The recorder writes a step that repeats the one before in all but its
    clock as ``same``; the reader puts the whole step back."""
    from xlacli.child.recorder import StepRecorder
    from xlacli.run_folder.events import EventWriter

    class Observers:
        def runtime(self):
            pass

        def step_fields(self, traced):
            return {}

        def after_step(self, step):
            pass

        def compiles_in_step(self, compiled):
            pass

    class Tracker:
        def __init__(self):
            self.counters = iter([{"CachedCompile": 1}] * 3 + [{"UncachedCompile": 1}] + [{}] * 2)

        def delta(self, waited=True):
            return {"counters": next(self.counters)}

    path = tmp_path / "events.jsonl"
    recorder = StepRecorder(EventWriter(path), None, 0, observers=Observers())
    recorder.tracker = Tracker()
    for step in range(6):
        recorder.end(step, wall_time_s=0.5 + step, input_signature=["input 0 f32[2]"])
    lines = path.read_text().splitlines()
    assert [line.split('"event": ')[1][:6] for line in lines] == [
        '"step"', '"same"', '"same"', '"step"', '"step"', '"same"',
    ]  # fmt: skip
    steps = read_events(path).steps
    assert [s.step for s in steps] == list(range(6))
    assert [s.wall_time_s for s in steps] == [0.5 + step for step in range(6)]
    assert steps[2].measures.counters == {"CachedCompile": 1} and steps[5].measures.counters == {}
    assert all(s.measures.input_signature == ["input 0 f32[2]"] for s in steps)


def test_repeated_steps_are_held_as_their_clocks_and_read_as_whole_steps(tmp_path):
    """10,000 ``same`` lines cost the parent their clocks, not 10,000 copies of the step."""
    import json
    import tracemalloc

    step = {"event": "step", "step": 3, "wall_time_s": 0.3, "traced": False}
    step["counters"] = {f"xla::op{i}": i for i in range(30)}
    path = tmp_path / "events.jsonl"
    lines = [json.dumps({"event": "step", "step": 2, "wall_time_s": 0.2}), json.dumps(step)]
    lines += [json.dumps({"event": "same", "wall_time_s": 0.001 * i}) for i in range(10_000)]
    lines.append(json.dumps({"event": "tail", "counters": {}}))
    path.write_text("\n".join(lines) + "\n")
    tracemalloc.start()
    steps = read_events(path).steps
    held, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert held < 200_000  # ~8 bytes a repeat (and the two events), not ~1 KB
    assert len(steps) == 10_002 and steps[-1].step == 10_003 and steps[0].step == 2
    assert [s.step for s in steps[:4]] == [2, 3, 4, 5]
    repeat = steps[1_000]
    assert repeat.wall_time_s == 0.001 * 998 and repeat.measures.counters == step["counters"]
    assert repeat == StepEvent(1_002, 0.001 * 998, steps[1].measures)
    assert repeat.measures is steps[1].measures  # shared, not copied
    assert repeat.measures.traced is False
    assert sum(1 for _ in steps) == 10_002 and next(reversed(steps)).step == 10_003
    log = read_events(path)
    assert [e.step for e in log.metric_events][-2:] == [10_003, None]
