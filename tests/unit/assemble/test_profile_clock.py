"""A profile that stood aside (the script runs torch_xla's profiler itself) times
the loop's steps after its warm-up by the child's clock: a script's setup
syncs are neither warm-up nor profiled steps."""

from __future__ import annotations

from xlacli.assemble.profile import _durations
from xlacli.run_folder.events import ChildLog


def test_the_clocked_steps_are_the_loops_after_its_warm_up():
    # Step 0 flushed the setup (a loader's first batch); the loop starts at step 1.
    steps = [{"step": 0, "wall_time_s": 5.0, "phase": "setup"}]
    steps += [{"step": n, "wall_time_s": 1.0 + n, "loop_start": 1} for n in range(1, 6)]
    durations = _durations([], ChildLog(steps=steps), warmup=2)
    assert [d.step for d in durations] == [3, 4, 5]
    assert [d.duration_s for d in durations] == [4.0, 5.0, 6.0]
