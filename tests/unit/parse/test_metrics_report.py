import pytest

from tests.conftest import GOLDEN
from xlacli.parse.metrics_report import parse_metric_value, parse_metrics_report


def test_counters_and_fallback_ops():
    report = parse_metrics_report((GOLDEN / "host_sync" / "metrics.txt").read_text())
    assert report.counter("UncachedCompile") == 4
    assert report.counter("CachedCompile") == 2
    assert report.counter("ExecuteComputation") == 6
    assert report.counter("NeverBumped") == 0
    assert report.fallback_ops() == {"aten::_local_scalar_dense": 2, "aten::nonzero": 2}


def test_compile_time_accumulator_in_nanoseconds():
    report = parse_metrics_report((GOLDEN / "shape_change" / "metrics.txt").read_text())
    compile_time = report.metrics["CompileTime"]
    assert compile_time.total_samples == 2
    assert 1e6 < compile_time.accumulator < 60e9


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("254ms543.671us", 253_543_671.0),
        # torch_xla rounds the leading parts: 89.657668 ms prints as 090ms657.668us
        ("090ms657.668us", 89_657_668.0),
        ("08s868ms549.039us", 7_867_549_039.0),
        ("639ms211.824us", 639_211_824.0),
        ("020.780us", 20_780.0),
        ("01s002ms000.000us", 1_002_000_000.0),
        ("02m03s000ms000.000us", 123e9),
        ("1.28KB", 1.28 * 1024),
        ("312.00B", 312.0),
        ("120.00", 120.0),
    ],
)
def test_metric_values(text, value):
    assert parse_metric_value(text) == pytest.approx(value)
