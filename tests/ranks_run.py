"""A multi-process run's outcome, as the e2e tests read it (torchrun's ranks,
or the ranks a script starts itself)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


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
