"""Which ``xlacli`` runs of the suite replay a recording, and which run live.

``run_cli("compile" | "check" | "profile", ...)`` replays the recording of that call
(``tests/recording.py``) when it has one; everything else runs as users run it.
Live, always: the capture paths themselves (signals and odd paths in
``tests/faults/``, ``-m``, hangs, a device given by ``PJRT_DEVICE``) and
any call given ``live=True``. torchrun's ranks replay each rank's child
(``run_under_torchrun``); a script's own processes are recorded with its run.

A call's recording is named by the test that makes it and what it runs: the test's
id, the command's words with the test's own folders as placeholders and the run
folder left out, the script's content (a test that writes another script makes
another recording) and the environment it adds; the n-th alike call of a test is
the n-th recording.

    XLACLI_RECORD=1 pytest ...   records (live) every replayable call it makes
    XLACLI_RECORD=missing ...    records the calls without a recording, replays the rest
    XLACLI_LIVE=1 pytest ...     runs everything live, recordings unused
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.recording import (
    RECORDINGS,
    REPO,
    decode_paths,
    encode_paths,
    meta_file,
    placeholders,
    recording_name,
    source_hashes,
    stale_reason,
)

REPLAYED = ("compile", "check", "profile")
# Options whose run is capture itself: a hang's watchdog, a module found on sys.path.
_LIVE_OPTIONS = ("--hang-timeout", "-m", "--module", "--help", "-h")
# Faults whose point is the processes themselves: signals, files at odd paths.
_LIVE_FILES = ("tests/faults/test_signals.py", "tests/faults/test_paths.py")
_OUTPUT_OPTIONS = ("--out", "-o")
# pytest's temporary folder of this session (and xdist worker): another each session.
_PYTEST_TEMP = re.compile(r"^(.*/pytest-of-[^/]+/pytest-\d+(?:/popen-gw\d+)?)/")
_calls: Counter[str] = Counter()  # this worker's calls so far, per test and command


@dataclass(frozen=True)
class RecordedCall:
    recording: Path
    words: list[str]  # the command as recorded: placeholders, no run folder
    places: dict[str, str]  # the test's own folders, by placeholder


def replayable(argv: Sequence[str], env: Mapping[str, str] | None) -> bool:
    test = os.environ.get("PYTEST_CURRENT_TEST", "")
    return (
        bool(argv)
        and argv[0] in REPLAYED
        and not any(word in _LIVE_OPTIONS for word in argv)
        and not test.startswith(_LIVE_FILES)
        and "PJRT_DEVICE" not in (env or {})
    )


def _target_dir(argv: Sequence[str], cwd: Path) -> Path | None:
    for word in argv[1:]:
        path = cwd / word.split(":")[0]
        if word.split(":")[0].endswith(".py") and path.is_file():
            return path.resolve().parent
    return None


def recorded_call(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str] | None,
    *,
    shared: bool = False,
    launcher: Sequence[str] = (),
) -> RecordedCall:
    """The recording that stands for this call. ``shared``: one per command for the
    whole session (``capture_once``), not one per test; ``launcher``: the words of
    the launcher the command runs under (torchrun's), part of what it ran."""
    places = _test_places(cwd, cwd)
    target = _target_dir(argv, cwd)
    if target is not None:
        places["@TARGET@"] = str(target)
    pairs = placeholders(Path("/nonexistent"), places)
    words: list[str] = [*launcher]
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word in _OUTPUT_OPTIONS:
            skip = True  # the run folder: where, not what
            continue
        path = cwd / word.split(":")[0]
        if word.split(":")[0].endswith(".py") and path.is_file():
            word = f"{encode_paths(str(path.resolve()), pairs)}#{_digest(path.read_bytes())}"
        words.append(encode_paths(word, pairs))
    words += [
        f"env:{key}={encode_paths(value, pairs)}" for key, value in sorted((env or {}).items())
    ]
    if shared:
        return RecordedCall(RECORDINGS / "shared" / recording_name(words), words, places)
    return _named_call(words, places)


def _test_places(cwd: Path, inside: Path) -> dict[str, str]:
    """The test's own folders by placeholder: its working folder, and pytest's
    temporary folder holding ``inside`` (a project beside the working folder: the
    model its pyproject names)."""
    places = {"@CWD@": str(cwd)}
    base = pytest_basetemp()
    if base is not None and str(inside).startswith(base + "/"):
        places["@TMP@"] = base  # wherever --basetemp put it
    elif temporary := _PYTEST_TEMP.match(str(inside)):
        places["@TMP@"] = temporary.group(1)
    return places


def pytest_basetemp() -> str | None:
    """This process's pytest temporary folder (``tests/conftest.py`` names it
    when the session starts; an xdist worker's is its ``popen-gwN``)."""
    return os.environ.get(BASETEMP_VARIABLE)


BASETEMP_VARIABLE = "XLACLI_TEST_BASETEMP"


def _named_call(words: list[str], places: dict[str, str]) -> RecordedCall:
    """The test's n-th call of ``words``."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "outside-pytest").rsplit(" ", 1)[0]
    file, _, name = test.partition("::")
    key = f"{test}\0{chr(0).join(words)}"
    _calls[key] += 1
    folder = RECORDINGS / Path(file).stem
    digest = _digest(f"{key}\0{_calls[key]}".encode())
    return RecordedCall(folder / f"{_slug(name)}-{digest}", words, places)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:10]


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:50]


def mode_for(call: RecordedCall) -> str:
    """ "record", "replay" or "live".

    Raises:
        AssertionError: a replay cannot stand for the call (why, and how to record it).
    """
    mode = wanted_mode(meta_file(call.recording).exists())
    stale = stale_reason(call.recording, call.words, call.places) if mode == "replay" else None
    if stale is not None:
        raise AssertionError(
            f"stale recording: {stale}; record it again: XLACLI_RECORD=1 pytest ..."
        )
    return mode


def wanted_mode(recorded: bool) -> str:
    """ "record", "replay" or "live", as the environment asks (module docstring)."""
    wanted = os.environ.get("XLACLI_RECORD")
    if wanted == "1" or (wanted == "missing" and not recorded):
        return "record"
    if os.environ.get("XLACLI_LIVE") == "1" or not recorded:
        return "live"
    return "replay"


def run_through_recording(
    mode: str,
    call: RecordedCall,
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str] | None,
    timeout: float,
) -> subprocess.CompletedProcess[str]:
    """``xlacli ARGV`` in ``cwd`` with the child recorded or replayed (``replay_cli.py``)."""
    spec = json.dumps({"words": call.words, "places": call.places})
    command = [sys.executable, str(REPO / "tests" / "replay_cli.py"), mode, str(call.recording)]
    return subprocess.run(
        [*command, spec, "--", *argv],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@contextlib.contextmanager
def recorded_children() -> Iterator[None]:
    """Within: every capture child started in this process (the Python API's
    ``xlacli.compile``, ``check``...) is recorded or replayed as ``run_cli``'s are,
    named by the test, the child's request (paths as placeholders) and occurrence."""
    import xlacli.flows.session as session
    from tests.replay_cli import recording_child, replaying_child

    live_child = session.run_child

    def run(request, paths, *args, **kwargs):
        places = _test_places(Path.cwd(), paths.root.resolve())
        pairs = placeholders(paths.root, places)
        asked = json.dumps(dataclasses.asdict(request), sort_keys=True)
        words = ["api", encode_paths(asked, pairs)]
        call = _named_call(words, places)
        mode = mode_for(call)
        if mode == "record":
            return recording_child(call.recording, words, places)(request, paths, *args, **kwargs)
        if mode == "replay":
            return replaying_child(call.recording, places)(request, paths, *args, **kwargs)
        return live_child(request, paths, *args, **kwargs)

    session.run_child = run
    try:
        yield
    finally:
        session.run_child = live_child


TORCHRUN = (sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node")


def run_under_torchrun(
    nproc: int, argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None, timeout: float
) -> subprocess.CompletedProcess[str]:
    """``torchrun --standalone --nproc_per_node NPROC -m xlacli ARGV``, each rank's
    child recorded or replayed (rank R > 0 as ``RECORDING--rankR``,
    ``replay_cli.rank_recording``); each rank's xlacli, its waiting and merging run as
    users run them. Live (a hang, ``--hang-timeout``) and recording runs
    go through torchrun itself; a replay starts the ranks with the variables torchrun
    gives them (torchrun's own start-up, a torch import and a rendezvous, is most of
    a replay's time; the live runs keep it tested), torchrun's exit code: 1 when
    a rank fails.

    Raises:
        AssertionError: the recording is stale (the message says how to record it).
    """
    full_env = {**os.environ, "COLUMNS": "200", "PJRT_DEVICE": "CPU", **(env or {})}
    mode = "live"
    if replayable(argv, None):
        call = recorded_call(argv, cwd, env, launcher=["torchrun", f"--nproc_per_node={nproc}"])
        mode = mode_for(call)
    launcher = [*TORCHRUN, str(nproc)]
    if mode == "live":
        command = [*launcher, "-m", "xlacli", *argv]
        return subprocess.run(
            command, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout
        )
    spec = json.dumps({"words": call.words, "places": call.places})
    replay = [str(REPO / "tests" / "replay_cli.py"), mode, str(call.recording), spec, "--", *argv]
    if mode == "record":
        return subprocess.run(
            [*launcher, *replay],
            cwd=cwd,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    return _ranks_as_torchrun_starts_them(nproc, [sys.executable, *replay], cwd, full_env, timeout)


def _ranks_as_torchrun_starts_them(
    nproc: int, command: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = str(free.getsockname()[1])
    ranks = [
        subprocess.Popen(
            command,
            cwd=cwd,
            env={**env, **_torchrun_variables(rank, nproc, port)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(nproc)
    ]
    # As torchrun's agent: once a rank fails, the others are stopped.
    deadline = time.monotonic() + timeout
    while any(rank.poll() is None for rank in ranks) and time.monotonic() < deadline:
        if any(rank.returncode not in (None, 0) for rank in ranks):
            for rank in ranks:
                if rank.poll() is None:
                    rank.terminate()
        time.sleep(0.1)
    outputs = [rank.communicate(timeout=30) for rank in ranks]
    code = 0 if all(rank.returncode == 0 for rank in ranks) else 1
    stdout, stderr = ("".join(output[i] for output in outputs) for i in (0, 1))
    return subprocess.CompletedProcess(command, code, stdout, stderr)


def _torchrun_variables(rank: int, nproc: int, port: str) -> dict[str, str]:
    """What torchrun --standalone sets for a rank of one node."""
    world, one = str(nproc), str(rank)
    return {
        "RANK": one,
        "LOCAL_RANK": one,
        "GROUP_RANK": "0",
        "ROLE_RANK": one,
        "ROLE_NAME": "default",
        "WORLD_SIZE": world,
        "LOCAL_WORLD_SIZE": world,
        "GROUP_WORLD_SIZE": "1",
        "ROLE_WORLD_SIZE": world,
        "MASTER_ADDR": "localhost",
        "MASTER_PORT": port,
        "TORCHELASTIC_RESTART_COUNT": "0",
        "TORCHELASTIC_MAX_RESTARTS": "0",
        "TORCHELASTIC_RUN_ID": "replay",
        "TORCHELASTIC_USE_AGENT_STORE": "False",
        "OMP_NUM_THREADS": "1",
    }


# --- bare torch_xla runs: the counts xlacli's are held to
BARE = RECORDINGS / "bare"


def run_bare(
    argv: Sequence[str | Path],
    *,
    env: Mapping[str, str] | None = None,
    output: Path | None = None,
    cwd: Path = REPO,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """``python ARGV`` from the checkout's root, a bare torch_xla run (no xlacli) whose
    counters a test holds xlacli's to; ``output``: the file it writes. Recorded and
    replayed like xlacli's own runs, one recording per command (its scripts by
    content) and added environment, whichever test asks: its exit code, output
    and file. A changed script fails the test with the command that records it."""
    places = {"@CWD@": str(cwd.resolve()), **({"@OUT@": str(output)} if output else {})}
    pairs = placeholders(Path("/nonexistent"), places)
    # A script by its content too: the loop zoo's rows each write their own train.py.
    words = [
        encode_paths(str(word), pairs)
        + (
            f"#{_digest(Path(word).read_bytes())}"
            if str(word).endswith(".py") and Path(word).is_file()
            else ""
        )
        for word in argv
    ]
    words += [f"env:{key}={value}" for key, value in sorted((env or {}).items())]
    scripts = [word.rsplit("#", 1)[0] for word in words if ".py#" in word]
    recording = BARE / f"{recording_name(words)}.json"
    mode = wanted_mode(recording.exists())
    if mode == "replay":
        saved = json.loads(recording.read_text())
        now = source_hashes(set(scripts), pairs)
        changed = [name for name in scripts if saved["sources"].get(name) != now[name]]
        if changed:
            raise AssertionError(
                f"stale recording: {', '.join(changed)} changed since {recording.name} was "
                "recorded; record it again: XLACLI_RECORD=1 pytest ..."
            )
        if output is not None:
            output.write_text(decode_paths(saved["output"], pairs))
        out, err = (decode_paths(saved[key], pairs) for key in ("stdout", "stderr"))
        return subprocess.CompletedProcess(list(map(str, argv)), saved["returncode"], out, err)
    done = subprocess.run(
        [sys.executable, *map(str, argv)],
        cwd=cwd,
        env={**os.environ, "PJRT_DEVICE": "CPU", **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if mode == "record" and done.returncode == 0:
        saved = {
            "words": words,
            "sources": source_hashes(set(scripts), pairs),
            "returncode": done.returncode,
            "stdout": encode_paths(done.stdout, pairs),
            "stderr": encode_paths(done.stderr, pairs),
            "output": encode_paths(output.read_text(), pairs) if output else "",
        }
        BARE.mkdir(parents=True, exist_ok=True)
        recording.write_text(json.dumps(saved, indent=1, sort_keys=True) + "\n")
    return done
