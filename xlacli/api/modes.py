"""``--mode both`` from Python: the same target lazily and under ``torch.compile``,
each in its own child, and the figures that compare them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Unpack

from xlacli.api.capture import Run, profile_request
from xlacli.defaults import COMPILE, PROFILE
from xlacli.run_options import RunKeywords, RunOptions, StrPath, run_options

if TYPE_CHECKING:
    from xlacli.analysis.mode_figures import ModeFigures
    from xlacli.flows.session import CaptureResult
    from xlacli.report.profile import ProfileSummary


@dataclass(frozen=True)
class ModeComparison:
    """The same target lazily and under ``torch.compile`` (``--mode both``):
    each mode's run and its compared figures; a profile's summaries too."""

    runs: dict[str, Run]
    figures: dict[str, ModeFigures]
    profiles: dict[str, ProfileSummary] = field(default_factory=dict)

    def raise_error(self) -> None:
        """Raise the first mode's error (lazy first), if a run failed."""
        for run in self.runs.values():
            run.raise_error()


def compile_modes(
    target: StrPath | None = None,
    *,
    options: RunOptions | None = None,
    **keywords: Unpack[RunKeywords],
) -> ModeComparison:
    """``compile`` lazily, then under ``torch.compile``, each in its own child
    (``xlacli compile --mode both``); ``out``: ``OUT/lazy`` and ``OUT/dynamo``.

    Raises:
        XlacliError: as ``compile``; also a script (it has no step to wrap) or a
            process under a launcher.
    """
    from xlacli.analysis.mode_figures import figures
    from xlacli.flows.compare import run_modes
    from xlacli.flows.session import capture, prepare_run

    chosen = dataclasses.replace(run_options(target, options, keywords), mode="both")
    resolved, chosen = prepare_run(chosen, "compile", COMPILE)
    results: dict[str, CaptureResult] = run_modes(
        resolved,
        lambda mode: capture(
            resolved,
            chosen.one_mode(mode),
            label=f"Compiling {resolved.path.name} ({mode})",
            exact_clocks=True,  # the modes' step times are compared
        ),
    )
    runs = {mode: Run(result.report, result.error) for mode, result in results.items()}
    return ModeComparison(runs, {mode: figures(run.report) for mode, run in runs.items()})


def profile_modes(
    target: StrPath | None = None,
    *,
    options: RunOptions | None = None,
    logdir: StrPath | None = None,
    name: str | None = None,
    max_trace_steps: int = 500,
    **keywords: Unpack[RunKeywords],
) -> ModeComparison:
    """``profile`` lazily, then under ``torch.compile`` (``xlacli profile --mode both``):
    the median step time compared is the profiler's; sessions are ``NAME-lazy``, ``NAME-dynamo``.

    Raises:
        XlacliError: as ``compile_modes``.
    """
    from xlacli.analysis.mode_figures import figures
    from xlacli.flows.compare import run_modes
    from xlacli.flows.profile import capture_profile
    from xlacli.flows.session import prepare_run

    chosen = dataclasses.replace(run_options(target, options, keywords), mode="both")
    resolved, chosen = prepare_run(chosen, "profile", PROFILE)
    request = profile_request(chosen, logdir, name, max_trace_steps)
    captured = run_modes(
        resolved,
        lambda mode: capture_profile(resolved, chosen.one_mode(mode), request, compared=True),
    )
    runs = {mode: Run(result.report, result.error) for mode, (result, _) in captured.items()}
    profiles = {mode: summary for mode, (_, summary) in captured.items()}
    compared = {
        mode: figures(
            runs[mode].report,
            summary.step_time_s.p50 if summary.step_time_s else None,
            summary.host_split,
        )
        for mode, summary in profiles.items()
    }
    return ModeComparison(runs, compared, profiles)
