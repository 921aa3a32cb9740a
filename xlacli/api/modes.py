"""``--mode both`` from Python: the same target lazily and under ``torch.compile``,
each in its own child, and the figures that compare them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import xlacli.defaults as defaults
from xlacli.api.capture import Run, StrPath, path_of, project_defaults, target_of, with_logdir

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
    module: str | None = None,
    args: Sequence[str] = (),
    steps: int | None = None,
    warmup: int = defaults.COMPILE.warmup,
    train: bool = False,
    optimizer: str = "sgd",
    devices: int | None = None,
    out: StrPath | None = None,
    force: bool = False,
    hang_timeout: float | None = None,
) -> ModeComparison:
    """``compile`` lazily, then under ``torch.compile``, each in its own child
    (``xlacli compile --mode both``); ``out``: ``OUT/lazy`` and ``OUT/dynamo``.

    Raises:
        XlacliError: as ``compile``; also a script (it has no step to wrap) or a
            process under a launcher.
    """
    from xlacli.analysis.mode_figures import figures
    from xlacli.flows.compare import mode_out, run_modes
    from xlacli.flows.session import capture

    resolved = target_of(target, module, args, "compile")
    devices, runs_dir = project_defaults(devices)
    results: dict[str, CaptureResult] = run_modes(
        resolved,
        lambda mode: capture(
            resolved,
            mode=mode,
            out=mode_out(path_of(out), mode),
            force=force,
            label=f"Compiling {resolved.path.name} ({mode})",
            steps=steps,
            train=train,
            optimizer=optimizer,
            explain_warmup=warmup,
            devices=devices,
            runs_dir=runs_dir,
            hang_timeout=hang_timeout,
            exact_clocks=True,  # the modes' step times are compared
        ),
    )
    runs = {mode: Run(result.report, result.error) for mode, result in results.items()}
    return ModeComparison(runs, {mode: figures(run.report) for mode, run in runs.items()})


def profile_modes(
    target: StrPath | None = None,
    *,
    module: str | None = None,
    args: Sequence[str] = (),
    steps: int = defaults.PROFILE.steps,
    warmup: int = defaults.PROFILE.warmup,
    train: bool = False,
    optimizer: str = "sgd",
    devices: int | None = None,
    logdir: StrPath | None = None,
    name: str | None = None,
    max_trace_steps: int = 500,
    out: StrPath | None = None,
    force: bool = False,
    hang_timeout: float | None = None,
) -> ModeComparison:
    """``profile`` lazily, then under ``torch.compile`` (``xlacli profile --mode both``):
    the median step time compared is the profiler's; sessions are ``NAME-lazy``, ``NAME-dynamo``.

    Raises:
        XlacliError: as ``compile_modes``.
    """
    from xlacli.analysis.mode_figures import figures
    from xlacli.flows.compare import mode_out, run_modes
    from xlacli.flows.profile import ProfileRequest, capture_profile

    resolved = target_of(target, module, args, "profile")
    request = ProfileRequest(
        steps=steps,
        warmup=warmup,
        train=train,
        optimizer=optimizer,
        logdir=path_of(logdir),
        name=name,
        out=path_of(out),
        force=force,
        devices=devices,
        max_trace_steps=max_trace_steps,
        hang_timeout=hang_timeout,
    )
    request = with_logdir(request)
    captured = run_modes(
        resolved,
        lambda mode: capture_profile(resolved, request, mode, mode_out(request.out, mode)),
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
