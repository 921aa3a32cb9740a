"""The advice sections in the saved report: old reports load without them, and a
report from a newer xlacli (more keys) still loads."""

from __future__ import annotations

import dataclasses
import json

from tests.unit.advice.graphs import block_ops, inputs, report
from xlacli.analysis.advice.scan import advise_scan
from xlacli.report.advice import BucketAdvice, BucketOption, ValueReadCost
from xlacli.report.run_report import dump_report, report_from_dict


def test_a_report_without_advice_loads_with_empty_sections() -> None:
    data = json.loads(dump_report(report()))
    for key in ("compile_cost", "scan_advice", "bucket_advice", "value_read_costs"):
        del data[key]
    loaded = report_from_dict(data)
    assert loaded.compile_cost is None
    assert loaded.scan_advice == loaded.bucket_advice == loaded.value_read_costs == ()


def test_sections_round_trip_and_tolerate_new_keys() -> None:
    scan = advise_scan(inputs([op for _ in range(4) for op in block_ops()]))
    buckets = (
        BucketAdvice(
            "/m.py:3", "input_shape", "input 0, dim 1", ((5, 2), (9, 1)), 3, 2,
            (BucketOption((9,), 1, 0.2), BucketOption((5, 9), 2, 0.0)), 0, "code",
        ),
    )  # fmt: skip
    reads = (ValueReadCost("/m.py:9", "item", "x.item()", 1.0, 1.0, 0.002, "fix"),)
    full = dataclasses.replace(
        report(), scan_advice=scan, bucket_advice=buckets, value_read_costs=reads
    )
    data = json.loads(dump_report(full))
    assert report_from_dict(data) == full
    data["scan_advice"][0]["a_future_field"] = 1
    data["bucket_advice"][0]["options"][0]["another"] = "x"
    assert report_from_dict(data) == full


def test_an_item_missing_a_key_is_left_out_not_a_traceback() -> None:
    data = json.loads(dump_report(report()))
    data["value_read_costs"] = [{"location": "/m.py:9", "kind": "item"}]
    data["scan_advice"] = [{"graph_hash": "g1"}]
    loaded = report_from_dict(data)
    assert loaded.value_read_costs == loaded.scan_advice == ()
