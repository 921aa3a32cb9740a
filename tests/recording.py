"""Recorded model runs: capture once, replay in every test that reads them (issue 35).

Most assertions are about what xlacli derives from a run folder (the report, the
terminal text, the exit code, the check's verdict), not about running the model.
A *recording* is the run folder exactly as the capture child left it (events,
XLA's dumps, torch_xla's IR and debug logs), before the parent read any of it,
with the machine's paths replaced by placeholders (``NAME.tar.xz``), and what the
run was (``NAME.json``: the command, how the child ended, the files it ran and
their hashes). Replaying it runs the real ``xlacli`` command, parent and all
(``tests/replay_cli.py``), with one change: the child is not started; its files
are put in the run folder as it would have left them. Everything after the child
(assembly, analyses, renderers, exit codes, baselines) is the product's own code.

What keeps a recording honest:
- a replay whose files changed since it was recorded fails, naming the command
  that records it again; so does one whose request (steps, mode, options) differs;
- ``tests/integration/test_recordings_live.py`` runs one example per capture path
  live and holds its report to the golden the replays are held to, so a torch_xla
  or child change that makes the child write something else fails there;
- ``XLACLI_RECORD=1 pytest -n 2`` records every recording again (``XLACLI_LIVE=1``
  runs the whole suite live, recordings unused).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
import sysconfig
import tarfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RECORDINGS = REPO / "tests" / "assets" / "recordings"
# The run's own report is the parent's work: never part of a recording.
_PARENT_FILES = {"report.json", "sources.json", "profile.json", "check.json"}


def placeholders(run_root: Path, places: Mapping[str, str]) -> list[tuple[str, str]]:
    """(token, this machine's path) for every path a run folder may name, longest
    path first so that a path inside another is replaced whole. ``places``: the
    test's own folders (``@CWD@``, ``@TARGET@``)."""
    paths = {
        **places,
        "@RUN@": str(run_root.resolve()),
        "@SITE@": sysconfig.get_paths()["purelib"],
        "@STDLIB@": sysconfig.get_paths()["stdlib"],
        "@PREFIX@": sys.prefix,
        "@REPO@": str(REPO),
    }
    return sorted(paths.items(), key=lambda item: -len(item[1]))


def encode_paths(text: str, pairs: list[tuple[str, str]]) -> str:
    for token, path in pairs:
        text = text.replace(path, token)
    return text


def decode_paths(text: str, pairs: list[tuple[str, str]]) -> str:
    for token, path in pairs:
        text = text.replace(token, path)
    return text


# --- HloProto's strings that hold paths (field numbers: xlacli/parse/hlo_stacks.py)
_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5
_STRING = "string"
# HloProto.hlo_module=1 -> HloModuleProto.computations=3 -> instructions=2 ->
# metadata=7 -> op_name=2 (its IR scope names files: "xlacli_backward_of@FILE@LINE"),
# source_file=3; HloModuleProto.stack_frame_index=17 -> file_names=1.
PATH_FIELDS: dict = {1: {3: {2: {7: {2: _STRING, 3: _STRING}}}, 17: {1: _STRING}}}
# A profile's XSpace: each plane's event metadata holds its graph's HloProto as a
# stat's bytes (planes 1, event_metadata 4, value 2, stats 5, bytes_value 6).
XPLANE_PATH_FIELDS: dict = {1: {4: {2: {5: {6: PATH_FIELDS}}}}}


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        if not value:
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def rewrite_proto_strings(data: bytes, fields: dict, change: Callable[[str], str]) -> bytes:
    """The message with the strings at ``fields`` (a tree of field numbers) changed,
    every other field copied byte for byte, the lengths above them recomputed."""
    out = bytearray()
    at = 0
    while at < len(data):
        start = at
        key, at = _read_varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            _, at = _read_varint(data, at)
        elif wire == _FIXED64:
            at += 8
        elif wire == _FIXED32:
            at += 4
        elif wire == _BYTES:
            size, body = _read_varint(data, at)
            at = body + size
            inner = fields.get(number)
            if inner is not None:
                payload = data[body:at]
                try:
                    if inner == _STRING:
                        new = change(payload.decode("utf-8")).encode("utf-8")
                    else:
                        new = rewrite_proto_strings(payload, inner, change)
                except (ValueError, IndexError):  # bytes of another kind: kept as they are
                    new = payload
                out += _varint(key) + _varint(len(new)) + new
                continue
        else:
            raise ValueError(f"wire type {wire} at byte {start}")
        out += data[start:at]
    return bytes(out)


def _converted(name: str, data: bytes, change: Callable[[str], str]) -> bytes:
    if name.endswith(".hlo.pb"):
        return rewrite_proto_strings(data, PATH_FIELDS, change)
    if name.endswith(".xplane.pb"):
        return rewrite_proto_strings(data, XPLANE_PATH_FIELDS, change)
    try:
        return change(data.decode("utf-8")).encode("utf-8")
    except UnicodeDecodeError:
        return data  # a binary file without paths: kept as it is


def _run_files(root: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_file() and name not in _PARENT_FILES:
            yield name, path


# --- what a recording ran, to tell a stale one
_SCRIPT_WORD = re.compile(r"^@\w+@/.+\.py#[0-9a-f]+$")
_CHECKOUT_FILE = re.compile(r"(@REPO@|@TARGET@|@CWD@|@TMP@)/([\w./-]+?\.py)\b")


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "(missing)"


def source_hashes(names: set[str], pairs: list[tuple[str, str]]) -> dict[str, str]:
    """sha256 of each named file (``@REPO@/examples/mlp.py``), found here."""
    return {name: _file_hash(Path(decode_paths(name, pairs))) for name in sorted(names)}


def _files_ran(texts: Iterator[str], pairs: list[tuple[str, str]]) -> set[str]:
    """The user's files a run ran: every one its stacks, IR and events name
    (xlacli's package and the environment are the product, not the input)."""
    names: set[str] = set()
    for text in texts:
        names.update(f"{root}/{name}" for root, name in _CHECKOUT_FILE.findall(text))
    product = (REPO / "xlacli", Path(sys.prefix), Path(sysconfig.get_paths()["purelib"]))
    return {
        name
        for name in names
        if not any(Path(decode_paths(name, pairs)).resolve().is_relative_to(p) for p in product)
    }


# --- a recording on disk: NAME.json (what it was) and NAME.tar.xz (the child's files)
def meta_file(recording: Path) -> Path:
    return recording.with_suffix(".json")


def archive_file(recording: Path) -> Path:
    return recording.with_suffix(".tar.xz")


# Files the script wrote beside the run folder (a metrics file it dumps, a
# checkpoint) travel in the archive under this prefix, relative to its working folder.
_BESIDE = "beside-the-run/"
_NOT_BESIDE = {".venv", ".git", "__pycache__"}


def files_beside(cwd: Path, run_root: Path) -> dict[str, float]:
    """The working folder's files and their modification times, the run folder
    and environments left out (the checkout's root: nothing, other tests write there;
    a launched rank's: nothing)."""
    if cwd.resolve() == REPO or re.fullmatch(r"rank-\d+", run_root.name):
        # A launched rank's working folder is every rank's: the files other ranks
        # (and their xlacli, a baseline) write there while its child runs are not its own.
        return {}
    found = {}
    for path in cwd.rglob("*"):
        parts = path.relative_to(cwd).parts
        if _NOT_BESIDE & set(parts) or path.resolve().is_relative_to(run_root.resolve()):
            continue
        if path.is_file():
            found[path.relative_to(cwd).as_posix()] = path.stat().st_mtime
    return found


def save_recording(
    run_root: Path,
    recording: Path,
    words: list[str],
    outcome: dict,
    places: Mapping[str, str],
    written: list[str] = (),  # type: ignore[assignment]
) -> None:
    """Keep the run folder as the child left it, its paths as placeholders, with
    the files ``written`` beside it (relative to the working folder)."""
    pairs = placeholders(run_root, places)
    recording.parent.mkdir(parents=True, exist_ok=True)
    cwd = Path(dict(places)["@CWD@"])
    files = [*_run_files(run_root), *((_BESIDE + name, cwd / name) for name in written)]
    texts = []
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz") as archive:
        for name, path in files:
            data = _converted(name, path.read_bytes(), lambda t: encode_paths(t, pairs))
            if not name.endswith(".pb") and not name.startswith(_BESIDE):
                texts.append(data.decode("utf-8", errors="replace"))
            entry = tarfile.TarInfo(name)
            entry.size = len(data)
            archive.addfile(entry, io.BytesIO(data))
    archive_file(recording).write_bytes(buffer.getvalue())
    ran = _files_ran(iter(texts), pairs)
    # The command's own script (``@CWD@/train.py#<sha>``), whatever its name holds.
    ran.update(word.rsplit("#", 1)[0] for word in words if _SCRIPT_WORD.match(word))
    meta = {"words": words, "outcome": outcome, "sources": source_hashes(ran, pairs)}
    meta_file(recording).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")


def load_recording(
    recording: Path,
    run_root: Path,
    places: Mapping[str, str],
    renames: Mapping[str, str] | None = None,
) -> dict:
    """Put the recorded child's files in ``run_root`` (and the files it wrote beside
    it in the working folder) as it left them; how it ended. ``renames``: names to
    change in the files' names and texts (a profile's session, named after a saved
    run's timestamped folder)."""
    pairs = placeholders(run_root, places) + list((renames or {}).items())
    cwd = Path(dict(places)["@CWD@"])
    with tarfile.open(archive_file(recording), mode="r:xz") as archive:
        for entry in archive.getmembers():
            beside = entry.name.startswith(_BESIDE)
            name = decode_paths(entry.name, list((renames or {}).items()))
            target = cwd / name[len(_BESIDE) :] if beside else run_root / name
            if entry.name == "request.json" and target.exists():
                continue  # the parent wrote this run's own request before the child started
            data = archive.extractfile(entry).read()  # type: ignore[union-attr]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_converted(entry.name, data, lambda t: decode_paths(t, pairs)))
    return json.loads(meta_file(recording).read_text())["outcome"]


def nth_child(recording: Path, index: int) -> Path:
    """The recording of a command's ``index``-th child (``--mode both`` starts two)."""
    return recording if index == 0 else recording.with_name(f"{recording.name}--child{index}")


def recorded_request(recording: Path) -> dict:
    with tarfile.open(archive_file(recording), mode="r:xz") as archive:
        return json.loads(archive.extractfile("request.json").read())  # type: ignore[union-attr]


def stale_reason(recording: Path, words: list[str], places: Mapping[str, str]) -> str | None:
    """Why the recording cannot stand for ``words`` now (None: it can)."""
    if not meta_file(recording).exists():
        return f"no recording of `xlacli {' '.join(words)}`"
    meta = json.loads(meta_file(recording).read_text())
    if meta["words"] != words:
        return f"{recording.name} recorded `{' '.join(meta['words'])}`"
    now = source_hashes(set(meta["sources"]), placeholders(Path("/nonexistent"), places))
    changed = sorted(name for name, digest in meta["sources"].items() if now[name] != digest)
    if changed:
        return f"{', '.join(changed)} changed since {recording.name} was recorded"
    return None


def recording_name(words: list[str]) -> str:
    """A readable name, unique per command."""
    digest = hashlib.sha256("\0".join(words).encode()).hexdigest()[:8]
    slug = "-".join(Path(w.split("#")[0]).stem if ".py" in w else w.lstrip("-") for w in words)
    return re.sub(r"[^\w-]+", "_", f"{slug[:60].strip('-')}-{digest}")
