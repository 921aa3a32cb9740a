import pytest

from xlacli.analysis.check.baseline import Baseline
from xlacli.analysis.check.checks import IMPROVEMENT, OK, REGRESSION, check_time_budget, compare


def baseline(**changes):
    fields = dict(
        model="m.py",
        device="CPU",
        steps=5,
        warmup=2,
        train=False,
        optimizer="",
        compilations=2,
        distinct_graphs=2,
        steady_state_compiles=0,
        executions_per_step=(1, 1, 1, 1, 1),
        fallback_ops={"aten::nonzero": 5},
        graphs={"m.py:9#0": 30, "m.py:9#1": 31},
    )
    fields.update(changes)
    return Baseline(**fields)


def statuses(outcome):
    return {r.name: r.status for r in outcome.results if r.status != OK}


def test_same_counts_pass():
    outcome = compare(baseline(), baseline())
    assert not outcome.regressions and not outcome.improvements
    assert len(outcome.results) == 4 + 1 + 2


def test_more_compiles_regress_and_fewer_improve():
    assert statuses(compare(baseline(), baseline(compilations=3))) == {"compilations": REGRESSION}
    assert statuses(compare(baseline(), baseline(compilations=1))) == {"compilations": IMPROVEMENT}


def test_tolerance():
    grown = baseline(graphs={"m.py:9#0": 31, "m.py:9#1": 31})
    assert statuses(compare(baseline(), grown)) == {"HLO instructions m.py:9#0": REGRESSION}
    assert statuses(compare(baseline(), grown, tolerance=0.05)) == {}


def test_graphs_per_step_and_fallbacks():
    changed = baseline(executions_per_step=(1, 1, 1, 2, 2), fallback_ops={"aten::median": 1})
    outcome = compare(baseline(), changed)
    by_name = {r.name: r for r in outcome.results}
    assert by_name["executions per step"].status == REGRESSION
    assert by_name["executions per step"].detail == "steps 3-4: 1 -> 2"
    assert by_name["fallback op aten::median"].detail == "new"
    assert by_name["fallback op aten::nonzero"].status == IMPROVEMENT


@pytest.mark.parametrize(("seconds", "status"), [(1.0, OK), (1.19, OK), (1.3, REGRESSION)])
def test_time_budget(seconds, status):
    assert check_time_budget(seconds, 1.0, 0.2).status == status
