"""``python tests/replay_cli.py record|replay RECORDING CALL -- ARGV``

Runs the real ``xlacli ARGV`` command line (``xlacli.cli.main.main``) in this
process, with one change at the single place the parent starts the capture child
(``flows.session.run_child``):

- ``record``: the child runs as usual; the run folder it left is saved as
  RECORDING (``tests/recording.py``) before the parent reads it, with the folders
  of the processes its script started (``rank-R/``); a hung run is not recorded
  (a hang stays live);
- ``replay``: no child; RECORDING's files are put in the run folder as the child
  left them, and the parent goes on exactly as after a live run.

CALL: JSON, ``{"words": the command as the recording names it, "places": the
test's folders by placeholder}``.

Under a launcher (torchrun: ``RANK`` and ``WORLD_SIZE`` set) each rank's process
records and replays its own child, rank R > 0 as ``RECORDING--rankR``.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

if __name__ == "__main__":
    # Run as a file (not -m) so that the working folder stays the test's, as under
    # `python -m xlacli`; the checkout is importable for tests.recording. (The
    # suite's own process imports recording_child and replaying_child.)
    sys.path[0] = os.getcwd()
    sys.path.append(str(Path(__file__).resolve().parent.parent))

from tests.recording import (
    decode_paths,
    files_beside,
    load_recording,
    nth_child,
    placeholders,
    recorded_request,
    save_recording,
)
from xlacli.capture.runner import ChildOutcome, run_child
from xlacli.run_folder.events import read_events
from xlacli.run_folder.request import CaptureRequest, RunPaths

STALE_EXIT = 97  # the recording no longer stands for the command: record it again


def recording_child(recording: Path, words: list[str], places: dict[str, str]):
    children = itertools.count()

    def run(request: CaptureRequest, paths: RunPaths, *args, **kwargs) -> ChildOutcome:
        cwd = Path(places["@CWD@"])
        before = files_beside(cwd, paths.root)
        outcome = run_child(request, paths, *args, **kwargs)
        after = files_beside(cwd, paths.root)
        written = sorted(name for name, at in after.items() if before.get(name) != at)
        if outcome.hung_after_s is None:
            ended = {"returncode": outcome.returncode, "interrupted": outcome.interrupted}
            into = nth_child(recording, next(children))
            save_recording(paths.root, into, words, ended, places, written)
        return outcome

    return run


def replaying_child(recording: Path, places: dict[str, str]):
    children = itertools.count()

    def run(request: CaptureRequest, paths: RunPaths, on_progress=None, **_) -> ChildOutcome:
        request.save(paths.request)
        this = nth_child(recording, next(children))
        pairs = placeholders(paths.root, places)
        recorded = json.loads(decode_paths(json.dumps(recorded_request(this)), pairs))
        now = json.loads(paths.request.read_text())
        renames = _session_renamed(recorded, now, paths.root.name)
        recorded.update({"profile_session": now["profile_session"]} if renames else {})
        differs = sorted(key for key in {*now, *recorded} if now.get(key) != recorded.get(key))
        if differs:  # SystemExit: not one of xlacli's errors, it passes its error boundary
            print(
                f"stale recording: {this} was recorded with another request "
                f"({', '.join(f'{k}: {recorded.get(k)!r} -> {now.get(k)!r}' for k in differs)}); "
                "record it again (XLACLI_RECORD=1 pytest ...)",
                file=sys.stderr,
            )
            raise SystemExit(STALE_EXIT)
        ended = load_recording(this, paths.root, places, renames)
        log = read_events(paths.events)
        if on_progress is not None:
            on_progress(log)  # the parent's first sign of the child: it starts its imports
        return ChildOutcome(ended["returncode"], log, ended["interrupted"], None)

    return run


def rank_recording(recording: Path, env: Mapping[str, str]) -> Path:
    """The recording of this process's child: its rank's under a launcher."""
    rank, world = env.get("RANK", ""), env.get("WORLD_SIZE", "")
    if rank.isdigit() and world.isdigit() and int(world) > 1 and int(rank) > 0:
        return recording.with_name(f"{recording.name}--rank{rank}")
    return recording


def _session_renamed(recorded: dict, now: dict, run_name: str) -> dict[str, str]:
    """A profile's session is named after its run folder unless --name says otherwise:
    a saved run's folder (NAME-DATE-TIME) has another name in every session."""
    old, new = recorded.get("profile_session"), now.get("profile_session")
    if old and new and old != new and new == run_name:
        return {old: new}
    return {}


def main(argv: list[str]) -> int:
    mode, recording, call, dash, *command = argv
    assert dash == "--", argv
    words, places = json.loads(call)["words"], json.loads(call)["places"]
    import xlacli.flows.session as session
    from xlacli.cli.main import main as xlacli_main

    folder = rank_recording(Path(recording), os.environ)
    if mode == "record":
        session.run_child = recording_child(folder, words, places)
    else:
        session.run_child = replaying_child(folder, places)
    return xlacli_main(command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
