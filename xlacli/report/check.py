"""A check's outcome kept beside its report (``check.json``), for the page and the ranks."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# A check run keeps its outcome beside its report, for the HTML page.
CHECK_FILE = "check.json"


def save_check(data: Mapping[str, Any], run_dir: Path) -> Path:
    """Keep a check's outcome in its run folder, so the page can show it later."""
    path = run_dir / CHECK_FILE
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def load_check(run_dir: Path) -> dict[str, Any] | None:
    """The saved check outcome, or None for a run that was not a check."""
    try:
        data = json.loads((run_dir / CHECK_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None
