from __future__ import annotations

from xlacli.analysis.ranks.stragglers import ROWS, find_stragglers
from xlacli.report.profile import ProfileSummary, StepTimes


def _summary(p50: float, compile_s: float, python_s: float) -> ProfileSummary:
    return ProfileSummary(
        model="train.py",
        device="CPU",
        steps=4,
        warmup=1,
        step_times_s=(p50,) * 4,
        step_time_s=StepTimes(p50, p50, p50, p50),
        batch_size=None,
        samples_per_s=None,
        breakdown={"compile_s": compile_s, "python_s": python_s, "execute_s": 0.004},
        top_ops=(),
        graphs=(),
        window_compiles=0,
        trace_files=(),
        logdir="",
        session="",
        run_dir="/r",
        source_of_op_times="trace events",
    )


def test_the_slowest_rank_and_where_its_extra_time_goes():
    stragglers = find_stragglers(
        {
            0: _summary(0.010, 0.0, 0.020),
            1: _summary(0.050, 0.120, 0.040),
            2: _summary(0.012, 0.0, 0.024),
        }
    )
    assert stragglers is not None
    assert [r.rank for r in stragglers.ranks] == [0, 1, 2]
    assert stragglers.slowest == 1
    assert abs(stragglers.extra_s - 0.039) < 1e-9  # 50 ms against the others' median, 11 ms
    assert set(stragglers.extra_by_row_s) == set(ROWS)
    assert abs(stragglers.extra_by_row_s["compile"] - 0.030) < 1e-9  # 120 ms over 4 steps
    assert abs(stragglers.extra_by_row_s["python and waits"] - 0.0045) < 1e-9
    assert stragglers.extra_by_row_s["device"] == 0.0


def test_one_rank_has_no_stragglers():
    assert find_stragglers({0: _summary(0.01, 0.0, 0.0)}) is None
