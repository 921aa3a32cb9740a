"""Where each rank was when the hang watchdog stopped the run.

From a rank's stack dump (``hang-stacks.txt``) and its report: the function its
main thread waits in (the innermost frame: ``all_reduce``, ``recv``), the user's
innermost line on that stack, and the last step, graph and sync site it
completed, so the ranks can be read side by side: rank 0 waits in
``all_reduce`` at ``train.py:22``, rank 1 in ``recv`` at ``train.py:28``.
"""

from __future__ import annotations

from xlacli.parse.frames import CodeRoots, Frame, first_user_frame
from xlacli.parse.stack_dump import main_thread, parse_stack_dump
from xlacli.report.ranks import RankHang
from xlacli.report.run_report import RunReport

_STACK_FRAMES_KEPT = 12


def explain_hang(
    rank: int, report: RunReport | None, stacks_text: str | None, roots: CodeRoots
) -> RankHang:
    """One rank's place in a hang. ``stacks_text`` None: the rank was not
    stopped by the watchdog (it had ended, or failed, before)."""
    frames = _main_frames(stacks_text)
    user = first_user_frame(frames, roots)
    last_graph, last_site = _last_graph(report)
    return RankHang(
        rank=rank,
        state="waiting" if stacks_text is not None else "ended",
        waits_in=frames[0].function if frames else None,
        location=user.location if user else None,
        function=user.function if user else None,
        step=report.steps if report else 0,
        last_graph=last_graph,
        last_site=last_site,
        stack=_shown_stack(frames, roots),
    )


def _shown_stack(frames: tuple[Frame, ...], roots: CodeRoots) -> tuple[str, ...]:
    """The frames from the innermost to the user's outermost (runpy and xlacli
    below the script are left out), at most a dozen."""
    user = [index for index, frame in enumerate(frames) if roots.is_user(frame)]
    kept = frames[: user[-1] + 1] if user else frames
    return tuple(str(f) for f in kept if not roots.is_xlacli(f))[:_STACK_FRAMES_KEPT]


def _main_frames(stacks_text: str | None) -> tuple[Frame, ...]:
    if not stacks_text:
        return ()
    thread = main_thread(parse_stack_dump(stacks_text))
    return thread.frames if thread else ()


def _last_graph(report: RunReport | None) -> tuple[str | None, str | None]:
    """The last graph the rank ran, and its sync site."""
    if report is None:
        return None, None
    for record in reversed(report.step_records):
        if record.graph_hashes:
            graph_hash = record.graph_hashes[-1]
            graph = next((g for g in report.graphs if g.hash == graph_hash), None)
            return graph_hash, graph.site if graph else None
    return None, None
