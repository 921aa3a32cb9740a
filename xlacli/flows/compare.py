"""``--mode both``: the same model lazily and under torch.compile, each in its
own child, then one table comparing them (``xlacli.render.compare``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from xlacli.analysis.mode_figures import figures

COMPARED_MODES = ("lazy", "dynamo")


def mode_out(out: Path | None, mode: str) -> Path | None:
    """Each mode's run folder: ``OUT/lazy`` and ``OUT/dynamo`` (default: new ones)."""
    return out / mode if out is not None else None


def run_modes(run: Callable[[str], Any]) -> dict[str, Any]:
    """Run each compared mode in turn (each in its own child); results by mode."""
    return {mode: run(mode) for mode in COMPARED_MODES}


def compare_compile(
    target: Any, *, out: Path | None, force: bool, output_format: str, **options: Any
) -> list[Any]:
    """``xlacli compile MODEL --mode both``: capture each mode, print the table.

    Returns:
        Each mode's ``CaptureResult``, lazy first: its error (if any) is the
        caller's to raise, after what it writes for every run (``--html``).
    """
    from xlacli.flows.session import capture
    from xlacli.render.compare import render_comparison

    results = run_modes(
        lambda mode: capture(
            target,
            mode=mode,
            out=mode_out(out, mode),
            force=force,
            label=f"Compiling {target.path.name} ({mode})",
            **options,
        )
    )
    reports = {mode: result.report for mode, result in results.items()}
    render_comparison(reports, {m: figures(r) for m, r in reports.items()}, output_format)
    return list(results.values())


def raise_first_error(results: Any) -> None:
    """Raise the first run's error, in mode order (lazy first), if any run failed."""
    for result in results:
        if result.error is not None:
            raise result.error
