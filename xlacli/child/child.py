"""The child process: ``python xlacli/child/boot RUN/request.json`` (``capture/runner.py``).

It imports torch and torch_xla (with the debug environment the parent set),
runs the target (a model file's steps, or a script as ``__main__``) and
appends events to ``events.jsonl`` as it goes. Its exit code is the one the parent should exit with.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any, NoReturn

from xlacli.child.device import DeviceStartError
from xlacli.child.process_setup import (
    device_kind,
    import_torch_xla,
    interrupt_once,
    new_recorder,
    write_metrics_report,
)
from xlacli.child.stack_dumps import enable_stack_dumps
from xlacli.errors import EXIT_INTERRUPTED, EXIT_OK, XlacliError
from xlacli.run_folder.events import EventWriter
from xlacli.run_folder.lifeline import die_with_parent
from xlacli.run_folder.request import CaptureRequest, RunPaths


def main(argv: list[str]) -> int:
    request_path = Path(argv[1])
    die_with_parent()  # reliability: no orphan if xlacli itself is killed
    request = CaptureRequest.load(request_path)
    paths = RunPaths(request_path.parent)
    # A crash in native code (or --hang-timeout's SIGUSR1) prints the stacks into child.log.
    enable_stack_dumps()
    # SIGTERM (a timeout, a CI cancel) ends like Ctrl-C: stop, flush, report.
    signal.signal(signal.SIGINT, interrupt_once)
    signal.signal(signal.SIGTERM, interrupt_once)
    events = EventWriter(paths.events)
    device_failed = False  # reliability: the runtime aborts if touched again
    try:
        return _run(request, paths, events)
    except XlacliError as error:
        device_failed = isinstance(error, DeviceStartError)
        events.write(
            "error",
            kind=type(error).__name__,
            message=error.message,
            details=error.details,
            hint=error.hint,
            exit_code=error.exit_code,
        )
        return error.exit_code
    except KeyboardInterrupt:
        events.write("error", kind="interrupted", message="interrupted", exit_code=EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED
    finally:
        if not device_failed:
            write_metrics_report(paths)
        events.close()


def _run(request: CaptureRequest, paths: RunPaths, events: EventWriter) -> int:
    versions = import_torch_xla()
    # No device yet: a script creates its own, after choosing its mode (SPMD),
    # and a model file may call xr.use_spmd() at import.
    events.write("start", versions=versions, device=device_kind())
    recorder = new_recorder(request, paths, events)
    try:
        with recorder.observers.usage_errors():
            _run_target(request, paths, recorder)
    except BaseException:
        recorder.finish(running=True)
        raise
    recorder.finish(running=False)
    events.write("end")
    return EXIT_OK


def _run_target(request: CaptureRequest, paths: RunPaths, recorder: Any) -> None:
    """One strategy per kind of target, each writing the same step events."""
    if request.is_script:
        from xlacli.child.script_target import run_script

        run_script(request, recorder, paths)
    else:
        from xlacli.child.model_target import run_model_file

        run_model_file(request, recorder)


def _exit_despite_threads(code: int) -> None:
    """Exit now if threads the script started would keep the process alive
    (a script stopped at ``--steps`` never joins its own workers); everything
    xlacli writes is on disk by then."""
    import os
    import threading

    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def exit_without_teardown(code: int) -> NoReturn:
    """Exit as a normal exit does for the program (its ``atexit`` callbacks,
    torch_xla's among them; Python's and C's buffered output), without the
    interpreter's and the libraries' teardown: freeing every module, tensor and
    compiled executable of a process about to end took 1.8 s after a 24-layer
    decoder's run (issue 40), while the parent waited to read the run folder.
    Everything xlacli writes is on disk by then; a file the program left open
    (a log it never closed) is flushed, as the teardown would have."""
    import atexit
    import contextlib
    import ctypes
    import os

    atexit._run_exitfuncs()
    _flush_open_files()
    sys.stdout.flush()
    sys.stderr.flush()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).fflush(None)  # what C and C++ code printed, still buffered
    os._exit(code)


def _flush_open_files() -> None:
    """Flush every file object still open for writing (the teardown's garbage
    collection would have closed them): one pass over the heap. An ``isinstance``
    of io's abstract class for each of a training process's million objects took
    0.5 s; an exact type looked up in the set of every file class is a third of it."""
    import contextlib
    import gc

    file_types = _file_classes()
    for candidate in gc.get_objects():
        if type(candidate) in file_types:
            with contextlib.suppress(Exception):
                if not candidate.closed and candidate.writable():
                    candidate.flush()


def _file_classes() -> frozenset[type]:
    """Every class of file object defined now: the C base of io's classes and all
    its subclasses (io's own, and any of the program's or a library's)."""
    import io

    base = io.IOBase.__mro__[1]  # _io._IOBase, which every file object's class derives from
    found: set[type] = set()
    pending: list[type] = [base]
    while pending:
        subclass: type
        for subclass in pending.pop().__subclasses__():
            if subclass not in found:
                found.add(subclass)
                pending.append(subclass)
    return frozenset(found)


def run_as_child(argv: list[str]) -> None:
    """The child process's whole life: run, then exit with the run's code."""
    exit_code = main(argv)
    _exit_despite_threads(exit_code)
    exit_without_teardown(exit_code)


if __name__ == "__main__":
    run_as_child(sys.argv)
