"""A multi-process run's outcome, as the e2e tests read it (torchrun's ranks,
or the ranks a script starts itself)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from xlacli.parse.metrics_report import parse_metrics_report


@dataclass(frozen=True)
class RanksRun:
    code: int
    stdout: str
    stderr: str
    out: Path

    @property
    def merged(self) -> dict:
        return json.loads((self.out / "ranks.json").read_text())

    def rank_report(self, rank: int) -> dict:
        return json.loads((self.out / f"rank-{rank}" / "report.json").read_text())

    def assert_counts_equal_metrics(self) -> None:
        """Each rank's counts are its own process's torch_xla metrics."""
        for row in self.merged["ranks"]:
            report = self.rank_report(row["rank"])
            folder = self.out / f"rank-{row['rank']}"
            metrics = parse_metrics_report((folder / "metrics.txt").read_text())
            assert row["compilations"] == report["compilations"]
            assert report["compilations"] == metrics.counter("UncachedCompile")
            assert report["executions"] == metrics.counter("ExecuteComputation")
