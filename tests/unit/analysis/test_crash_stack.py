"""A child killed by a signal: the crashing frames faulthandler printed, innermost
first, never xlacli's (issue 38), on a dump written as faulthandler writes one."""

from __future__ import annotations

from xlacli.analysis.ranks.crash_stack import crash_details, crash_frames
from xlacli.parse.frames import CodeRoots

ROOTS = CodeRoots(library=("/lib/",), xlacli="/pkg/xlacli/")
DUMP = """\
step 0 loss 2.31
Fatal Python error: Segmentation fault

Thread 0x00007f5f4194e6c0 (most recent call first):
  File "/lib/threading.py", line 324 in wait

Current thread 0x00007f60735d3b80 (most recent call first):
  File "/lib/torch_xla/torch_xla.py", line 87 in sync
  File "/u/trainer.py", line 41 in train_step
  File "/u/train.py", line 60 in main
  File "/u/train.py", line 76 in <module>
  File "<frozen runpy>", line 88 in _run_code
  File "<frozen runpy>", line 291 in run_path
  File "/pkg/xlacli/child/script_target.py", line 97 in _run_main
  File "/pkg/xlacli/child/child.py", line 43 in main
  File "/pkg/xlacli/child/boot/__main__.py", line 25 in <module>
  File "<frozen runpy>", line 198 in _run_module_as_main

Extension modules: numpy._core._multiarray_umath, torch._C (total: 2)
"""


def test_the_crashing_threads_frames_innermost_first_without_xlaclis():
    frames = crash_frames(DUMP, ROOTS)
    assert [frame.location for frame in frames] == [
        "/lib/torch_xla/torch_xla.py:87",
        "/u/trainer.py:41",
        "/u/train.py:60",
        "/u/train.py:76",
    ]


def test_the_details_name_the_fault_and_the_frames():
    details = crash_details(DUMP, ROOTS)
    assert details is not None
    lines = details.splitlines()
    assert lines[:3] == [
        "Fatal Python error: Segmentation fault",
        "Python stack at the crash, innermost first:",
        "  sync (/lib/torch_xla/torch_xla.py:87)",
    ]
    assert "  train_step (/u/trainer.py:41)" in lines
    assert "xlacli" not in details and "runpy" not in details and "Extension" not in details


def test_a_deep_stack_keeps_its_innermost_frames():
    frames = "".join(f'  File "/u/deep.py", line {n} in f{n}\n' for n in range(30))
    dump = f"Fatal Python error: Aborted\n\nCurrent thread 0x1 (most recent call first):\n{frames}"
    details = crash_details(dump, ROOTS, shown=5)
    assert details is not None
    assert "f0 (/u/deep.py:0)" in details and "f5 " not in details
    assert details.endswith("... 25 outer frames (all in the run's child.log)")


def test_a_log_without_a_dump_has_no_details():
    assert crash_details("Killed\n", ROOTS) is None
